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

package operations

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// models builds the model clients of a session: the session's default, and
// a call's options.model merged with it.
type models struct {
	// def is the session's model with its secrets; a zero ModelName means
	// the session has none.
	def rpc.ModelConfig
	// defProvider is def's provider, "" when def does not parse.
	defProvider string
	// client is the default model's client, nil when there is none or it
	// cannot be built (err says why).
	client llm.Client
	err    error
	// http is every model client's HTTP client: its connections pass the
	// egress policy.
	http *http.Client
	// gateway is the API's model gateway, nil when the runner has none
	// (no --services-url): a model with no credentials or endpoint of its
	// own, or named auto, is called through it.
	gateway *gateway.Endpoint
}

// newModels builds the session's default client, whose connections (and
// those of every call's model) go through dialer; nil is the default
// policy. A default that cannot be built is not fatal: calls that need no
// model still work, and calls that bring their own model too; the others
// are told why.
func newModels(def rpc.ModelConfig, dialer *egress.Dialer, gw *gateway.Endpoint, log *slog.Logger) *models {
	if dialer == nil {
		dialer = &egress.Dialer{}
	}
	m := &models{def: def, http: &http.Client{Transport: dialer.Transport()}, gateway: gw}
	if def.ModelName == "" {
		return m
	}
	// A session's model auth and providerOptions are not used: its
	// UnsupportedSetting report says so (v1alpha1.UnsupportedSettings).
	m.defProvider, _, _ = llm.ParseModel(def.ModelName, def.Provider)
	m.client, m.err = m.newClient(def)
	if m.err != nil {
		// llm's errors are redacted; ParseModel's quote the name only.
		log.Warn("the session's model cannot be used", "model", def, "err", m.err)
		m.client = nil
	}
	return m
}

// forCall returns the client of a call's options.model, or nil when the
// call gives none (the engine then uses the session's).
func (m *models) forCall(call *rpc.ModelConfig) (llm.Client, error) {
	return m.forField("options.model", call)
}

// forField returns the client of the model a request gives in field, or nil
// when it gives none; an unusable model is a BAD_REQUEST naming field.
func (m *models) forField(field string, call *rpc.ModelConfig) (llm.Client, error) {
	if call == nil || isZeroModel(*call) {
		return nil, nil
	}
	c, err := m.newClient(m.merge(*call))
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeBadRequest, "%s: %s", field, err.Error())
	}
	return c, nil
}

// viaGateway reports whether c is called through the gateway: it is named
// auto, or brings no credentials and no endpoint of its own, so that
// only the operator's key can reach its provider.
func (m *models) viaGateway(c rpc.ModelConfig) bool {
	if m.gateway == nil {
		return false
	}
	return c.ModelName == gateway.ModelAuto ||
		c.APIKey == "" && len(c.Headers) == 0 && c.BaseURL == "" && c.Auth == nil
}

// newClient is the client of c: through the gateway when viaGateway, else
// straight to its provider.
func (m *models) newClient(c rpc.ModelConfig) (llm.Client, error) {
	if c.ModelName == gateway.ModelAuto && m.gateway == nil {
		return nil, errors.New("the model auto is the model gateway's default model, and this runner has no gateway (the manager's runner.servicesURL is not set); name a model, <provider>/<model>, with its API key")
	}
	if !m.viaGateway(c) {
		return llm.New(m.llmConfig(c))
	}
	if c.ModelName == gateway.ModelAuto {
		return m.gateway.Client(gateway.ModelAuto), nil
	}
	prov, id, err := llm.ParseModel(c.ModelName, c.Provider)
	if err != nil {
		return nil, err
	}
	return m.gateway.Client(prov + "/" + id), nil
}

// errCUAGateway refuses the cua mode for a model the gateway serves.
func errCUAGateway(field string) error {
	return rpc.Errorf(rpc.CodeBadRequest, "%s: mode cua runs the provider's computer-use loop, which the model gateway does not carry (it forwards one model call at a time); give the model's own API key, or use the dom or hybrid mode", field)
}

func isZeroModel(c rpc.ModelConfig) bool {
	return c.ModelName == "" && c.Provider == "" && c.APIKey == "" && c.BaseURL == "" &&
		len(c.Headers) == 0 && c.Auth == nil && len(c.ProviderOptions) == 0
}

// merge fills the fields a call's model leaves empty from the session's.
// The session's credentials (API key, headers) go only where the session
// sends them: to the same provider at the same endpoint. A call that names
// another provider, or another baseURL, brings its own key; otherwise any
// caller could have the session's key sent to a server of its choosing.
func (m *models) merge(call rpc.ModelConfig) rpc.ModelConfig {
	out := call
	if out.ModelName == "" {
		out.ModelName = m.def.ModelName
		if out.Provider == "" {
			out.Provider = m.def.Provider
		}
	}
	provider, _, err := llm.ParseModel(out.ModelName, out.Provider)
	sameProvider := err == nil && provider != "" && provider == m.defProvider
	if !sameProvider {
		return out
	}
	if out.BaseURL == "" {
		out.BaseURL = m.def.BaseURL
	}
	if out.BaseURL != m.def.BaseURL {
		return out
	}
	if out.APIKey == "" {
		out.APIKey = m.def.APIKey
	}
	if len(m.def.Headers) > 0 {
		headers := maps.Clone(m.def.Headers)
		// The call's headers win: it asked for them.
		maps.Copy(headers, call.Headers)
		out.Headers = headers
	}
	return out
}

// llmConfig is the llm.Config of a model. Auth and ProviderOptions have no
// counterpart there and are left out.
func (m *models) llmConfig(c rpc.ModelConfig) llm.Config {
	return llm.Config{
		Model:      c.ModelName,
		Provider:   c.Provider,
		APIKey:     c.APIKey,
		BaseURL:    c.BaseURL,
		Headers:    c.Headers,
		HTTPClient: m.http,
	}
}

// SessionModel returns the client of the session's own model, with its
// credentials (or through the model gateway, as for act), for the work
// the runner does on the session's behalf (solving captchas); an error
// says why there is none.
func (a *Automation) SessionModel() (llm.Client, error) {
	switch {
	case a.models.err != nil:
		return nil, fmt.Errorf("the session's model cannot be used: %w", a.models.err)
	case a.models.client == nil:
		return nil, errors.New("the session has no model (spec.model)")
	}
	return a.models.client, nil
}

// noModelError is what a call that needs a model and has none is told;
// field is where the call could have given one.
func (m *models) noModelError(op, field string) *rpc.Error {
	if m.err != nil {
		return rpc.Errorf(rpc.CodeBadRequest, "%s needs a model, and the session's model cannot be used (%s); give %s", op, m.err.Error(), field)
	}
	return rpc.Errorf(rpc.CodeBadRequest, "%s needs a model: the session has none and the call gave no %s", op, field)
}
