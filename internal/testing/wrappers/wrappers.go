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

// Package wrappers builds browserfleet objects for tests:
// MakeBrowserSession(name, ns).Model("openai/gpt-4.1-mini").Obj().
package wrappers

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// DefaultModel is the model every wrapped session starts with.
const DefaultModel = "openai/gpt-4.1-mini"

// BrowserSessionWrapper builds a BrowserSession.
type BrowserSessionWrapper struct{ v1alpha1.BrowserSession }

// MakeBrowserSession starts a BrowserSession with DefaultModel.
func MakeBrowserSession(name, ns string) *BrowserSessionWrapper {
	return &BrowserSessionWrapper{v1alpha1.BrowserSession{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1alpha1.BrowserSessionSpec{Model: v1alpha1.ModelSpec{Name: DefaultModel}},
	}}
}

// Obj returns the built object.
func (w *BrowserSessionWrapper) Obj() *v1alpha1.BrowserSession { return &w.BrowserSession }

// Model sets the model's name.
func (w *BrowserSessionWrapper) Model(name string) *BrowserSessionWrapper {
	w.Spec.Model.Name = name
	return w
}

// ModelAPIKey references the Secret key of the model's API key.
func (w *BrowserSessionWrapper) ModelAPIKey(secret, key string) *BrowserSessionWrapper {
	w.Spec.Model.APIKeySecretRef = &v1alpha1.SecretKeyReference{Name: secret, Key: key}
	return w
}

// ModelHeadersSecret references the Secret of the model's secret headers.
func (w *BrowserSessionWrapper) ModelHeadersSecret(secret string) *BrowserSessionWrapper {
	w.Spec.Model.HeadersSecretRef = &v1alpha1.SecretReference{Name: secret}
	return w
}

// Local makes the browser local with the given launch options.
func (w *BrowserSessionWrapper) Local(opts *v1alpha1.LaunchOptions) *BrowserSessionWrapper {
	w.Spec.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, LaunchOptions: opts}
	return w
}

// Attach makes the browser a local one attached to the DevTools URL in
// key urlKey of Secret secret, with the headers (a JSON object) in its key
// headersKey when not empty.
func (w *BrowserSessionWrapper) Attach(secret, urlKey, headersKey string) *BrowserSessionWrapper {
	w.Spec.Browser = &v1alpha1.BrowserConfig{
		Type:            v1alpha1.BrowserTypeLocal,
		CDPURLSecretRef: &v1alpha1.SecretKeyReference{Name: secret, Key: urlKey},
	}
	if headersKey != "" {
		w.Spec.Browser.LaunchOptions = &v1alpha1.LaunchOptions{CDPHeadersSecretRef: &v1alpha1.SecretKeyReference{Name: secret, Key: headersKey}}
	}
	return w
}

// UserMetadata sets cloudSessionCreateParams.userMetadata.
func (w *BrowserSessionWrapper) UserMetadata(m map[string]apiextensionsv1.JSON) *BrowserSessionWrapper {
	if w.Spec.CloudSessionCreateParams == nil {
		w.Spec.CloudSessionCreateParams = &v1alpha1.CloudSessionCreateParams{}
	}
	w.Spec.CloudSessionCreateParams.UserMetadata = m
	return w
}

// Browser sets the browser config.
func (w *BrowserSessionWrapper) Browser(b *v1alpha1.BrowserConfig) *BrowserSessionWrapper {
	w.Spec.Browser = b
	return w
}

// Cloud sets the cloud session create params.
func (w *BrowserSessionWrapper) Cloud(p *v1alpha1.CloudSessionCreateParams) *BrowserSessionWrapper {
	w.Spec.CloudSessionCreateParams = p
	return w
}

// Timeout sets the session's timeout in seconds.
func (w *BrowserSessionWrapper) Timeout(seconds int32) *BrowserSessionWrapper {
	if w.Spec.CloudSessionCreateParams == nil {
		w.Spec.CloudSessionCreateParams = &v1alpha1.CloudSessionCreateParams{}
	}
	w.Spec.CloudSessionCreateParams.TimeoutSeconds = seconds
	return w
}

// TTLAfterEnded sets how long the ended session is kept.
func (w *BrowserSessionWrapper) TTLAfterEnded(seconds int32) *BrowserSessionWrapper {
	w.Spec.TTLSecondsAfterEnded = ptr.To(seconds)
	return w
}

// Ended sets spec.ended.
func (w *BrowserSessionWrapper) Ended() *BrowserSessionWrapper {
	w.Spec.Ended = true
	return w
}

// AgentTaskWrapper builds an AgentTask.
type AgentTaskWrapper struct{ v1alpha1.AgentTask }

// MakeAgentTask starts an AgentTask for a session with an instruction.
func MakeAgentTask(name, ns, session string) *AgentTaskWrapper {
	return &AgentTaskWrapper{v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.AgentTaskSpec{
			SessionRef:     v1alpha1.SessionReference{Name: session},
			ExecuteOptions: v1alpha1.ExecuteOptions{Instruction: "find the cheapest flight"},
		},
	}}
}

// Obj returns the built object.
func (w *AgentTaskWrapper) Obj() *v1alpha1.AgentTask { return &w.AgentTask }

// Mode sets the agent's mode.
func (w *AgentTaskWrapper) Mode(m v1alpha1.AgentMode) *AgentTaskWrapper {
	w.Spec.AgentConfig.Mode = m
	return w
}

// ModelAPIKey references the Secret key of the agent model's API key.
func (w *AgentTaskWrapper) ModelAPIKey(secret, key string) *AgentTaskWrapper {
	if w.Spec.AgentConfig.Model == nil {
		w.Spec.AgentConfig.Model = &v1alpha1.ModelSpec{Name: DefaultModel}
	}
	w.Spec.AgentConfig.Model.APIKeySecretRef = &v1alpha1.SecretKeyReference{Name: secret, Key: key}
	return w
}

// VariablesSecret references the Secret of the task's secret variables.
func (w *AgentTaskWrapper) VariablesSecret(secret string) *AgentTaskWrapper {
	w.Spec.ExecuteOptions.VariablesSecretRef = &v1alpha1.SecretReference{Name: secret}
	return w
}

// MaxSteps bounds the agent's steps.
func (w *AgentTaskWrapper) MaxSteps(n int32) *AgentTaskWrapper {
	w.Spec.ExecuteOptions.MaxSteps = n
	return w
}

// BrowserPoolWrapper builds a BrowserPool.
type BrowserPoolWrapper struct{ v1alpha1.BrowserPool }

// MakeBrowserPool starts a BrowserPool of replicas runners whose template
// is the default launch (what a session with no browser settings has).
func MakeBrowserPool(name, ns string, replicas int32) *BrowserPoolWrapper {
	return &BrowserPoolWrapper{v1alpha1.BrowserPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1alpha1.BrowserPoolSpec{Replicas: ptr.To(replicas)},
	}}
}

// Obj returns the built object.
func (w *BrowserPoolWrapper) Obj() *v1alpha1.BrowserPool { return &w.BrowserPool }

// Browser sets the template's browser.
func (w *BrowserPoolWrapper) Browser(b *v1alpha1.BrowserConfig) *BrowserPoolWrapper {
	if w.Spec.Template == nil {
		w.Spec.Template = &v1alpha1.BrowserPoolTemplate{}
	}
	w.Spec.Template.Browser = b
	return w
}

// Cloud sets the template's cloudSessionCreateParams.
func (w *BrowserPoolWrapper) Cloud(p *v1alpha1.CloudSessionCreateParams) *BrowserPoolWrapper {
	if w.Spec.Template == nil {
		w.Spec.Template = &v1alpha1.BrowserPoolTemplate{}
	}
	w.Spec.Template.CloudSessionCreateParams = p
	return w
}
