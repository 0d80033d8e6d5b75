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

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
)

// maxNamedDifferences bounds the fields a LAUNCH_MISMATCH names.
const maxNamedDifferences = 8

// ConnectServices makes the clients of the operator's services the session
// uses: the model gateway and the server-side cache at ServicesURL, and the
// search relay at SearchURL, each presenting the session (Namespace/
// SessionName) and its Token. A runner started for a session connects at
// start; a pooled one when it is claimed, for the claiming session.
func (c *Config) ConnectServices() error {
	c.Gateway, c.Search, c.Cache = nil, nil, nil
	if c.ServicesURL == "" && c.SearchURL == "" {
		return nil
	}
	if c.SessionName == "" {
		return errors.New("connecting the operator's services: the runner has no session yet")
	}
	session, token := c.Namespace+"/"+c.SessionName, c.Token.Reveal()
	// These services are the operator's (the manager passes their
	// addresses), so their calls do not pass the egress gate, which is for
	// what tenants make the runner reach.
	if c.ServicesURL != "" && c.ModelGateway {
		gw, err := gateway.NewRunnerEndpoint(c.ServicesURL, session, token, nil)
		if err != nil {
			return err
		}
		c.Gateway = gw
	}
	if c.SearchURL != "" {
		s, err := search.NewRelayClient(c.SearchURL, session, token, nil)
		if err != nil {
			return err
		}
		c.Search = s
	}
	if c.ServicesURL != "" {
		cc, err := cache.NewClient(cache.ClientOptions{BaseURL: c.ServicesURL, Runner: true, Session: session, Token: token})
		if err != nil {
			return err
		}
		c.Cache = cc
	}
	return nil
}

// CheckServices checks the service addresses ConnectServices will use,
// before a pooled runner has a session to connect them for, so that a
// mistaken flag stops the runner at start rather than fails its claim.
func (c *Config) CheckServices() error {
	probe := *c
	probe.Namespace, probe.SessionName, probe.Token = "pool", "unclaimed", NewSecret("unclaimed")
	return probe.ConnectServices()
}

// ApplyClaim makes a pooled runner the runner of the session req hands it:
// its name, spec, token and model secrets. It checks first and changes
// nothing when it refuses: a claim without a session or token is
// BAD_REQUEST; one from another namespace, or whose launch-time settings
// (v1alpha1.LaunchSettingsOf) are not the ones the runner's browser was
// started with, is LAUNCH_MISMATCH, naming the fields that differ. The
// services are not connected: ConnectServices does that.
func (c *Config) ApplyClaim(req rpc.ClaimRequest) error {
	switch {
	case c.Pool == "":
		return rpc.Errorf(rpc.CodeBadRequest, "the runner was started for a session, not by a pool: it cannot be claimed")
	case c.SessionName != "":
		return rpc.Errorf(rpc.CodeAlreadyClaimed, "the runner already belongs to a session")
	case req.Session == "":
		return rpc.Errorf(rpc.CodeBadRequest, "session is required")
	case req.Namespace == "":
		return rpc.Errorf(rpc.CodeBadRequest, "namespace is required")
	case req.Token == "":
		return rpc.Errorf(rpc.CodeBadRequest, "token is required")
	case req.Namespace != c.Namespace:
		return rpc.Errorf(rpc.CodeLaunchMismatch, "the session's namespace %s is not the pool's, %s", req.Namespace, c.Namespace)
	}
	have, _ := v1alpha1.LaunchSettingsOf(&c.Spec)
	want, ok := v1alpha1.LaunchSettingsOf(&req.Spec)
	if !ok {
		return rpc.Errorf(rpc.CodeLaunchMismatch, "the session attaches to a browser (browser.cdpUrlSecretRef) or loads a persistent context (browserSettings.context): it cannot claim a pooled runner")
	}
	if v1alpha1.LaunchHash(have) != v1alpha1.LaunchHash(want) {
		return rpc.Errorf(rpc.CodeLaunchMismatch, "the session's launch-time settings differ from the pool's template in %s", strings.Join(launchDifferences(have, want), ", "))
	}

	c.SessionName = req.Session
	c.Spec = *req.Spec.DeepCopy()
	c.Token = NewSecret(req.Token)
	c.Secrets.ModelAPIKey = NewSecret(req.Secrets.ModelAPIKey)
	c.Secrets.ModelCredentials = NewSecret(req.Secrets.ModelCredentials)
	c.Secrets.ModelHeaders = nil
	for k, v := range req.Secrets.ModelHeaders {
		if c.Secrets.ModelHeaders == nil {
			c.Secrets.ModelHeaders = map[string]Secret{}
		}
		c.Secrets.ModelHeaders[k] = NewSecret(v)
	}
	return nil
}

// launchDifferences names the fields of two launch templates that differ,
// by their JSON paths (browser.launchOptions.args), at most
// maxNamedDifferences of them. The templates hold secret references only,
// so naming their fields reveals nothing; their values are not named.
func launchDifferences(a, b v1alpha1.BrowserPoolTemplate) []string {
	var out []string
	diffJSON("", toJSON(v1alpha1.NormalizeTemplate(a)), toJSON(v1alpha1.NormalizeTemplate(b)), &out)
	slices.Sort(out)
	if len(out) == 0 {
		// The hashes differ, so something does.
		return []string{"the launch settings"}
	}
	if len(out) > maxNamedDifferences {
		out = append(out[:maxNamedDifferences], fmt.Sprintf("%d more fields", len(out)-maxNamedDifferences))
	}
	return out
}

func toJSON(t v1alpha1.BrowserPoolTemplate) any {
	raw, err := json.Marshal(t)
	if err != nil {
		// The template's types all encode.
		panic("encoding a pool template: " + err.Error())
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// diffJSON appends the paths under path at which a and b differ: the keys
// of objects, down to the first value that is not an object (a list is
// compared whole).
func diffJSON(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, path)
		}
		return
	}
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		diffJSON(p, am[k], bm[k], out)
	}
}
