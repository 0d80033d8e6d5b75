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

package v1

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// agentSchema is the agentExecute body's schema, from the OpenAPI document.
var agentSchema = requestSchema("AgentExecuteRequest")

// Keys of an agent task's request Secret, next to SecretKeyModelAPIKey (the
// agent model's API key).
const (
	// SecretKeyModelCredentials holds agentConfig.model.auth.credentials as
	// JSON.
	SecretKeyModelCredentials = "model-credentials"
	// SecretKeyExecutionModelAPIKey holds agentConfig.executionModel.apiKey.
	SecretKeyExecutionModelAPIKey = "execution-model-api-key"
	// SecretKeyExecutionModelCredentials holds
	// agentConfig.executionModel.auth.credentials as JSON.
	SecretKeyExecutionModelCredentials = "execution-model-credentials"
)

// Suffixes of the Secrets of an agent task, after the task's name. The
// headers and the variables each need a Secret of their own: the task
// references them as whole Secrets whose every key is a header or a
// variable name.
const (
	requestSecretSuffix               = "-request-secrets"
	variablesSecretSuffix             = "-variables"
	modelHeadersSecretSuffix          = "-model-headers"
	executionModelHeadersSecretSuffix = "-execution-model-headers"
)

// agentSecretSuffixes are the suffixes in the order ToAgentTask returns the
// Secrets, each with the body path its values come from.
var agentSecretSuffixes = []struct{ suffix, path string }{
	{requestSecretSuffix, "agentConfig"},
	{variablesSecretSuffix, "executeOptions.variables"},
	{modelHeadersSecretSuffix, "agentConfig.model.headers"},
	{executionModelHeadersSecretSuffix, "agentConfig.executionModel.headers"},
}

// AgentBody is a decoded agentExecute body.
type AgentBody struct {
	// AgentConfig selects the agent's models, prompt and mode.
	AgentConfig AgentConfig
	// ExecuteOptions say what the agent is to do.
	ExecuteOptions AgentExecuteOptions
	// FrameID is the frame the agent works in; "" is the main frame.
	FrameID string
	// StreamResponse is the body's streamResponse; nil when absent.
	StreamResponse *bool
	// ShouldCache asks for a cache entry of the run.
	ShouldCache *bool
}

// AgentConfig is agentConfig of the body.
type AgentConfig struct {
	// Provider overrides the provider of the model's name (legacy).
	Provider string
	// Model is the agent's model; nil takes the session's. It holds
	// secrets (APIKey, Headers, Auth.Credentials).
	Model *rpc.ModelConfig
	// SystemPrompt is extra system instructions.
	SystemPrompt string
	// Mode is the effective mode: `mode` when given, else cua when the
	// deprecated `cua` is true, else "" (the AgentTask's default, dom).
	Mode v1alpha1.AgentMode
	// ExecutionModel runs the agent's tool calls; nil takes Model.
	ExecutionModel *rpc.ModelConfig
}

// AgentExecuteOptions is executeOptions of the body.
type AgentExecuteOptions struct {
	// Instruction is the task. Never empty.
	Instruction string
	// MaxSteps bounds the steps, 1 to 1000.
	MaxSteps *int32
	// HighlightCursor shows the agent's cursor.
	HighlightCursor *bool
	// UseSearch lets the agent search the web.
	UseSearch *bool
	// ToolTimeout bounds each tool call, in milliseconds.
	ToolTimeout *int32
	// Variables are values the agent may type by name; numbers and
	// booleans have become their text, descriptions are dropped (the
	// AgentTask has no place for them). Secret: often passwords.
	Variables map[string]string
	// VariableDescriptions are the descriptions of the variables given as
	// {value, description}, by name. Not secret.
	VariableDescriptions map[string]string
}

// DecodeAgentExecute decodes and validates an agentExecute body; see
// DecodeAct for the rules. The bounds are the AgentTask CRD's, and an
// object model must name its model (the CRD's ModelSpec requires a name),
// so that a task whose body decoded is never refused on create. Variable
// and header names are Secret keys, since they go into Secrets; and the
// values of each Secret must fit in one (corev1.MaxSecretSize).
func DecodeAgentExecute(body []byte) (*AgentBody, *ValidationError) {
	_, issues, verr := checkBody(body, agentSchema)
	if verr != nil {
		return nil, verr
	}
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	var w agentWire
	if verr := decodeChecked(body, &w); verr != nil {
		return nil, verr
	}
	b := w.body()
	if issues := b.secretSizeIssues(); len(issues) > 0 {
		return nil, &ValidationError{Issues: issues}
	}
	return b, nil
}

// The wire form of the body; see actWire.
type (
	agentWire struct {
		AgentConfig    agentConfigWire    `json:"agentConfig"`
		ExecuteOptions executeOptionsWire `json:"executeOptions"`
		FrameID        *string            `json:"frameId"`
		StreamResponse *bool              `json:"streamResponse"`
		ShouldCache    *bool              `json:"shouldCache"`
	}
	agentConfigWire struct {
		Provider       string     `json:"provider"`
		Model          *modelWire `json:"model"`
		SystemPrompt   string     `json:"systemPrompt"`
		CUA            *bool      `json:"cua"`
		Mode           string     `json:"mode"`
		ExecutionModel *modelWire `json:"executionModel"`
	}
	executeOptionsWire struct {
		Instruction     string        `json:"instruction"`
		MaxSteps        *float64      `json:"maxSteps"`
		HighlightCursor *bool         `json:"highlightCursor"`
		UseSearch       *bool         `json:"useSearch"`
		ToolTimeout     *float64      `json:"toolTimeout"`
		Variables       variablesWire `json:"variables"`
	}
)

// body converts the wire form; the schema has bounded the numbers.
func (w *agentWire) body() *AgentBody {
	c, o := w.AgentConfig, w.ExecuteOptions
	b := &AgentBody{
		AgentConfig: AgentConfig{
			Provider:       c.Provider,
			Model:          c.Model.config(),
			SystemPrompt:   c.SystemPrompt,
			Mode:           v1alpha1.AgentMode(c.Mode),
			ExecutionModel: c.ExecutionModel.config(),
		},
		ExecuteOptions: AgentExecuteOptions{
			Instruction:     o.Instruction,
			MaxSteps:        int32Ptr(o.MaxSteps),
			HighlightCursor: o.HighlightCursor,
			UseSearch:       o.UseSearch,
			ToolTimeout:     int32Ptr(o.ToolTimeout),
		},
		FrameID:        deref(w.FrameID),
		StreamResponse: w.StreamResponse,
		ShouldCache:    w.ShouldCache,
	}
	// mode wins over the deprecated cua, as in the reference.
	if b.AgentConfig.Mode == "" && c.CUA != nil && *c.CUA {
		b.AgentConfig.Mode = v1alpha1.AgentModeCUA
	}
	if len(o.Variables) > 0 {
		b.ExecuteOptions.Variables = make(map[string]string, len(o.Variables))
		for k, v := range o.Variables {
			b.ExecuteOptions.Variables[k] = v.Value
			if v.Description != "" {
				if b.ExecuteOptions.VariableDescriptions == nil {
					b.ExecuteOptions.VariableDescriptions = map[string]string{}
				}
				b.ExecuteOptions.VariableDescriptions[k] = v.Description
			}
		}
	}
	return b
}

// secretSizeIssues reports each Secret of the task whose values would not
// fit in a Secret; the body limit keeps them well under by default, but it
// is configurable.
func (b *AgentBody) secretSizeIssues() []Issue {
	// Sizes do not depend on the names: any valid one will do.
	const probe = "probe"
	_, data, err := b.taskSpec(probe, probe)
	if err != nil {
		return []Issue{{Path: "", Message: err.Error()}}
	}
	var issues []Issue
	for _, s := range agentSecretSuffixes {
		size := 0
		for k, v := range data[probe+s.suffix] {
			size += len(k) + len(v)
		}
		if size > corev1.MaxSecretSize {
			issues = append(issues, Issue{Path: s.path, Message: fmt.Sprintf(
				"too large: its secret values come to %d bytes, more than the %d a Secret holds", size, corev1.MaxSecretSize)})
		}
	}
	return issues
}

// ToAgentTask maps a decoded body onto the AgentTask `name` in `namespace`
// that runs the agent in the BrowserSession `session`. The task is labelled
// with its session (v1alpha1.LabelSession).
//
// No secret value is in the AgentTask. The models' API keys and
// credentials go into the request Secret, RequestSecretName(name), keys
// SecretKeyModelAPIKey, SecretKeyModelCredentials,
// SecretKeyExecutionModelAPIKey and SecretKeyExecutionModelCredentials. A
// model's headers (its providerOptions' headers merged under them) go into
// a Secret of their own, `<name>-model-headers` or
// `<name>-execution-model-headers`, referenced by headersSecretRef: the
// wire cannot say which headers carry credentials, so none is inline. The
// variables go into `<name>-variables`, referenced by variablesSecretRef:
// agent variables are typically user names and passwords. Each of these
// references names a whole Secret whose every key is a header or a
// variable, which is why they cannot share one.
//
// The Secrets, only those with values, come in a fixed order; they are
// immutable and labelled like the session's request Secret, and have no
// owner reference: that needs the task's UID. Create the Secrets first (so
// the task never waits for them), then the task, then make the task each
// Secret's owner; delete them if the task's create fails.
//
// The body must come from DecodeAgentExecute: ToAgentTask trusts its
// bounds.
func (b *AgentBody) ToAgentTask(name, namespace, session string) (*v1alpha1.AgentTask, []*corev1.Secret, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, nil, fmt.Errorf("agent task name %q: %s", name, errs[0])
	}
	// The Secrets' names must be valid too.
	if errs := validation.IsDNS1123Subdomain(name + executionModelHeadersSecretSuffix); len(errs) > 0 {
		return nil, nil, fmt.Errorf("agent task name %q leaves no room for its Secrets' names: %s", name, errs[0])
	}
	// Session names are DNS labels, hence label values too.
	if errs := validation.IsDNS1123Label(session); len(errs) > 0 {
		return nil, nil, fmt.Errorf("session name %q: %s", session, errs[0])
	}
	spec, data, err := b.taskSpec(name, session)
	if err != nil {
		return nil, nil, err
	}
	task := &v1alpha1.AgentTask{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "AgentTask"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			Labels:    map[string]string{v1alpha1.LabelSession: session},
		},
		Spec: spec,
	}
	var secrets []*corev1.Secret
	for _, s := range agentSecretSuffixes {
		secretName := name + s.suffix
		if len(data[secretName]) == 0 {
			continue
		}
		immutable := true
		secrets = append(secrets, &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      secretName,
				Namespace: namespace,
				// The task references it: it opts in for that task only.
				Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy, v1alpha1.LabelSession: session, v1alpha1.LabelSessionSecret: name},
			},
			Type: corev1.SecretTypeOpaque,
			// The task's spec is immutable, and so are its secrets.
			Immutable: &immutable,
			Data:      data[secretName],
		})
	}
	return task, secrets, nil
}

// taskSpec maps the body onto the spec of the task `name`; the secret
// values go into data, by Secret name and key. The request Secret's name is
// RequestSecretName(name), as for sessions.
func (b *AgentBody) taskSpec(name, session string) (v1alpha1.AgentTaskSpec, map[string]map[string][]byte, error) {
	data := map[string]map[string][]byte{}
	put := func(secret, key, value string) {
		if data[secret] == nil {
			data[secret] = map[string][]byte{}
		}
		data[secret][key] = []byte(value)
	}
	c, o := b.AgentConfig, b.ExecuteOptions
	spec := v1alpha1.AgentTaskSpec{
		SessionRef: v1alpha1.SessionReference{Name: session},
		AgentConfig: v1alpha1.AgentConfig{
			Provider:     c.Provider,
			SystemPrompt: c.SystemPrompt,
			Mode:         c.Mode,
		},
		ExecuteOptions: v1alpha1.ExecuteOptions{
			Instruction:     o.Instruction,
			MaxSteps:        maxSteps(o.MaxSteps),
			HighlightCursor: o.HighlightCursor,
			UseSearch:       o.UseSearch,
			ToolTimeoutMs:   o.ToolTimeout,
		},
		FrameID:     b.FrameID,
		ShouldCache: b.ShouldCache,
	}
	var err error
	spec.AgentConfig.Model, err = agentModel(c.Model, modelSecrets{
		request: RequestSecretName(name), apiKey: SecretKeyModelAPIKey,
		credentials: SecretKeyModelCredentials, headers: name + modelHeadersSecretSuffix,
	}, put)
	if err != nil {
		return spec, nil, fmt.Errorf("agentConfig.model: %w", err)
	}
	spec.AgentConfig.ExecutionModel, err = agentModel(c.ExecutionModel, modelSecrets{
		request: RequestSecretName(name), apiKey: SecretKeyExecutionModelAPIKey,
		credentials: SecretKeyExecutionModelCredentials, headers: name + executionModelHeadersSecretSuffix,
	}, put)
	if err != nil {
		return spec, nil, fmt.Errorf("agentConfig.executionModel: %w", err)
	}
	if len(o.Variables) > 0 {
		secret := name + variablesSecretSuffix
		for k, v := range o.Variables {
			put(secret, k, v)
		}
		spec.ExecuteOptions.VariablesSecretRef = &v1alpha1.SecretReference{Name: secret}
	}
	spec.ExecuteOptions.VariableDescriptions = maps.Clone(o.VariableDescriptions)
	return spec, data, nil
}

// modelSecrets say where one model's secret values go.
type modelSecrets struct {
	// request is the request Secret; apiKey and credentials are its keys.
	request, apiKey, credentials string
	// headers is the model's headers Secret.
	headers string
}

// agentModel maps an agent's model config onto a ModelSpec, its secret
// values going through put to where to says. nil stays nil.
func agentModel(m *rpc.ModelConfig, to modelSecrets, put func(secret, key, value string)) (*v1alpha1.ModelSpec, error) {
	if m == nil {
		return nil, nil
	}
	spec := &v1alpha1.ModelSpec{Name: m.ModelName, Provider: m.Provider, BaseURL: m.BaseURL}
	if m.APIKey != "" {
		put(to.request, to.apiKey, m.APIKey)
		spec.APIKeySecretRef = &v1alpha1.SecretKeyReference{Name: to.request, Key: to.apiKey}
	}
	headers := map[string]string{}
	// The schema allows one providerOptions entry, as the CRD holds one.
	for variant, po := range m.ProviderOptions {
		spec.ProviderOptions = &v1alpha1.ProviderOptions{
			Variant: variant, Project: po.Project, Location: po.Location, BaseURL: po.BaseURL,
		}
		maps.Copy(headers, po.Headers)
	}
	// The model's own headers win over its variant's.
	maps.Copy(headers, m.Headers)
	if len(headers) > 0 {
		for k, v := range headers {
			put(to.headers, k, v)
		}
		spec.HeadersSecretRef = &v1alpha1.SecretReference{Name: to.headers}
	}
	if a := m.Auth; a != nil {
		spec.Auth = &v1alpha1.ModelAuth{Type: a.Type, Scopes: a.Scopes, ProjectID: a.ProjectID, UniverseDomain: a.UniverseDomain}
		if len(a.Credentials) > 0 {
			creds, err := json.Marshal(a.Credentials)
			if err != nil {
				return nil, fmt.Errorf("encoding auth.credentials: %w", err)
			}
			put(to.request, to.credentials, string(creds))
			spec.Auth.CredentialsSecretRef = &v1alpha1.SecretKeyReference{Name: to.request, Key: to.credentials}
		}
	}
	return spec, nil
}

// maxSteps is the CRD's maxSteps: 0, left out, when absent.
func maxSteps(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
