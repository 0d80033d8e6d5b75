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

package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/page"
)

func TestFingerprint(t *testing.T) {
	e, ctx := tab(t, "/form", engine.Options{})
	fp := func(opts engine.FingerprintOptions) *engine.Fingerprint {
		t.Helper()
		f, err := e.Fingerprint(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	whole, scoped := fp(engine.FingerprintOptions{}), fp(engine.FingerprintOptions{Selector: "form"})
	if whole.URL != site.URL+"/form" {
		t.Errorf("URL %q, want the page's", whole.URL)
	}
	if whole.Content == scoped.Content {
		t.Error("a scoped fingerprint is the whole page's")
	}
	if ignored := fp(engine.FingerprintOptions{IgnoreSelectors: []string{"#go"}}); ignored.Content == whole.Content {
		t.Error("an ignored element did not change the fingerprint")
	}

	reload(t, ctx, e)
	if again := fp(engine.FingerprintOptions{}); *again != *whole {
		t.Errorf("a reload of the same content changed the fingerprint: %+v, was %+v", again, whole)
	}

	// #out is outside the form: only the whole page's fingerprint changes.
	eval[any](t, ctx, `document.getElementById('out').textContent = 'changed'`)
	if changed := fp(engine.FingerprintOptions{}); changed.Content == whole.Content {
		t.Error("changed content kept the fingerprint")
	}
	if s := fp(engine.FingerprintOptions{Selector: "form"}); s.Content != scoped.Content {
		t.Error("a change outside the scope changed the scoped fingerprint")
	}

	if _, err := e.Fingerprint(ctx, engine.FingerprintOptions{Selector: "text=Sign in"}); !errors.Is(err, engine.ErrInvalidArgument) {
		t.Errorf("a text= scope: %v, want ErrInvalidArgument", err)
	}
	if _, err := e.Fingerprint(ctx, engine.FingerprintOptions{Selector: "#nothing"}); !errors.Is(err, page.ErrNotFound) {
		t.Errorf("a scope that matches nothing: %v, want ErrNotFound", err)
	}
}

func reload(t *testing.T, ctx context.Context, e *engine.Engine) {
	t.Helper()
	u, err := e.Page().URL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Page().Navigate(ctx, u, page.NavigateOptions{}); err != nil {
		t.Fatal(err)
	}
}
