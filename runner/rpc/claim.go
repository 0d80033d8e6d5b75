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

package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// A warm pool's runner (controllers' BrowserPool) starts its browser before
// any session exists and waits to be claimed: the manager then hands it
// the session with one call, and from then on it is that session's runner
// alone, exactly as if it had been started for it.
const (
	// EnvPool names the BrowserPool that started the runner. With it, the
	// runner starts the browser EnvSession describes (the pool's template)
	// and serves nothing but HealthPath, CDP refused, and ClaimPath, with
	// the pool's token (v1alpha1.PoolTokenSecretName), until it is claimed.
	EnvPool = "BROWSERFLEET_POOL"

	// ClaimPath (POST) hands a pooled runner its session. Body
	// ClaimRequest; answer ClaimResult. It needs the pool's token. A
	// second claim for the same session answers as the first did (the
	// manager may repeat a claim it lost the answer of); one for another
	// session is CodeAlreadyClaimed.
	ClaimPath = "/v1/claim"
)

// Codes of a pooled runner.
const (
	// CodeNotClaimed (409): the runner is a warm pool's and no session has
	// claimed it yet.
	CodeNotClaimed ErrorCode = "NOT_CLAIMED"
	// CodeAlreadyClaimed (409): another session claimed the runner.
	CodeAlreadyClaimed ErrorCode = "ALREADY_CLAIMED"
	// CodeLaunchMismatch (422): the session's launch-time settings are not
	// the ones the runner's browser was started with.
	CodeLaunchMismatch ErrorCode = "LAUNCH_MISMATCH"
)

// ClaimRequest is the body of POST /v1/claim: what a runner started for a
// session gets from its environment and secret files.
type ClaimRequest struct {
	// Session is the BrowserSession's name, the session id. Required.
	Session string `json:"session"`
	// Namespace is the BrowserSession's namespace, which must be the
	// pool's. Required.
	Namespace string `json:"namespace"`
	// Spec is the session's spec as the runner is to apply it (the
	// manager's effective spec, without userMetadata). Its launch-time
	// settings (v1alpha1.LaunchSettingsOf) must equal the runner's.
	Spec v1alpha1.BrowserSessionSpec `json:"spec"`
	// Token is the session's runner token: every call after the claim
	// must present it, and the pool's token is refused. Required.
	Token string `json:"token"`
	// Secrets are the values of the session's model secrets. The
	// launch-time ones (proxy passwords) were mounted with the pool's
	// template.
	Secrets ClaimSecrets `json:"secrets,omitzero"`
}

// ClaimSecrets are the secret values of a session that a pooled runner
// cannot have been started with.
type ClaimSecrets struct {
	// ModelAPIKey is the value of spec.model.apiKeySecretRef.
	ModelAPIKey string `json:"modelApiKey,omitempty"`
	// ModelCredentials is the value of
	// spec.model.auth.credentialsSecretRef.
	ModelCredentials string `json:"modelCredentials,omitempty"`
	// ModelHeaders are the keys of spec.model.headersSecretRef: header
	// name to value.
	ModelHeaders map[string]string `json:"modelHeaders,omitempty"`
}

// LogValue keeps the token and the secrets out of logs.
func (r ClaimRequest) LogValue() slog.Value {
	return slog.GroupValue(slog.String("session", r.Namespace+"/"+r.Session), slog.String("token", "[redacted]"), slog.String("secrets", "[redacted]"))
}

// ClaimResult answers a claim.
type ClaimResult struct {
	// Session is the session that holds the runner now.
	Session string `json:"session"`
}

// Claim hands a pooled runner its session. The client must carry the
// pool's token.
func (c *Client) Claim(ctx context.Context, req ClaimRequest) (*ClaimResult, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the runner %s request: %w", ClaimPath, err)
	}
	resp, err := c.do(ctx, http.MethodPost, ClaimPath, raw, ContentTypeJSON) //nolint:bodyclose // closeBody drains and closes it
	if err != nil {
		return nil, err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(ctx, ClaimPath, resp)
	}
	var res ClaimResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return nil, c.readError(ctx, ClaimPath, "reading the claim's answer", err)
	}
	return &res, nil
}
