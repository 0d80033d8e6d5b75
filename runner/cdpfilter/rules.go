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

package cdpfilter

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// rule checks the params of one command; nil forwards it as it came.
type rule func(p *Policy, params jsontext.Value) outcome

// outcome is a rule's decision: refuse says why the command is refused;
// else params, when set, replace the command's params (rewrote says why).
type outcome struct {
	refuse  string
	code    int
	params  jsontext.Value
	rewrote string
}

// domain is one entry of the allowlist. A domain whose commands is nil
// allows every command, each passing its rule in rules when it has one;
// otherwise only the commands listed pass (with their rule, if any).
// refused gives the reason of a command refused on purpose, for the
// client's error; every other command outside the list is refused as not
// allowed.
type domain struct {
	commands map[string]rule
	rules    map[string]rule
	refused  map[string]string
}

// table is the allowlist of the DevTools domains a client may use: what
// Playwright's connectOverCDP, puppeteer.connect and chromedp send to drive
// and inspect pages. Every domain acts on the session's own pages, whose
// traffic passes the egress gate, or on the browser's state for them; what
// reaches the runner's files, the host or the network around the egress
// gate is refused or rewritten by a rule. docs/runner.md ("The CDP proxy")
// lists the same.
var table = map[string]domain{
	// The page: navigation (the navigate rule), screenshots, PDFs,
	// dialogs, scripts to run on new documents, lifecycle, screencast.
	"Page": {rules: map[string]rule{
		"navigate":            navigateURL("url", false),
		"setDownloadBehavior": downloadBehavior,
	}},
	// Script and its tools, in the page's sandboxed renderer.
	"Runtime":      {},
	"Debugger":     {},
	"Profiler":     {},
	"HeapProfiler": {},
	// The document and what shows it.
	"DOM": {rules: map[string]rule{
		"setFileInputFiles": fileInputFiles,
	}},
	"DOMDebugger":   {},
	"DOMSnapshot":   {},
	"DOMStorage":    {},
	"CSS":           {},
	"Overlay":       {},
	"Accessibility": {},
	"Animation":     {},
	"LayerTree":     {},
	// The page's traffic: it still passes the egress gate; a URL the
	// browser is told to load is http or https.
	"Network": {rules: map[string]rule{
		"loadNetworkResource": httpURL("url"),
	}},
	"Fetch": {rules: map[string]rule{
		"continueRequest": httpURL("url"),
	}},
	// What a user and a device do.
	"Input": {rules: map[string]rule{
		"dispatchDragEvent": dragFiles,
	}},
	"Emulation": {},
	// Reports and state of the session's pages.
	"Log":                 {},
	"Inspector":           {},
	"Performance":         {},
	"PerformanceTimeline": {},
	"Security":            {},
	"Audits":              {},
	"Media":               {},
	"WebAudio":            {},
	"WebAuthn":            {},
	"IndexedDB":           {},
	"CacheStorage":        {},
	"EventBreakpoints":    {},
	"Preload":             {},
	// Streams the browser made (traces, PDFs): handles, not paths.
	"IO": {},
	"Tracing": {rules: map[string]rule{
		"start": tracingStart,
	}},
	// Targets: pages, contexts and the sessions to them. A client's
	// messages to a target go through this proxy (flat sessions), never
	// inside another message.
	"Target": {
		commands: map[string]rule{
			"activateTarget":        nil,
			"attachToBrowserTarget": nil,
			"attachToTarget":        nil,
			"autoAttachRelated":     nil,
			"closeTarget":           nil,
			"createBrowserContext":  createBrowserContext,
			"createTarget":          navigateURL("url", true),
			"detachFromTarget":      nil,
			"disposeBrowserContext": nil,
			"getBrowserContexts":    nil,
			"getTargetInfo":         nil,
			"getTargets":            nil,
			"setAutoAttach":         nil,
			"setDiscoverTargets":    nil,
		},
		refused: map[string]string{
			"sendMessageToTarget":    "it would carry a message past this proxy's checks; attach with flatten: true and send with sessionId",
			"exposeDevToolsProtocol": "it would give a page's script the DevTools protocol, past this proxy's checks",
			"setRemoteLocations":     "it would make the browser connect to other hosts",
			"openDevTools":           "the DevTools front end is not served",
			"getDevToolsTarget":      "the DevTools front end is not served",
		},
	},
	// The browser: its version, downloads (rewritten), permissions and
	// windows. It is the session's, so the session ends it.
	"Browser": {
		commands: map[string]rule{
			"getVersion":          nil,
			"setDownloadBehavior": downloadBehavior,
			"cancelDownload":      nil,
			"grantPermissions":    nil,
			"setPermission":       nil,
			"resetPermissions":    nil,
			"getWindowForTarget":  nil,
			"getWindowBounds":     nil,
			"setWindowBounds":     nil,
			"setContentsSize":     nil,
		},
		refused: map[string]string{
			"close":                 "the browser is the session's: end the session through the API",
			"crash":                 "the browser is the session's: end the session through the API",
			"crashGpuProcess":       "the browser is the session's: end the session through the API",
			"getBrowserCommandLine": "the browser's command line is the runner's",
			"executeBrowserCommand": "the browser's own commands are not for clients",
		},
	},
	// The session's web storage: cookies, origins' data, quota reads.
	"Storage": {
		commands: map[string]rule{
			"getCookies":                       nil,
			"setCookies":                       nil,
			"clearCookies":                     nil,
			"clearDataForOrigin":               nil,
			"clearDataForStorageKey":           nil,
			"getStorageKey":                    nil,
			"getUsageAndQuota":                 nil,
			"trackCacheStorageForOrigin":       nil,
			"trackCacheStorageForStorageKey":   nil,
			"trackIndexedDBForOrigin":          nil,
			"trackIndexedDBForStorageKey":      nil,
			"untrackCacheStorageForOrigin":     nil,
			"untrackCacheStorageForStorageKey": nil,
			"untrackIndexedDBForOrigin":        nil,
			"untrackIndexedDBForStorageKey":    nil,
			"getTrustTokens":                   nil,
			"clearTrustTokens":                 nil,
			"getSharedStorageMetadata":         nil,
			"getSharedStorageEntries":          nil,
			"setSharedStorageEntry":            nil,
			"deleteSharedStorageEntry":         nil,
			"clearSharedStorageEntries":        nil,
			"setSharedStorageTracking":         nil,
			"setStorageBucketTracking":         nil,
			"deleteStorageBucket":              nil,
			"getInterestGroupDetails":          nil,
			"setInterestGroupTracking":         nil,
			"setInterestGroupAuctionTracking":  nil,
			"getRelatedWebsiteSets":            nil,
		},
		refused: map[string]string{
			"overrideQuotaForOrigin": "it would let a site fill the runner's disk past the browser's quota",
		},
	},
}

// refusedDomains gives the reason of a domain refused on purpose; any
// other domain outside the table is refused as not allowed.
var refusedDomains = map[string]string{
	"SystemInfo":   "it reports the host's hardware, processes and the browser's command line",
	"Tethering":    "it binds ports on the runner's host",
	"Memory":       "it acts on the browser's processes, not on a page",
	"Extensions":   "it loads extensions from the runner's files",
	"FileSystem":   "it reads the browser's file systems",
	"PWA":          "it installs and launches apps on the runner's host",
	"Cast":         "it looks for devices on the network",
	"DeviceAccess": "it hands host devices to pages",
}

// decide applies the table to one command.
func decide(p *Policy, method string, params jsontext.Value) outcome {
	dom, cmd, _ := strings.Cut(method, ".")
	d, ok := table[dom]
	if !ok {
		if why, ok := refusedDomains[dom]; ok {
			return outcome{refuse: "the " + dom + " domain is refused: " + why}
		}
		return outcome{refuse: "the " + dom + " domain is not on the proxy's allowlist (docs/runner.md)"}
	}
	if why, ok := d.refused[cmd]; ok {
		return outcome{refuse: "refused: " + why}
	}
	var r rule
	if d.commands != nil {
		var ok bool
		if r, ok = d.commands[cmd]; !ok {
			return outcome{refuse: "not on the proxy's allowlist for the " + dom + " domain (docs/runner.md)"}
		}
	} else {
		r = d.rules[cmd]
	}
	if r == nil {
		return outcome{}
	}
	return r(p, params)
}

// invalid is the outcome of params a rule cannot read: the browser would
// refuse them too, but the proxy cannot tell what they would do.
func invalid(format string, args ...any) outcome {
	return outcome{refuse: fmt.Sprintf(format, args...), code: codeInvalidParams}
}

// decodeParams reads params (absent or null: no members) into v, matching
// member names exactly as Chromium does and ignoring the members v does
// not name.
func decodeParams(params jsontext.Value, v any) error {
	if len(params) == 0 || params.Kind() == 'n' {
		return nil
	}
	return jsonv2.Unmarshal(params, v, jsonv2.RejectUnknownMembers(false))
}

// navigateURL checks the member name, the URL of a page to load, with the
// navigate rule. optional lets it be absent or empty (Target.createTarget
// then opens about:blank).
func navigateURL(name string, optional bool) rule {
	return func(_ *Policy, params jsontext.Value) outcome {
		raw, present, err := stringMember(params, name)
		if err != nil {
			return invalid("%s must be a string", name)
		}
		if optional && (!present || raw == "") {
			return outcome{}
		}
		if problem := rpc.NavigateURLProblem(raw); problem != "" {
			return outcome{refuse: name + " " + problem}
		}
		return outcome{}
	}
}

// httpURL checks the member name, a URL the browser loads as a resource:
// absent, or http or https (and passing the navigate rule).
func httpURL(name string) rule {
	return func(_ *Policy, params jsontext.Value) outcome {
		raw, present, err := stringMember(params, name)
		if err != nil {
			return invalid("%s must be a string", name)
		}
		if !present {
			return outcome{}
		}
		if problem := rpc.NavigateURLProblem(raw); problem != "" {
			return outcome{refuse: name + " " + problem}
		}
		if u, err := url.Parse(raw); err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) {
			return outcome{refuse: name + " must be an http or https URL"}
		}
		return outcome{}
	}
}

// stringMember reads one string member of params; present is false when
// it is absent or null.
func stringMember(params jsontext.Value, name string) (s string, present bool, err error) {
	var m map[string]jsontext.Value
	if err := decodeParams(params, &m); err != nil {
		return "", false, err
	}
	v, ok := m[name]
	if !ok || v.Kind() == 'n' {
		return "", false, nil
	}
	err = jsonv2.Unmarshal(v, &s)
	return s, true, err
}

// Download behaviours of Browser.setDownloadBehavior and its deprecated
// Page twin.
const (
	behaviorDeny         = "deny"
	behaviorAllow        = "allow"
	behaviorAllowAndName = "allowAndName"
	behaviorDefault      = "default"
)

// downloadBehavior keeps downloads where the session keeps them: a
// download path becomes the session's downloads directory, and the
// browser's default behaviour (its own directory) becomes that too. When
// the session refuses downloads (launchOptions.acceptDownloads: false),
// every behaviour becomes deny: clients such as Playwright set a
// behaviour when they connect and fail if the call does.
func downloadBehavior(p *Policy, params jsontext.Value) outcome {
	var m map[string]jsontext.Value
	if err := decodeParams(params, &m); err != nil {
		return invalid("params must be an object")
	}
	var behavior string
	if err := jsonv2.Unmarshal(m["behavior"], &behavior); err != nil {
		return invalid("behavior must be a string")
	}
	switch behavior {
	case behaviorDeny:
		if _, ok := m["downloadPath"]; !ok {
			return outcome{}
		}
		delete(m, "downloadPath")
		return rewritten(m, "a download path with behavior deny is dropped")
	case behaviorAllow, behaviorAllowAndName, behaviorDefault:
	default:
		return invalid("behavior must be deny, allow, allowAndName or default")
	}
	if p.DownloadsDir == "" {
		delete(m, "downloadPath")
		m["behavior"] = jsontext.Value(`"` + behaviorDeny + `"`)
		return rewritten(m, "the session refuses downloads: behavior set to deny")
	}
	if behavior == behaviorDefault {
		m["behavior"] = jsontext.Value(`"` + behaviorAllow + `"`)
	}
	dir, err := jsonv2.Marshal(p.DownloadsDir)
	if err != nil {
		return outcome{refuse: "the session's downloads directory cannot be named"}
	}
	m["downloadPath"] = dir
	return rewritten(m, "downloads go to the session's downloads directory")
}

// fileInputFiles lets DOM.setFileInputFiles pick files from the session's
// downloads directory only: what the session's pages downloaded.
func fileInputFiles(p *Policy, params jsontext.Value) outcome {
	var m map[string]jsontext.Value
	if err := decodeParams(params, &m); err != nil {
		return invalid("params must be an object")
	}
	var files []string
	if err := jsonv2.Unmarshal(m["files"], &files); err != nil {
		return invalid("files must be an array of strings")
	}
	resolved, problem := p.downloadedFiles("files", files)
	if problem != "" {
		return outcome{refuse: problem}
	}
	if slices.Equal(files, resolved) {
		return outcome{}
	}
	m["files"], _ = jsonv2.Marshal(resolved)
	return rewritten(m, "files named by their resolved paths")
}

// dragFiles holds Input.dispatchDragEvent's data.files to the same rule
// as DOM.setFileInputFiles: a drop hands the page the files it names.
func dragFiles(p *Policy, params jsontext.Value) outcome {
	var m map[string]jsontext.Value
	if err := decodeParams(params, &m); err != nil {
		return invalid("params must be an object")
	}
	dv, ok := m["data"]
	if !ok || dv.Kind() == 'n' {
		return outcome{}
	}
	var data map[string]jsontext.Value
	if err := jsonv2.Unmarshal(dv, &data); err != nil {
		return invalid("data must be an object")
	}
	fv, ok := data["files"]
	if !ok || fv.Kind() == 'n' {
		return outcome{}
	}
	var files []string
	if err := jsonv2.Unmarshal(fv, &files); err != nil {
		return invalid("data.files must be an array of strings")
	}
	resolved, problem := p.downloadedFiles("data.files", files)
	if problem != "" {
		return outcome{refuse: problem}
	}
	if slices.Equal(files, resolved) {
		return outcome{}
	}
	data["files"], _ = jsonv2.Marshal(resolved)
	m["data"], _ = jsonv2.Marshal(data, jsonv2.Deterministic(true))
	return rewritten(m, "data.files named by their resolved paths")
}

// downloadedFiles resolves each of files (cleaned, symbolic links
// followed) and says what is wrong when one is not a regular file inside
// the session's downloads directory. The problem names the member and
// index, never the path a client sent.
func (p *Policy) downloadedFiles(member string, files []string) ([]string, string) {
	if len(files) == 0 {
		return files, ""
	}
	if p.DownloadsDir == "" {
		return nil, member + " must be empty: the session refuses downloads, and files are taken from its downloads directory only"
	}
	dir, err := filepath.EvalSymlinks(p.DownloadsDir)
	if err != nil {
		return nil, "the session's downloads directory cannot be read"
	}
	out := make([]string, len(files))
	for i, f := range files {
		bad := fmt.Sprintf("%s[%d] is not a file in the session's downloads directory", member, i)
		if !filepath.IsAbs(f) {
			return nil, fmt.Sprintf("%s[%d] must be an absolute path in the session's downloads directory", member, i)
		}
		res, err := filepath.EvalSymlinks(filepath.Clean(f))
		if err != nil {
			return nil, bad
		}
		rel, err := filepath.Rel(dir, res)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, bad
		}
		if fi, err := os.Stat(res); err != nil || !fi.Mode().IsRegular() {
			return nil, bad
		}
		out[i] = res
	}
	return out, ""
}

// createBrowserContext refuses what would take a new context's traffic
// around the egress gate (its own proxy) or relax its same-origin policy.
func createBrowserContext(_ *Policy, params jsontext.Value) outcome {
	var v struct {
		ProxyServer     *string  `json:"proxyServer"`
		ProxyBypassList *string  `json:"proxyBypassList"`
		Universal       []string `json:"originsWithUniversalNetworkAccess"`
	}
	if err := decodeParams(params, &v); err != nil {
		return invalid("params: %s", jsonError(err))
	}
	switch {
	case v.ProxyServer != nil && *v.ProxyServer != "":
		return outcome{refuse: "proxyServer is refused: a context's traffic goes through the session's egress proxy"}
	case v.ProxyBypassList != nil && *v.ProxyBypassList != "":
		return outcome{refuse: "proxyBypassList is refused: a context's traffic goes through the session's egress proxy"}
	case len(v.Universal) > 0:
		return outcome{refuse: "originsWithUniversalNetworkAccess is refused: it lifts the same-origin policy"}
	}
	return outcome{}
}

// tracingStart refuses a Perfetto config: Perfetto's configs can name a
// file for the trace, which the browser would write.
func tracingStart(_ *Policy, params jsontext.Value) outcome {
	var v struct {
		PerfettoConfig *string `json:"perfettoConfig"`
	}
	if err := decodeParams(params, &v); err != nil {
		return invalid("params: %s", jsonError(err))
	}
	if v.PerfettoConfig != nil && *v.PerfettoConfig != "" {
		return outcome{refuse: "perfettoConfig is refused: it can name a file the browser writes; use traceConfig"}
	}
	return outcome{}
}

// rewritten is the outcome of params m, changed.
func rewritten(m map[string]jsontext.Value, why string) outcome {
	b, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	if err != nil {
		return outcome{refuse: "the message could not be rewritten"}
	}
	return outcome{params: b, rewrote: why}
}
