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

package gateway

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/browserfleet/browserfleet/engine/llm"
)

// MaxProjects bounds the project label: past it, projects count as
// "other". Projects are namespaces the operator made; the bound guards the
// metrics against a cluster with very many.
const MaxProjects = 1000

// Metrics are the gateway's metrics. A nil *Metrics records nothing.
type Metrics struct {
	tokens   *prometheus.CounterVec
	requests *prometheus.CounterVec

	mu       sync.Mutex
	projects map[string]bool
}

// NewMetrics makes the gateway's metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "browserfleet_gateway_tokens_total",
			Help: "Tokens spent through the model gateway, by project (namespace), model (one the operator allows, or <provider>/other) and kind (input, output).",
		}, []string{"project", "model", "kind"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "browserfleet_gateway_requests_total",
			Help: "Calls to the model gateway, by project, model and outcome (success or the gateway's error code, BUDGET_EXCEEDED among them).",
		}, []string{"project", "model", "outcome"}),
		projects: map[string]bool{},
	}
	if err := reg.Register(m.tokens); err != nil {
		return nil, fmt.Errorf("gateway metrics: %w", err)
	}
	if err := reg.Register(m.requests); err != nil {
		reg.Unregister(m.tokens)
		return nil, fmt.Errorf("gateway metrics: %w", err)
	}
	return m, nil
}

var outcomes = map[string]bool{
	OutcomeSuccess: true, CodeBadRequest: true, CodeModelNotAllowed: true, CodeBudgetExceeded: true,
	CodeModelError: true, CodeTimeout: true, CodePayloadTooLarge: true, CodeUnauthorized: true,
}

func (m *Metrics) project(p string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.projects[p] {
		return p
	}
	if len(m.projects) >= MaxProjects || p == "" {
		return "other"
	}
	m.projects[p] = true
	return p
}

func (m *Metrics) observe(project, model, outcome string) {
	if m == nil {
		return
	}
	if !outcomes[outcome] {
		outcome = "other"
	}
	m.requests.WithLabelValues(m.project(project), model, outcome).Inc()
}

func (m *Metrics) addTokens(project, model string, u llm.Usage) {
	if m == nil {
		return
	}
	p := m.project(project)
	if u.InputTokens > 0 {
		m.tokens.WithLabelValues(p, model, "input").Add(float64(u.InputTokens))
	}
	if u.OutputTokens > 0 {
		m.tokens.WithLabelValues(p, model, "output").Add(float64(u.OutputTokens))
	}
}
