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

package llm

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/browserfleet/browserfleet/engine/llm/provider"
)

var (
	// ErrInvalidModel is returned for a model name that is not of the form
	// "provider/model".
	ErrInvalidModel = errors.New("invalid model name")
	// ErrUnknownProvider is returned for a provider this package cannot call.
	ErrUnknownProvider = errors.New("unknown model provider")
)

// ParseModel splits a model name into its provider and the provider's model
// id, the way New does. prov, when not empty, overrides the prefix of
// model (see Config.Provider). Provider names are case-insensitive and
// returned in lower case.
func ParseModel(model, prov string) (string, string, error) {
	if model == "" {
		return "", "", fmt.Errorf("%w: empty; want provider/model, e.g. %q", ErrInvalidModel, "openai/gpt-4.1-mini")
	}
	if strings.ContainsFunc(model, unicode.IsSpace) {
		return "", "", fmt.Errorf("%w %q: contains white space", ErrInvalidModel, model)
	}
	var id string
	if prov != "" {
		prov = strings.ToLower(prov)
		id = model
		// "openai/gpt-4o" with provider "openai" names gpt-4o; any other
		// slash belongs to the id ("meta-llama/Llama-3.1-8B-Instruct").
		if p, rest, ok := strings.Cut(model, "/"); ok && strings.EqualFold(p, prov) {
			id = rest
		}
	} else {
		var ok bool
		prov, id, ok = strings.Cut(model, "/")
		if !ok {
			return "", "", fmt.Errorf("%w %q: want provider/model, e.g. %q", ErrInvalidModel, model, "openai/"+model)
		}
		if prov == "" {
			return "", "", fmt.Errorf("%w %q: empty provider", ErrInvalidModel, model)
		}
		prov = strings.ToLower(prov)
	}
	if !provider.Known(prov) {
		return "", "", fmt.Errorf("%w %q in model %q: supported providers are %s", ErrUnknownProvider, prov, model, strings.Join(provider.Names, ", "))
	}
	if id == "" {
		return "", "", fmt.Errorf("%w %q: empty model id after the provider", ErrInvalidModel, model)
	}
	return prov, id, nil
}
