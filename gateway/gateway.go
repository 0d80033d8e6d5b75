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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/provider"
	"github.com/browserfleet/browserfleet/store"
)

// Error codes of ErrorBody, with the status each is answered with.
const (
	CodeBadRequest      = "BAD_REQUEST"       // 400: a malformed request
	CodeUnauthorized    = "UNAUTHORIZED"      // 401
	CodeModelNotAllowed = "MODEL_NOT_ALLOWED" // 400: a model the operator does not offer
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE" // 413: over MaxRequestBytes
	CodeBudgetExceeded  = "BUDGET_EXCEEDED"   // 429: the project's budget is spent
	CodeModelError      = "MODEL_ERROR"       // 502: the provider failed the call
	CodeTimeout         = "TIMEOUT"           // 504: the provider did not answer in time
	CodeNotConfigured   = "GATEWAY_NOT_CONFIGURED"
)

// OutcomeSuccess is the outcome label of an answered call; the others are
// the codes.
const OutcomeSuccess = "success"

// Defaults and bounds of Options.
const (
	// DefaultBudgetWindow is the window a budget counts tokens over.
	DefaultBudgetWindow = 24 * time.Hour
	// MinBudgetWindow bounds Budget.Window from below: a counter per
	// window lives in the store.
	MinBudgetWindow = time.Minute
	// maxClients bounds the provider clients kept for reuse, for a
	// provider that allows any of its models.
	maxClients = 64
)

// Provider is one provider the operator offers through the gateway.
type Provider struct {
	// Name is openai, anthropic or google.
	Name string
	// APIKey is the provider's key; New reads it from APIKeyFile when
	// empty. It is sent only to the provider.
	APIKey string
	// APIKeyFile holds the key (a mounted Secret).
	APIKeyFile string
	// BaseURL overrides the provider's endpoint (llm.Config.BaseURL).
	BaseURL string
	// Models are the models allowed, "model" or "provider/model"; empty
	// allows any model of the provider.
	Models []string
}

// Budget bounds the tokens each project spends through the gateway.
type Budget struct {
	// Tokens is every project's budget per Window; 0 is none.
	Tokens int64
	// Window is the period budgets count over, from the Unix epoch;
	// zero is DefaultBudgetWindow.
	Window time.Duration
	// Projects overrides Tokens for the projects (namespaces) named; 0
	// there means no budget for that project.
	Projects map[string]int64
}

// limit is project's budget, 0 for none.
func (b Budget) limit(project string) int64 {
	if n, ok := b.Projects[project]; ok {
		return n
	}
	return b.Tokens
}

// Options configure New.
type Options struct {
	// Providers are the providers offered; at least one.
	Providers []Provider
	// DefaultModel is what ModelAuto means: "provider/model" of one of
	// Providers, allowed by it. Empty: ModelAuto is refused.
	DefaultModel string
	// Budget bounds projects' tokens; counted in Store.
	Budget Budget
	// Store counts budgets; required when a budget is set.
	Store store.Store
	// Metrics records calls and tokens; nil records none.
	Metrics *Metrics
	// Logger logs failed calls, never a request's content or a key.
	Logger logr.Logger
	// Now is the clock of budget windows; nil is time.Now.
	Now func() time.Time
}

// Gateway forwards model calls to the operator's providers.
type Gateway struct {
	opts Options
	// providers by name.
	providers map[string]*Provider
	// allowed are the models of providers that list theirs, by full name.
	allowed map[string]bool
	// secrets are redacted from every message the gateway sends.
	secrets []string

	mu      sync.Mutex
	clients map[string]llm.Client
}

// New returns the gateway of opts, its keys read. It makes no request.
func New(opts Options) (*Gateway, error) {
	if len(opts.Providers) == 0 {
		return nil, errors.New("gateway: at least one provider is required")
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Budget.Window == 0 {
		opts.Budget.Window = DefaultBudgetWindow
	}
	if err := opts.Budget.validate(); err != nil {
		return nil, err
	}
	if opts.Budget.active() && opts.Store == nil {
		return nil, errors.New("gateway: a budget needs a Store")
	}
	g := &Gateway{opts: opts, providers: map[string]*Provider{}, allowed: map[string]bool{}, clients: map[string]llm.Client{}}
	for i := range opts.Providers {
		p := opts.Providers[i]
		p.Name = strings.ToLower(strings.TrimSpace(p.Name))
		if !provider.Known(p.Name) {
			return nil, fmt.Errorf("gateway: unknown provider %q: want one of %s", p.Name, strings.Join(provider.Names, ", "))
		}
		if g.providers[p.Name] != nil {
			return nil, fmt.Errorf("gateway: provider %s given twice", p.Name)
		}
		if p.APIKey == "" && p.APIKeyFile != "" {
			b, err := os.ReadFile(p.APIKeyFile)
			if err != nil {
				return nil, fmt.Errorf("gateway: reading the %s API key file: %w", p.Name, err)
			}
			p.APIKey = strings.TrimSpace(string(b))
		}
		if p.APIKey == "" && p.BaseURL == "" {
			// Only a self-hosted endpoint (vLLM, Ollama) may take calls
			// without a key.
			return nil, fmt.Errorf("gateway: provider %s has no API key (its key file is empty or not given) and no base URL", p.Name)
		}
		if p.APIKey != "" {
			g.secrets = append(g.secrets, p.APIKey)
		}
		for _, m := range p.Models {
			full, err := fullName(p.Name, m)
			if err != nil {
				return nil, fmt.Errorf("gateway: provider %s: models: %w", p.Name, err)
			}
			g.allowed[full] = true
		}
		g.providers[p.Name] = &p
	}
	if opts.DefaultModel != "" {
		prov, id, err := llm.ParseModel(opts.DefaultModel, "")
		if err != nil {
			return nil, fmt.Errorf("gateway: default model: %w", err)
		}
		g.opts.DefaultModel = prov + "/" + id
		if _, err := g.resolve(g.opts.DefaultModel); err != nil {
			return nil, fmt.Errorf("gateway: default model %q: %s", opts.DefaultModel, err.Message)
		}
	}
	return g, nil
}

// fullName is model as "provider/model" of prov.
func fullName(prov, model string) (string, error) {
	p, id, err := llm.ParseModel(strings.TrimSpace(model), prov)
	if err != nil {
		return "", err
	}
	return p + "/" + id, nil
}

func (b Budget) active() bool {
	if b.Tokens > 0 {
		return true
	}
	for _, n := range b.Projects {
		if n > 0 {
			return true
		}
	}
	return false
}

func (b Budget) validate() error {
	if b.Tokens < 0 {
		return fmt.Errorf("gateway: budget tokens %d must not be negative", b.Tokens)
	}
	if b.Window < MinBudgetWindow {
		return fmt.Errorf("gateway: budget window %s must be at least %s", b.Window, MinBudgetWindow)
	}
	for ns, n := range b.Projects {
		if err := store.CheckName("project", ns); err != nil {
			return fmt.Errorf("gateway: project budget: %w", err)
		}
		if n < 0 {
			return fmt.Errorf("gateway: project budget of %s: %d must not be negative", ns, n)
		}
	}
	return nil
}

// DefaultModel is the model ModelAuto names, "" for none.
func (g *Gateway) DefaultModel() string { return g.opts.DefaultModel }

// Error is a refused or failed call: the status and code it is answered
// with, and a message for people, with no key in it.
type Error struct {
	Status  int
	Code    string
	Message string
	// ProviderStatus is the provider's HTTP status of a MODEL_ERROR.
	ProviderStatus int
	// RetryAfter is when a BUDGET_EXCEEDED call may be tried again: the
	// end of the window.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return "model gateway: " + e.Code + ": " + e.Message }

// Is makes errors.Is(err, ErrBudgetExceeded) match any budget refusal.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == ""
}

// ErrBudgetExceeded matches, with errors.Is, a call refused because its
// project's budget is spent.
var ErrBudgetExceeded error = &Error{Code: CodeBudgetExceeded}

func refuse(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// resolve returns the full name of the model req names, once checked
// against the operator's providers and lists.
func (g *Gateway) resolve(model string) (string, *Error) {
	model = strings.TrimSpace(model)
	if model == "" || model == ModelAuto {
		if g.opts.DefaultModel == "" {
			return "", refuse(http.StatusBadRequest, CodeModelNotAllowed, "model: the gateway has no default model, so %q cannot be served; name a model", ModelAuto)
		}
		model = g.opts.DefaultModel
	}
	if len(model) > MaxModelLength {
		return "", refuse(http.StatusBadRequest, CodeBadRequest, "model: longer than %d characters", MaxModelLength)
	}
	prov, id, err := llm.ParseModel(model, "")
	if err != nil {
		return "", refuse(http.StatusBadRequest, CodeBadRequest, "model: %s", err.Error())
	}
	full := prov + "/" + id
	p := g.providers[prov]
	if p == nil {
		return "", refuse(http.StatusBadRequest, CodeModelNotAllowed, "model %q: the gateway offers no %s model; it offers %s", full, prov, g.offer())
	}
	if len(p.Models) > 0 && !g.allowed[full] {
		return "", refuse(http.StatusBadRequest, CodeModelNotAllowed, "model %q is not one the gateway offers; it offers %s", full, g.offer())
	}
	return full, nil
}

// offer says what the gateway offers, for refusals.
func (g *Gateway) offer() string {
	var out []string
	for name, p := range g.providers {
		if len(p.Models) == 0 {
			out = append(out, "any "+name+" model")
		}
	}
	for m := range g.allowed {
		out = append(out, m)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// client returns the provider client of model, made once per model.
func (g *Gateway) client(model string) (llm.Client, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.clients[model]; c != nil {
		return c, nil
	}
	prov, _, _ := strings.Cut(model, "/")
	p := g.providers[prov]
	c, err := llm.New(llm.Config{Model: model, APIKey: p.APIKey, BaseURL: p.BaseURL})
	if err != nil {
		return nil, err
	}
	if len(g.clients) < maxClients {
		g.clients[model] = c
	}
	return c, nil
}

// Generate runs one call of project's: the model checked, the budget
// checked before the provider is called, the tokens counted after. Its
// errors are *Error.
func (g *Gateway) Generate(ctx context.Context, project string, req GenerateRequest) (*GenerateResponse, error) {
	model, rerr := g.resolve(req.Model)
	label := g.modelLabel(model)
	if rerr != nil {
		g.opts.Metrics.observe(project, label, rerr.Code)
		return nil, rerr
	}
	if len(req.Request.Messages) == 0 {
		err := refuse(http.StatusBadRequest, CodeBadRequest, "request.messages: at least one message is required")
		g.opts.Metrics.observe(project, label, err.Code)
		return nil, err
	}
	if err := g.checkBudget(ctx, project); err != nil {
		g.opts.Metrics.observe(project, label, err.Code)
		return nil, err
	}
	c, err := g.client(model)
	if err != nil {
		e := g.failure(model, err)
		g.opts.Metrics.observe(project, label, e.Code)
		return nil, e
	}
	resp, err := c.Generate(ctx, req.Request.LLM())
	if err != nil {
		e := g.failure(model, err)
		g.opts.Logger.Info("model call failed", "project", project, "model", model, "code", e.Code, "err", e.Message)
		g.opts.Metrics.observe(project, label, e.Code)
		return nil, e
	}
	g.opts.Metrics.observe(project, label, OutcomeSuccess)
	g.opts.Metrics.addTokens(project, label, resp.Usage)
	g.spend(ctx, project, resp.Usage.InputTokens+resp.Usage.OutputTokens)
	return &GenerateResponse{Model: model, Response: WireResponse(*resp)}, nil
}

// failure is the *Error of a failed provider call, redacted.
func (g *Gateway) failure(model string, err error) *Error {
	var le *llm.Error
	if errors.As(err, &le) {
		if le.StatusCode == 0 && errors.Is(le.Err, context.DeadlineExceeded) {
			return &Error{Status: http.StatusGatewayTimeout, Code: CodeTimeout, Message: g.redact(le.Error())}
		}
		e := &Error{Status: http.StatusBadGateway, Code: CodeModelError, Message: g.redact(le.Error()), ProviderStatus: le.StatusCode}
		if le.StatusCode == http.StatusBadRequest {
			// The provider refused what the caller sent: its fault.
			e.Status = http.StatusBadRequest
		}
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Status: http.StatusGatewayTimeout, Code: CodeTimeout, Message: "the model " + model + " did not answer in time"}
	}
	return &Error{Status: http.StatusBadGateway, Code: CodeModelError, Message: g.redact(fmt.Sprintf("the model %s: %s", model, err.Error()))}
}

// redact removes every provider key from msg, whatever put it there.
func (g *Gateway) redact(msg string) string {
	for _, s := range g.secrets {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	return msg
}

// modelLabel is the metrics' model label: the model when the operator
// listed it (or it is the default), else "<provider>/other", so that a
// provider that allows any model cannot grow the series without bound.
func (g *Gateway) modelLabel(model string) string {
	switch {
	case model == "":
		return "other"
	case g.allowed[model] || model == g.opts.DefaultModel:
		return model
	}
	prov, _, _ := strings.Cut(model, "/")
	return prov + "/other"
}

// windowStart is the start of the budget window now falls in, windows
// counted from the Unix epoch.
func (g *Gateway) windowStart(now time.Time) int64 {
	w := int64(g.opts.Budget.Window / time.Second)
	return now.Unix() - now.Unix()%w
}

func (g *Gateway) windowEnd(now time.Time) time.Time {
	return time.Unix(g.windowStart(now), 0).Add(g.opts.Budget.Window)
}

// budgetName is the store's counter of the window now falls in.
func (g *Gateway) budgetName(now time.Time) string {
	return fmt.Sprintf("gateway.tokens.%d", g.windowStart(now))
}

// checkBudget refuses a call of a project that has spent its budget. A
// store that fails lets the call through, logged: the budget bounds cost,
// it is not worth an outage of every model call.
func (g *Gateway) checkBudget(ctx context.Context, project string) *Error {
	limit := g.opts.Budget.limit(project)
	if limit <= 0 {
		return nil
	}
	spent, err := g.opts.Store.Add(ctx, project, g.budgetName(g.opts.Now()), 0, g.opts.Budget.Window)
	if err != nil {
		g.opts.Logger.Error(err, "reading a project's token budget; the call goes through", "project", project)
		return nil
	}
	if spent >= limit {
		now := g.opts.Now()
		e := refuse(http.StatusTooManyRequests, CodeBudgetExceeded,
			"the project %s has spent its model gateway budget of %d tokens for this %s window (%d spent); calls through the gateway resume when the window ends, or give the model's own API key",
			project, limit, g.opts.Budget.Window, spent)
		e.RetryAfter = g.windowEnd(now).Sub(now)
		return e
	}
	return nil
}

// spend counts tokens against project's budget.
func (g *Gateway) spend(ctx context.Context, project string, tokens int64) {
	if g.opts.Budget.limit(project) <= 0 || tokens <= 0 {
		return
	}
	// The call has been answered; its count must not die with the
	// caller's context.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := g.opts.Store.Add(ctx, project, g.budgetName(g.opts.Now()), tokens, g.opts.Budget.Window); err != nil {
		g.opts.Logger.Error(err, "counting a project's tokens", "project", project)
	}
}

// writeError answers err in the API's envelope.
func writeError(w http.ResponseWriter, err *Error) {
	w.Header().Set("Content-Type", "application/json")
	if err.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(err.RetryAfter.Round(time.Second)/time.Second)))
	}
	w.WriteHeader(err.Status)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: err.Message, Code: err.Code})
}
