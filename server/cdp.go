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

package server

import (
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/cdptoken"
)

// The CDP WebSocket of a session is served by the API pod, which proxies it
// to the session's runner with the runner token. Clients authenticate with
// the signed token in the URL instead of an API key, because the tools that
// connect to a DevTools URL (chromedp's remote allocator, Playwright's
// connectOverCDP, puppeteer.connect) take a URL and nothing else. The URL
// has the shape of Chromium's own, /devtools/browser/<id>, with the token
// in place of the id: chromedp uses a URL holding "/devtools/browser/" as
// given instead of asking /json/version for another.

// CDPPathPattern is the route of a session's CDP WebSocket.
const CDPPathPattern = "/v1/sessions/{id}/devtools/browser/{token}"

// cdpQueryProject names the session's project in a CDP URL: the path has
// room for the session only, and a session is named within its project.
const cdpQueryProject = "project"

// cdpQueryKey names the API key that asked for a CDP URL: its token is
// bound to that key and stops working when the key is revoked.
const cdpQueryKey = "key"

// DefaultCDPURLTTL bounds how long a cdpUrl may be used to connect; a
// connection made in time lasts as long as the session.
const DefaultCDPURLTTL = time.Hour

// cdpURL is the session's DevTools WebSocket URL through this server, nil
// when the server signs none. Its host is Options.PublicURL's, else the one
// the client used to reach this server.
func (s *server) cdpURL(r *http.Request, bs *v1alpha1.BrowserSession) *string {
	project, ok := projectOf(r.Context())
	if s.opts.CDPSigner == nil || !ok {
		return nil
	}
	expires := time.Now().Add(s.opts.CDPURLTTL)
	if e := bs.Status.ExpiresAt; e != nil && e.Time.Before(expires) {
		expires = e.Time
	}
	u := s.publicBase(r)
	tok := s.opts.CDPSigner.Sign(bs.Namespace, bs.Name, string(bs.UID), project.KeyID, expires)
	u.Path = strings.TrimRight(u.Path, "/") + "/v1/sessions/" + bs.Name + "/devtools/browser/" + tok
	u.RawQuery = url.Values{cdpQueryProject: {bs.Namespace}, cdpQueryKey: {project.KeyID}}.Encode()
	str := u.String()
	return &str
}

// publicBase is the WebSocket base URL clients reach this server at.
func (s *server) publicBase(r *http.Request) url.URL {
	if s.publicURL != nil {
		u := *s.publicURL
		return u
	}
	scheme := "ws"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "wss"
	}
	host := r.Host
	if fwd := r.Header.Get("X-Forwarded-Host"); fwd != "" {
		host = strings.TrimSpace(strings.Split(fwd, ",")[0])
	}
	return url.URL{Scheme: scheme, Host: host}
}

// parsePublicURL turns Options.PublicURL into a WebSocket base URL.
func parsePublicURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, errors.New("server: PublicURL must be an absolute URL such as https://browserfleet.example.com")
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return nil, errors.New("server: PublicURL must use http, https, ws or wss")
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// cdp serves GET /v1/sessions/{id}/devtools/browser/{token}.
func (s *server) cdp(w http.ResponseWriter, r *http.Request) {
	if s.opts.CDPSigner == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "this server hands out no CDP URLs")
		return
	}
	q := r.URL.Query()
	project := apikey.Project{Namespace: q.Get(cdpQueryProject), KeyID: q.Get(cdpQueryKey)}
	id, tok := r.PathValue("id"), r.PathValue("token")
	// A token for no session, a bad token and a revoked key's token answer
	// alike, so that the endpoint tells nothing about which sessions and
	// keys exist. Everything up to the runner token is read from the cache:
	// an unauthenticated caller makes no request to the API server.
	refuse := func() { writeError(w, http.StatusUnauthorized, CodeUnauthorized, "missing or invalid CDP token") }
	if project.Namespace == "" || !s.isProject(project.Namespace) || project.KeyID == "" || tok == "" || len(validation.IsDNS1123Label(id)) > 0 {
		refuse()
		return
	}
	bs := &v1alpha1.BrowserSession{}
	if err := s.opts.Client.Get(r.Context(), types.NamespacedName{Namespace: project.Namespace, Name: id}, bs); err != nil {
		if !apierrors.IsNotFound(err) {
			s.log.Error(err, "getting session for cdp", "namespace", project.Namespace)
		}
		refuse()
		return
	}
	switch err := s.opts.CDPSigner.Verify(tok, bs.Namespace, bs.Name, string(bs.UID), project.KeyID, time.Now()); {
	case errors.Is(err, cdptoken.ErrExpired):
		writeError(w, http.StatusUnauthorized, CodeUnauthorized, "the CDP URL has expired; get a fresh one from GET /v1/sessions/{id}")
		return
	case err != nil:
		refuse()
		return
	}
	if ok, err := s.opts.Authenticator.Valid(r.Context(), project); err != nil || !ok {
		if err != nil {
			s.log.Error(err, "checking the api key of a cdp url", "namespace", project.Namespace)
		}
		refuse()
		return
	}
	if refuseUnready(w, bs) {
		return
	}
	runnerTok, err := s.runnerToken(r.Context(), bs)
	if err != nil {
		s.log.Error(err, "getting runner token for cdp", "namespace", bs.Namespace, "session", bs.Name)
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "the session's runner is not ready to take calls yet; retry")
		return
	}
	target, err := url.Parse(bs.Status.Endpoint)
	if err != nil {
		s.log.Error(err, "parsing runner endpoint", "namespace", bs.Namespace, "session", bs.Name)
		writeInternal(w)
		return
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = target.Scheme
			pr.Out.URL.Host = target.Host
			pr.Out.URL.Path = rpc.CDPPath
			pr.Out.URL.RawPath = ""
			// The signed token is for this server, not the runner.
			pr.Out.URL.RawQuery = ""
			pr.Out.Host = target.Host
			pr.Out.Header.Del("Cookie")
			pr.Out.Header.Del(HeaderAPIKey)
			pr.Out.Header.Set("Authorization", rpc.AuthorizationScheme+" "+runnerTok)
		},
		Transport: rpc.Transport(),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				s.log.Error(err, "proxying cdp", "namespace", bs.Namespace, "session", bs.Name)
			}
			writeError(w, http.StatusBadGateway, CodeRunnerUnreachable, "the session's runner cannot be reached")
		},
	}
	// The connection lasts until either side closes it, or until the
	// server's shutdown grace has passed: a hijacked connection is not
	// one that http.Server.Shutdown waits for or closes.
	ctx, cancel := s.operationContext(r.Context())
	defer cancel()
	// Held under the key that asked for the URL: revoking it closes the
	// connection.
	release := s.held.hold(project, cancel)
	defer release()
	s.log.V(1).Info("cdp connection", "namespace", bs.Namespace, "session", bs.Name, "key", project.KeyID)
	proxy.ServeHTTP(w, r.WithContext(ctx))
}
