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

package app

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/browserfleet/browserfleet/engine/llm/provider"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/store"
)

// GatewayOptions configure the model gateway (docs/gateway.md).
type GatewayOptions struct {
	// Providers by name (openai, anthropic, google): a provider with no
	// key file and no base URL is not offered.
	Providers map[string]*GatewayProvider
	// DefaultModel is what the model auto means.
	DefaultModel string
	// BudgetTokens is every project's token budget per BudgetWindow; 0:
	// none.
	BudgetTokens int64
	// BudgetWindow is the period budgets count over.
	BudgetWindow time.Duration
	// ProjectBudgets override BudgetTokens by namespace.
	ProjectBudgets map[string]int64
	// MaxInFlight bounds the calls the gateway runs at once.
	MaxInFlight int
}

// GatewayProvider is one provider's flags.
type GatewayProvider struct {
	APIKeyFile string
	BaseURL    string
	Models     string
}

// AddFlags binds the gateway's flags.
func (o *GatewayOptions) AddFlags(fs *flag.FlagSet) {
	if o.Providers == nil {
		o.Providers = map[string]*GatewayProvider{}
	}
	for _, name := range provider.Names {
		p := &GatewayProvider{}
		o.Providers[name] = p
		fs.StringVar(&p.APIKeyFile, "gateway-"+name+"-api-key-file", "", "file holding the operator's "+name+" API key (a mounted Secret), which the model gateway calls "+name+" with; runners never get it")
		fs.StringVar(&p.BaseURL, "gateway-"+name+"-base-url", "", "the gateway's "+name+" endpoint (an OpenAI-compatible server for openai); empty: the provider's own")
		fs.StringVar(&p.Models, "gateway-"+name+"-models", "", "comma list of the "+name+" models the gateway offers; empty: any")
	}
	fs.IntVar(&o.MaxInFlight, "gateway-max-in-flight", gateway.DefaultMaxInFlight, "model calls the gateway runs at once, across every caller; more are refused with 429 GATEWAY_BUSY")
	fs.StringVar(&o.DefaultModel, "gateway-default-model", "", "provider/model the model auto means (a session started without a model); empty: auto is refused")
	fs.Int64Var(&o.BudgetTokens, "gateway-budget-tokens", 0, "tokens each project may spend through the gateway per --gateway-budget-window; 0: no budget")
	fs.DurationVar(&o.BudgetWindow, "gateway-budget-window", gateway.DefaultBudgetWindow, fmt.Sprintf("the period budgets count over, from the Unix epoch; at least %s", gateway.MinBudgetWindow))
	fs.Func("gateway-project-budget", "namespace=tokens: a project's own budget per window, over --gateway-budget-tokens (0: none); repeatable", func(v string) error {
		ns, n, ok := strings.Cut(v, "=")
		tokens, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		if !ok || err != nil || tokens < 0 {
			return fmt.Errorf("%q: want namespace=tokens, tokens a whole number of at least 0", v)
		}
		if err := store.CheckName("project", ns); err != nil {
			return err
		}
		if o.ProjectBudgets == nil {
			o.ProjectBudgets = map[string]int64{}
		}
		o.ProjectBudgets[ns] = tokens
		return nil
	})
}

// configured reports whether any provider is offered.
func (o GatewayOptions) configured() bool {
	for _, p := range o.Providers {
		if p != nil && (p.APIKeyFile != "" || p.BaseURL != "") {
			return true
		}
	}
	return false
}

// newGateway is the configured gateway, or nil when no provider is
// offered. Its budgets count in st.
func newGateway(o GatewayOptions, st store.Store, reg prometheus.Registerer, log logr.Logger) (*gateway.Gateway, error) {
	if !o.configured() {
		if o.DefaultModel != "" || o.BudgetTokens != 0 || len(o.ProjectBudgets) > 0 {
			return nil, errors.New("the --gateway-default-model and --gateway-*budget* flags need a provider: --gateway-<provider>-api-key-file or --gateway-<provider>-base-url")
		}
		log.Info("no model gateway: sessions must name a model and bring its key")
		return nil, nil
	}
	var providers []gateway.Provider
	var names []string
	for _, name := range provider.Names {
		p := o.Providers[name]
		if p == nil || p.APIKeyFile == "" && p.BaseURL == "" {
			continue
		}
		gp := gateway.Provider{Name: name, APIKeyFile: p.APIKeyFile, BaseURL: p.BaseURL}
		for _, m := range strings.Split(p.Models, ",") {
			if m = strings.TrimSpace(m); m != "" {
				gp.Models = append(gp.Models, m)
			}
		}
		providers = append(providers, gp)
		names = append(names, name)
	}
	m, err := gateway.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	g, err := gateway.New(gateway.Options{
		Providers:    providers,
		DefaultModel: o.DefaultModel,
		Budget:       gateway.Budget{Tokens: o.BudgetTokens, Window: o.BudgetWindow, Projects: o.ProjectBudgets},
		Store:        st,
		Metrics:      m,
		Logger:       log.WithName("gateway"),
		MaxInFlight:  o.MaxInFlight,
	})
	if err != nil {
		return nil, err
	}
	log.Info("serving the model gateway", "providers", names, "defaultModel", o.DefaultModel, "budgetTokens", o.BudgetTokens, "budgetWindow", o.BudgetWindow.String(), "projectBudgets", len(o.ProjectBudgets))
	return g, nil
}
