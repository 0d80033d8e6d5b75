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
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
)

// Defaults of Config's process-level settings.
const (
	// DefaultChromiumPath is Debian's Chromium, which the runner image ships.
	DefaultChromiumPath = "/usr/bin/chromium"
	// DefaultHeadlessShellPath is the binary of Debian's
	// chromium-headless-shell, the headless-only build of the same
	// Chromium, which the runner image ships too: it holds less memory
	// than the full browser in headless mode (docs/performance.md). Not
	// the package's /usr/bin wrapper, a shell that stays the browser's
	// parent: the runner supervises and signals the browser by its pid.
	DefaultHeadlessShellPath = "/usr/lib/chromium/chromium-headless-shell"
	// DefaultShutdownTimeout leaves room within the runner pod's default
	// termination grace period (15s) for the browser to close and the
	// process group to be killed.
	DefaultShutdownTimeout = 10 * time.Second
)

// FindChromium finds a browser for a runner outside its image (make dev,
// tests): $CHROMIUM, else chromium on $PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH; set CHROMIUM (Debian: apt-get install chromium)")
}

// Config is everything a runner needs: the session it serves, the secrets
// the manager mounted for it, and process-level settings from flags.
type Config struct {
	// Pool names the BrowserPool that started the runner (rpc.EnvPool):
	// the runner then starts the browser Spec describes, the pool's
	// template, and waits for a session to claim it (ApplyClaim). Empty:
	// the runner was started for the session SessionName names.
	Pool string
	// SessionName is the BrowserSession's name, the session id. It labels
	// every log line. A pooled runner has none until it is claimed.
	SessionName string
	// Namespace is the BrowserSession's namespace.
	Namespace string
	// Spec is the session's spec. It holds secret references only; the
	// values are in Secrets.
	Spec v1alpha1.BrowserSessionSpec
	// Token is the runner token every call but /healthz must present: a
	// pooled runner's is its pool's until a claim hands it the session's.
	Token Secret
	// PodIP is the pod's IP; the RPC listens on it unless ListenAddress is
	// set.
	PodIP string
	// Secrets are the values of the secrets Spec references.
	Secrets SessionSecrets

	// ListenAddress is host:port to serve on. Empty means PodIP (or every
	// interface when PodIP is empty) on rpc.Port.
	ListenAddress string
	// ChromiumPath is the browser binary, unless the session's
	// launchOptions.executablePath names another.
	ChromiumPath string
	// HeadlessShellPath is the browser of headless sessions that name no
	// executablePath, ask for no devtools and keep the --headless default
	// switch, when the file is there: Chromium's headless-only build.
	// Empty, or not there: ChromiumPath for every session.
	HeadlessShellPath string
	// DisableSiteIsolation lets cross-site iframes share their page's
	// renderer process in the headless-only build (HeadlessShellPath),
	// which then runs without --site-per-process: it saves a renderer per
	// embedded site and gives up the process boundary between a page and
	// what it embeds. Chromium 156 itself isolates sites whatever it is
	// told. The operator opts out with the runner's
	// --site-isolation=false; sessions cannot.
	DisableSiteIsolation bool
	// DisableWebGL turns WebGL off, and with it the software GPU
	// (SwiftShader) Chromium's GPU process starts for it on a node without
	// a GPU: about 14 MB less per session (docs/performance.md), and no
	// WebGL for pages (maps, 3D, and the fingerprint checks of bot
	// detectors, which then see a browser without it). The operator opts
	// out with the runner's --webgl=false; sessions cannot.
	DisableWebGL bool
	// MaxQueuedOperations bounds the operations waiting for their turn on
	// the session's page (SESSION_BUSY beyond it); 0 means
	// DefaultMaxQueuedOperations.
	MaxQueuedOperations int
	// ShutdownTimeout bounds closing the browser gracefully once the
	// runner is told to stop; then its process group is killed.
	ShutdownTimeout time.Duration
	// Egress is the policy every connection of the browser and of the
	// runner itself passes (runner/egress); the flags give the operator's
	// lists. Required: FromEnv sets the default, which allows the
	// public internet only.
	Egress *egress.Policy
	// Resolver looks up the names the browser and the runner connect to;
	// nil is the system's resolver. Tests give one that never leaves the
	// machine.
	Resolver egress.Resolver
	// CrashExitDelay, when positive, makes Run return this long after the
	// browser crashed, so that the pod fails and the manager marks the
	// session Failed; meanwhile /healthz and calls report the crash. Zero
	// keeps the runner serving its 503s until it is stopped.
	CrashExitDelay time.Duration
	// DataDir holds the directories sessions name: launchOptions.userDataDir
	// is <DataDir>/profiles/<name>, downloadsPath <DataDir>/downloads/<name>.
	// Empty: DefaultDataDir().
	DataDir string
	// AllowedExecutables are the browser binaries a session's
	// launchOptions.executablePath may name, besides ChromiumPath.
	AllowedExecutables []string
	// TerminationMessagePath is the file Run leaves the summary of the
	// session's history in when it stops (rpc.EnvTerminationMessagePath);
	// empty: none.
	TerminationMessagePath string
	// SearchURL is the URL of the API's search relay (rpc.FlagSearchURL);
	// empty: the agent has no search tool.
	SearchURL string
	// ServicesURL is the base URL of the API's runner listener
	// (rpc.FlagServicesURL), where the server-side cache and the model
	// gateway are; empty: neither.
	ServicesURL string
	// ModelGateway says that the API at ServicesURL serves the model
	// gateway (rpc.FlagModelGateway).
	ModelGateway bool

	// Search is the operator's web search, through the API's relay at
	// SearchURL; nil: the agent has no search tool. ConnectServices sets
	// it.
	Search search.Searcher
	// Gateway is the model gateway, through the API's runner listener
	// (gateway.NewRunnerEndpoint on ServicesURL); nil: none, and a model
	// without a key of its own is called without one. ConnectServices
	// sets it.
	Gateway *gateway.Endpoint
	// Cache is the server-side cache, through the API's runner listener
	// (cache.Client on ServicesURL); nil: every call is DISABLED.
	// ConnectServices sets it.
	Cache cache.Store
}

// DefaultDataDir is the data directory when none is configured: under the
// temporary directory, which in a runner pod is its writable /tmp.
func DefaultDataDir() string { return filepath.Join(os.TempDir(), "browserfleet") }

// SessionSecrets are the secret values of a session, each from the file
// runner/rpc names for it.
type SessionSecrets struct {
	// ModelAPIKey is the value of spec.model.apiKeySecretRef.
	ModelAPIKey Secret
	// ModelCredentials is the value of spec.model.auth.credentialsSecretRef
	// (service-account JSON).
	ModelCredentials Secret
	// ModelHeaders are the keys of spec.model.headersSecretRef: header name
	// to value.
	ModelHeaders map[string]Secret
	// LaunchProxyPassword is the value of
	// spec.browser.launchOptions.proxy.passwordSecretRef.
	LaunchProxyPassword Secret
	// ProxyPasswords are the values of
	// spec.cloudSessionCreateParams.proxies[i].passwordSecretRef, by i.
	ProxyPasswords map[int]Secret
	// CDPURL is the value of spec.browser.cdpUrlSecretRef: the browser to
	// attach to. Its path and query often carry a token.
	CDPURL Secret
	// CDPHeaders are the headers of
	// spec.browser.launchOptions.cdpHeadersSecretRef: header name to value.
	CDPHeaders map[string]Secret
}

// FromEnv reads the configuration the manager gives the runner
// container (see runner/rpc and controllers/runner_pod.go): the session from
// the environment, which holds no secret, and the secrets from the files of
// the directories the environment names (rpc.EnvSecretsDir, else
// rpc.SecretsDir; rpc.EnvModelHeadersDir). environ is
// os.Environ()'s format. A secret file that is not there leaves its value
// empty: only what the session references is mounted. Process-level
// settings get their defaults; flags may override them afterwards.
func FromEnv(environ []string) (*Config, error) {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	cfg := &Config{
		Pool:        env[rpc.EnvPool],
		SessionName: env[rpc.EnvSessionName],
		Namespace:   env[rpc.EnvNamespace],
		PodIP:       env[rpc.EnvPodIP],
		// The manager names the container's terminationMessagePath.
		TerminationMessagePath: env[rpc.EnvTerminationMessagePath],
		ChromiumPath:           DefaultChromiumPath,
		HeadlessShellPath:      DefaultHeadlessShellPath,
		ShutdownTimeout:        DefaultShutdownTimeout,
		Egress:                 egress.NewPolicy(egress.Config{}),
	}
	spec, ok := env[rpc.EnvSession]
	if !ok || strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("%s is not set: the runner needs the session's spec", rpc.EnvSession)
	}
	// The spec holds references only, so a decoding error may quote it.
	if err := json.Unmarshal([]byte(spec), &cfg.Spec); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", rpc.EnvSession, err)
	}
	dir := env[rpc.EnvSecretsDir]
	if dir == "" {
		dir = rpc.SecretsDir
	}
	if err := cfg.readSecrets(dir, env[rpc.EnvModelHeadersDir]); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readSecrets reads the token and the session's secrets from dir, and the
// model's header Secret from its directory when named. No error quotes a
// secret.
func (c *Config) readSecrets(dir, modelHeadersDir string) error {
	var errs []error
	read := func(name string) Secret {
		v, err := readSecretFile(filepath.Join(dir, name))
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	c.Token = read(rpc.FileToken)
	s := &c.Secrets
	s.ModelAPIKey = read(rpc.FileModelAPIKey)
	s.ModelCredentials = read(rpc.FileModelCredentials)
	s.LaunchProxyPassword = read(rpc.FileLaunchProxyPassword)
	s.CDPURL = read(rpc.FileCDPURL)
	if p := c.Spec.CloudSessionCreateParams; p != nil {
		for i := range p.Proxies {
			if v := read(fmt.Sprintf(rpc.FileCloudProxyPasswordFormat, i)); !v.IsZero() {
				if s.ProxyPasswords == nil {
					s.ProxyPasswords = map[int]Secret{}
				}
				s.ProxyPasswords[i] = v
			}
		}
	}
	if h := read(rpc.FileCDPHeaders); !h.IsZero() {
		var headers map[string]string
		if err := json.Unmarshal([]byte(h.Reveal()), &headers); err != nil {
			// json's errors may quote the value.
			errs = append(errs, errors.New("browser.launchOptions.cdpHeadersSecretRef: the value is not a JSON object of header names to strings"))
		}
		for k, v := range headers {
			if s.CDPHeaders == nil {
				s.CDPHeaders = map[string]Secret{}
			}
			s.CDPHeaders[k] = NewSecret(v)
		}
	}
	var err error
	if s.ModelHeaders, err = readHeaderDir(modelHeadersDir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// readSecretFile reads one secret file; a file that is not there is an
// empty secret. One trailing newline is dropped: `kubectl create secret
// --from-file` keeps the one an editor adds, and no key, password or URL
// ends with one.
func readSecretFile(path string) (Secret, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Secret{}, nil
	}
	if err != nil {
		// The error names the file, never its content.
		return Secret{}, fmt.Errorf("reading secret file: %w", err)
	}
	v := strings.TrimSuffix(string(b), "\n")
	return NewSecret(strings.TrimSuffix(v, "\r")), nil
}

// readHeaderDir reads a Secret volume whose every key is a header name. The
// kubelet's bookkeeping entries (names starting with "..", which no Secret
// key may) are skipped. An empty dir is no headers.
func readHeaderDir(dir string) (map[string]Secret, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading secret headers: %w", err)
	}
	var out map[string]Secret
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") {
			continue
		}
		path := filepath.Join(dir, name)
		// Keys are symlinks into the kubelet's current data directory.
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		v, err := readSecretFile(path)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]Secret{}
		}
		out[name] = v
	}
	return out, nil
}

// Validate checks what the runner cannot serve without.
func (c *Config) Validate() error {
	var errs []error
	if c.Token.IsZero() {
		errs = append(errs, fmt.Errorf("the runner token (file %s) is missing or empty: the runner refuses to serve without one", rpc.FileToken))
	}
	if c.Pool != "" && c.SessionName != "" {
		errs = append(errs, fmt.Errorf("pool %s started the runner for session %s: a pooled runner gets its session when it is claimed", c.Pool, c.SessionName))
	}
	if c.ChromiumPath == "" {
		errs = append(errs, errors.New("the chromium path is empty"))
	}
	if c.Egress == nil {
		errs = append(errs, errors.New("no egress policy"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("shutdown timeout %v is not positive", c.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// Address is where the RPC listens: ListenAddress, or PodIP on rpc.Port.
func (c *Config) Address() string {
	if c.ListenAddress != "" {
		return c.ListenAddress
	}
	return net.JoinHostPort(c.PodIP, strconv.Itoa(int(rpc.Port)))
}

// DefaultModel is the session's model with its secrets filled in: what an
// engine uses where a call's options.model leaves a field empty.
func (c *Config) DefaultModel() rpc.ModelConfig {
	m := c.Spec.Model
	out := rpc.ModelConfig{
		ModelName: m.Name,
		Provider:  m.Provider,
		APIKey:    c.Secrets.ModelAPIKey.Reveal(),
		BaseURL:   m.BaseURL,
	}
	if len(m.Headers) > 0 || len(c.Secrets.ModelHeaders) > 0 {
		out.Headers = map[string]string{}
		for k, v := range m.Headers {
			out.Headers[k] = v
		}
		// Secret headers win over plain ones of the same name: they are
		// the ones that carry credentials.
		for k, v := range c.Secrets.ModelHeaders {
			out.Headers[k] = v.Reveal()
		}
	}
	if a := m.Auth; a != nil {
		out.Auth = &rpc.ModelAuth{Type: a.Type, Scopes: a.Scopes, ProjectID: a.ProjectID, UniverseDomain: a.UniverseDomain}
		if !c.Secrets.ModelCredentials.IsZero() {
			// Service-account JSON; string fields only, as the /v1 API
			// declares them. A malformed document is left for the engine
			// to report when it needs it.
			var creds map[string]any
			if json.Unmarshal([]byte(c.Secrets.ModelCredentials.Reveal()), &creds) == nil {
				out.Auth.Credentials = map[string]string{}
				for k, v := range creds {
					if s, ok := v.(string); ok {
						out.Auth.Credentials[k] = s
					}
				}
			}
		}
	}
	if p := m.ProviderOptions; p != nil {
		out.ProviderOptions = map[string]rpc.ProviderOptions{p.Variant: {
			Project: p.Project, Location: p.Location, BaseURL: p.BaseURL, Headers: p.Headers,
		}}
	}
	return out
}
