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

package devstack

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apiapp "github.com/browserfleet/browserfleet/cmd/api/app"
	"github.com/browserfleet/browserfleet/gateway"
)

// Gateway runs the API with a model gateway in front of local model
// servers: `make dev` with DEV_MODEL_BASE_URL, and tests with the scripted
// model. Each provider gets a dev key, written to a file the API reads as
// it reads a mounted Secret; runners reach the gateway on the API's runner
// listener, on loopback, and never hold the key.
type Gateway struct {
	// BaseURLs are the endpoints the gateway forwards to, by provider
	// (openai, anthropic, google). At least one.
	BaseURLs map[string]string
	// DefaultModel is what the model auto means, "provider/model".
	DefaultModel string
	// BudgetTokens, BudgetWindow and ProjectBudgets are the API's
	// --gateway-budget-* flags; zero: no budget, and the default window.
	BudgetTokens   int64
	BudgetWindow   time.Duration
	ProjectBudgets map[string]int64
}

// GatewayKey is the dev key the gateway sends its providers, "" without
// Options.Gateway: a test checks the model server got it, and that no
// runner holds it.
func (s *Stack) GatewayKey() string { return s.gatewayKey }

// prepareGateway writes the dev key, before the API starts. Runners reach
// the gateway on the API's runner listener (ServicesURL).
func (s *Stack) prepareGateway() error {
	g := s.opts.Gateway
	if g == nil {
		return nil
	}
	if len(g.BaseURLs) == 0 {
		return errors.New("the dev gateway needs a base URL of at least one provider")
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("making the dev gateway key: %w", err)
	}
	s.gatewayKey = "dev-gateway-" + hex.EncodeToString(b)
	dir := filepath.Join(s.opts.Dir, "gateway")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the gateway's directory: %w", err)
	}
	for prov := range g.BaseURLs {
		if err := os.WriteFile(s.gatewayKeyPath(prov), []byte(s.gatewayKey), 0o600); err != nil {
			return fmt.Errorf("writing the dev gateway key: %w", err)
		}
	}
	return nil
}

func (s *Stack) gatewayKeyPath(provider string) string {
	return filepath.Join(s.opts.Dir, "gateway", provider+".key")
}

// applyGateway gives the API its gateway flags.
func (s *Stack) applyGateway(opts *apiapp.Options) {
	g := s.opts.Gateway
	if g == nil {
		return
	}
	providers := map[string]*apiapp.GatewayProvider{}
	for prov, url := range g.BaseURLs {
		providers[prov] = &apiapp.GatewayProvider{APIKeyFile: s.gatewayKeyPath(prov), BaseURL: url}
	}
	opts.Gateway = apiapp.GatewayOptions{
		Providers:      providers,
		DefaultModel:   g.DefaultModel,
		BudgetTokens:   g.BudgetTokens,
		BudgetWindow:   cmp.Or(g.BudgetWindow, gateway.DefaultBudgetWindow),
		ProjectBudgets: g.ProjectBudgets,
	}
	names := make([]string, 0, len(providers))
	for p := range providers {
		names = append(names, p)
	}
	slices.Sort(names)
	s.log.Info("the API runs a model gateway; sessions without a model key use it", "providers", strings.Join(names, ","), "defaultModel", g.DefaultModel, "runners", s.servicesURL)
}
