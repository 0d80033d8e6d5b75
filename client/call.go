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

package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/gateway"
)

// Limits of a call's options.
const (
	// maxIgnoreLocators bounds IgnoreLocators.
	maxIgnoreLocators = 100
	// maxVariables bounds Variables.
	maxVariables = 100
	// maxVariableValue bounds a variable's value, in bytes.
	maxVariableValue = 64 << 10
)

// callScope is what every operation's options have in common.
type callScope struct {
	page      *Page
	locator   *Locator
	ignore    []*Locator
	model     *ModelConfig
	cache     *Caching
	timeout   time.Duration
	variables Variables
}

// resolve checks a call's options (f prefixes the field names of errors)
// against the instance and returns the page the call targets and the call
// as the runtime takes it: the model and cache setting in effect, the
// locators as the engine's selectors.
func (c *Client) resolve(ctx context.Context, f string, s callScope) (*Page, opCall, error) {
	if c.closed.Load() {
		return nil, opCall{}, ErrClosed
	}
	oc := opCall{model: c.cfg.model, cache: c.cfg.cache, timeout: s.timeout, variables: s.variables}
	if s.model != nil {
		if err := checkModel(f+"Model", s.model, c.cfg.generate != nil); err != nil {
			return nil, oc, err
		}
		oc.model = s.model
	}
	if s.cache != nil {
		if err := checkCache(f+"Cache", s.cache); err != nil {
			return nil, oc, err
		}
		oc.cache = s.cache
	}
	if s.timeout < 0 {
		return nil, oc, invalid(f+"Timeout", "must not be negative")
	}
	if err := checkVariables(f+"Variables", s.variables); err != nil {
		return nil, oc, err
	}

	p := s.page
	if p != nil && p.b != c.browser {
		return nil, oc, invalid(f+"Page", "is a page of another browser handle than the instance's")
	}
	if l := s.locator; l != nil {
		if err := c.checkLocator(f+"Locator", l); err != nil {
			return nil, oc, err
		}
		if p != nil && l.page != p {
			return nil, oc, invalid(f+"Locator", "is a locator of another page than %sPage", f)
		}
		p = l.page
		oc.selector = l.engineSelector()
	}
	if len(s.ignore) > maxIgnoreLocators {
		return nil, oc, invalid(f+"IgnoreLocators", "has %d locators; at most %d", len(s.ignore), maxIgnoreLocators)
	}
	for i, l := range s.ignore {
		field := fmt.Sprintf("%sIgnoreLocators[%d]", f, i)
		if err := c.checkLocator(field, l); err != nil {
			return nil, oc, err
		}
		if p == nil {
			p = l.page
		}
		if l.page != p {
			return nil, oc, invalid(field, "is a locator of another page than the one the call targets")
		}
		oc.ignore = append(oc.ignore, l.engineSelector())
	}
	if oc.selector != "" || len(oc.ignore) > 0 {
		// A scoped call is not one the cache can answer for the page.
		oc.cache = CacheEnabled(false)
	}
	if p == nil {
		var err error
		if p, err = c.browser.Context().ActivePage(ctx); err != nil {
			return nil, oc, err
		}
	}
	return p, oc, nil
}

// checkLocator refuses a locator the engine cannot resolve: one of another
// handle's page, a "text=" one, a malformed one.
func (c *Client) checkLocator(field string, l *Locator) error {
	if l == nil || l.page == nil {
		return invalid(field, "is nil")
	}
	if l.page.b != c.browser {
		return invalid(field, "is a locator of another browser handle's page")
	}
	if l.hasNth && l.nth < 0 {
		return invalid(field, "Nth(%d): the index counts from 0", l.nth)
	}
	return checkSelector(field, l.engineSelector())
}

// checkSelector refuses a selector the engine cannot resolve, naming the
// field.
func checkSelector(field, sel string) error {
	if strings.TrimSpace(sel) == "" {
		return invalid(field, "the selector is empty")
	}
	if err := page.CheckSelector(sel); err != nil {
		if errors.Is(err, page.ErrTextSelector) {
			return invalid(field, "%s", err.Error())
		}
		return invalid(field, "selector %q: %s", sel, err.Error())
	}
	return nil
}

// checkModel refuses a ModelConfig no provider could serve. With a
// Generate callback the name is only passed on to it.
func checkModel(field string, m *ModelConfig, generate bool) error {
	if m.ModelName == "" {
		return invalid(field+".ModelName", "is required, such as %q", "openai/gpt-4.1-mini")
	}
	if generate || m.ModelName == gateway.ModelAuto {
		// auto is the service's gateway's, which the instance's handle
		// checks when it opens.
		return nil
	}
	if _, _, err := llm.ParseModel(m.ModelName, ""); err != nil {
		return invalid(field+".ModelName", "%s", err.Error())
	}
	if m.BaseURL != "" {
		if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid(field+".BaseURL", "want an absolute http or https URL")
		}
	}
	return nil
}

// checkCache refuses a threshold that is not a positive integer within the
// service's bound.
func checkCache(field string, c *Caching) error {
	if c != nil && c.thresholdSet && (c.threshold <= 0 || c.threshold > cache.MaxThreshold) {
		return invalid(field, "the threshold must be a positive integer of at most %d, got %d", cache.MaxThreshold, c.threshold)
	}
	return nil
}

// checkVariables refuses variables the engine cannot name, or too many or
// too large. The errors name a variable, never its value.
func checkVariables(field string, vars Variables) error {
	if len(vars) > maxVariables {
		return invalid(field, "has %d variables; at most %d", len(vars), maxVariables)
	}
	for name, v := range vars {
		if !engine.ValidVariableName(name) {
			return invalid(field, "name %q: use letters, digits, '_', '.' and '-'", name)
		}
		if len(v.Value) > maxVariableValue {
			return invalid(field, "the value of %q is %d bytes; at most %d", name, len(v.Value), maxVariableValue)
		}
	}
	return nil
}

// modelName is the name of the model the call uses, for traces; empty
// when the call has none.
func (oc opCall) modelName() string {
	if oc.model == nil {
		return ""
	}
	return oc.model.ModelName
}
