/*
Copyright 2026 The browserfleet Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import "regexp"

// SecretKeyReference points at one key of a Secret in the object's namespace.
// Secret values never appear in a browserfleet resource; they are always
// referenced like this.
type SecretKeyReference struct {
	// name is the name of the Secret, in the same namespace. The Secret
	// must opt in: labelled browserfleet.io/session-secret with "true" or
	// the name of the session or task that references it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// key is the key within the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// ProxyServerUserInfoPattern matches a proxy server address that carries
// user info (`http://user:password@proxy:3128`): an '@' before the first
// '/', '?' or '#' after the scheme. Such an address is refused, because the
// credentials would be stored in the resource: username and
// passwordSecretRef carry them. The CEL rules of LaunchProxy and Proxy
// spell this pattern out (markers cannot name a constant); the /v1 API
// checks it with ProxyServerHasUserInfo.
const ProxyServerUserInfoPattern = `^([A-Za-z][A-Za-z0-9+.-]*://)?[^/?#]*@`

var proxyServerUserInfo = regexp.MustCompile(ProxyServerUserInfoPattern)

// ProxyServerHasUserInfo reports whether a proxy server address carries
// user info.
func ProxyServerHasUserInfo(server string) bool { return proxyServerUserInfo.MatchString(server) }

// SecretReference points at a whole Secret in the object's namespace.
type SecretReference struct {
	// name is the name of the Secret, in the same namespace. The Secret
	// must opt in: labelled browserfleet.io/session-secret with "true" or
	// the name of the session or task that references it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`
}

// ModelSpec selects a model and says how to reach its provider. It is the
// model config of the /v1 API with every secret replaced by a reference.
type ModelSpec struct {
	// name is the provider-prefixed model identifier, `<provider>/<model>`,
	// for example `openai/gpt-4.1-mini` or `anthropic/claude-sonnet-4-5`; or
	// `auto`, the model gateway's default model (docs/gateway.md).
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(auto|[A-Za-z0-9._-]+/[^\s]+)$`
	Name string `json:"name,omitempty"`

	// provider overrides the provider taken from the prefix of name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Provider string `json:"provider,omitempty"`

	// apiKeySecretRef is the Secret key that holds the model provider's API key.
	// +optional
	APIKeySecretRef *SecretKeyReference `json:"apiKeySecretRef,omitempty"`

	// baseURL overrides the provider's endpoint, for example an
	// OpenAI-compatible server such as vLLM, Ollama or LiteLLM.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	BaseURL string `json:"baseURL,omitempty"`

	// headers are extra HTTP headers sent to the model provider. They are not
	// secret; put secret headers in headersSecretRef.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Headers map[string]string `json:"headers,omitempty"`

	// headersSecretRef names a Secret whose every key is a header name and
	// whose value is that header's value, for headers that carry credentials.
	// +optional
	HeadersSecretRef *SecretReference `json:"headersSecretRef,omitempty"`

	// auth is service-account style authentication, for providers that take
	// it instead of an API key (Google Vertex AI).
	// +optional
	Auth *ModelAuth `json:"auth,omitempty"`

	// providerOptions are settings of one provider variant (for example
	// Vertex AI's project and location).
	// +optional
	ProviderOptions *ProviderOptions `json:"providerOptions,omitempty"`
}

// ModelAuth is service-account authentication for a model provider.
type ModelAuth struct {
	// type is the credential type, for example `service_account`.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Type string `json:"type,omitempty"`

	// credentialsSecretRef is the Secret key that holds the service-account
	// credentials as JSON.
	// +optional
	CredentialsSecretRef *SecretKeyReference `json:"credentialsSecretRef,omitempty"`

	// scopes are the OAuth scopes requested, space-separated.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Scopes string `json:"scopes,omitempty"`

	// projectId is the cloud project of the credentials.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ProjectID string `json:"projectId,omitempty"`

	// universeDomain is the cloud universe of the credentials.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	UniverseDomain string `json:"universeDomain,omitempty"`
}

// ProviderOptions are the settings of one provider variant.
type ProviderOptions struct {
	// variant is the provider variant these options are for, for example
	// `vertex`.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Variant string `json:"variant,omitempty"`

	// project is the cloud project of the variant.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Project string `json:"project,omitempty"`

	// location is the cloud location of the variant, for example `us-central1`.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Location string `json:"location,omitempty"`

	// baseURL overrides the variant's endpoint.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	BaseURL string `json:"baseURL,omitempty"`

	// headers are extra HTTP headers for the variant. They are not secret.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Headers map[string]string `json:"headers,omitempty"`
}

// Usage counts the model tokens and inference time spent. A count of zero
// is left out.
type Usage struct {
	// inputTokens is the number of prompt tokens.
	// +optional
	// +kubebuilder:validation:Minimum=1
	InputTokens int64 `json:"inputTokens,omitempty"`

	// outputTokens is the number of completion tokens.
	// +optional
	// +kubebuilder:validation:Minimum=1
	OutputTokens int64 `json:"outputTokens,omitempty"`

	// reasoningTokens is the number of reasoning tokens.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ReasoningTokens int64 `json:"reasoningTokens,omitempty"`

	// cachedInputTokens is the number of prompt tokens served from the
	// provider's prompt cache.
	// +optional
	// +kubebuilder:validation:Minimum=1
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`

	// inferenceTimeMs is the time spent waiting for the model, in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	InferenceTimeMs int64 `json:"inferenceTimeMs,omitempty"`
}

// CacheSpec is the server-side cache setting of a session or a task
// (docs/cache.md).
type CacheSpec struct {
	// enabled turns the cache on or off. Omitted, the project's default
	// applies where the API resolves it (calls through /v1), and off where
	// the manager does (a task created with kubectl).
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// threshold is how many times an identical call must have been seen
	// before its cached result is served: 1 serves the second call.
	// Omitted, the project's default.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Threshold int32 `json:"threshold,omitempty"`
}
