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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// verdict is a Verdict with its message as text, for diffs.
type verdict struct {
	Action  Action
	Message string
	Method  string
	Reason  string
}

func forward(method string) verdict { return verdict{Action: Forward, Method: method} }

func refused(id, method, reason string) verdict {
	return verdict{Action: Refuse, Method: method, Reason: method + ": " + reason,
		Message: `{"id":` + id + `,"error":{"code":-32000,"message":"browserfleet: ` + method + `: ` + reason + `"}}`}
}

func invalidParams(method, reason string) verdict {
	return verdict{Action: Refuse, Method: method, Reason: method + ": " + reason,
		Message: `{"id":1,"error":{"code":-32602,"message":"browserfleet: ` + method + `: ` + reason + `"}}`}
}

func closed(reason string) verdict { return verdict{Action: Close, Reason: "browserfleet: " + reason} }

func rewrote(method, message, reason string) verdict {
	return verdict{Action: Rewrite, Method: method, Message: message, Reason: reason}
}

func TestCheck(t *testing.T) {
	// A scratch tree: the session's downloads, and beside it a canary
	// file a client must not hand to a page.
	scratch, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dl := filepath.Join(scratch, "downloads")
	outside := filepath.Join(scratch, "outside")
	for _, d := range []string{dl, outside, filepath.Join(dl, "sub")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	report := filepath.Join(dl, "report.pdf")
	canary := filepath.Join(outside, "canary.txt")
	for _, f := range []string{report, canary} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, canary, filepath.Join(dl, "escape.txt"))
	mustSymlink(t, report, filepath.Join(dl, "alias.pdf"))
	mustSymlink(t, outside, filepath.Join(dl, "out"))
	dlJSON := `"` + dl + `"`

	const (
		own       = "it opens the browser's own pages"
		notInDL   = "is not a file in the session's downloads directory"
		noProxy   = "a context's traffic goes through the session's egress proxy"
		endViaAPI = "refused: the browser is the session's: end the session through the API"
	)
	tests := []struct {
		name     string
		noDL     bool // the session refuses downloads
		msg      string
		want     verdict
		sameBody bool // a forwarded message goes as it came
	}{
		// Allowed as they come.
		{name: "Runtime.evaluate", msg: `{"id":1,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`, want: forward("Runtime.evaluate")},
		{name: "a command to a target's session", msg: `{"id":2,"sessionId":"S1","method":"DOM.getDocument"}`, want: forward("DOM.getDocument")},
		{name: "params null", msg: `{"id":1,"method":"Page.enable","params":null}`, want: forward("Page.enable")},
		{name: "navigate to http", msg: `{"id":1,"method":"Page.navigate","params":{"url":"http://127.0.0.1:8080/","referrer":"x"}}`, want: forward("Page.navigate")},
		{name: "navigate to data:", msg: `{"id":1,"method":"Page.navigate","params":{"url":"data:text/html,<p>x"}}`, want: forward("Page.navigate")},
		{name: "navigate to about:blank", msg: `{"id":1,"method":"Page.navigate","params":{"url":"about:blank"}}`, want: forward("Page.navigate")},
		{name: "createTarget about:blank", msg: `{"id":1,"method":"Target.createTarget","params":{"url":"about:blank"}}`, want: forward("Target.createTarget")},
		{name: "createTarget with no url", msg: `{"id":1,"method":"Target.createTarget","params":{"url":""}}`, want: forward("Target.createTarget")},
		{name: "createBrowserContext", msg: `{"id":1,"method":"Target.createBrowserContext","params":{"disposeOnDetach":true,"proxyServer":""}}`, want: forward("Target.createBrowserContext")},
		{name: "Browser.getVersion", msg: `{"id":1,"method":"Browser.getVersion"}`, want: forward("Browser.getVersion")},
		{name: "Storage.getCookies", msg: `{"id":1,"method":"Storage.getCookies","params":{}}`, want: forward("Storage.getCookies")},
		{name: "Fetch.continueRequest as is", msg: `{"id":1,"method":"Fetch.continueRequest","params":{"requestId":"r"}}`, want: forward("Fetch.continueRequest")},
		{name: "Fetch.continueRequest to https", msg: `{"id":1,"method":"Fetch.continueRequest","params":{"requestId":"r","url":"https://example.test/"}}`, want: forward("Fetch.continueRequest")},
		{name: "Tracing.start with categories", msg: `{"id":1,"method":"Tracing.start","params":{"transferMode":"ReturnAsStream","categories":"-*,devtools.timeline"}}`, want: forward("Tracing.start")},
		{name: "a file input from downloads", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + report + `"],"nodeId":3}}`, want: forward("DOM.setFileInputFiles")},
		{name: "a file input emptied", noDL: true, msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":[],"nodeId":3}}`, want: forward("DOM.setFileInputFiles")},
		{name: "a drop with no files", msg: `{"id":1,"method":"Input.dispatchDragEvent","params":{"type":"drop","x":1,"y":1,"data":{"items":[],"dragOperationsMask":1}}}`, want: forward("Input.dispatchDragEvent")},
		{name: "downloads denied", msg: `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"deny"}}`, want: forward("Browser.setDownloadBehavior")},

		// The navigate rule, worded as the navigate operation words it.
		{name: "navigate to file:", msg: `{"id":7,"method":"Page.navigate","params":{"url":"file:///etc/passwd"}}`,
			want: refused("7", "Page.navigate", "url must not be a file: URL: it would read the runner's files")},
		{name: "navigate to file: in a target's session", msg: `{"id":7,"method":"Page.navigate","params":{"url":"file:///etc/passwd"},"sessionId":"S1"}`,
			want: verdict{Action: Refuse, Method: "Page.navigate", Reason: "Page.navigate: url must not be a file: URL: it would read the runner's files",
				Message: `{"id":7,"sessionId":"S1","error":{"code":-32000,"message":"browserfleet: Page.navigate: url must not be a file: URL: it would read the runner's files"}}`}},
		{name: "navigate to an escaped file:", msg: `{"id":7,"method":"Page.navig\u0061te","params":{"url":"FILE:\u002f\u002f/etc/passwd"}}`,
			want: refused("7", "Page.navigate", "url must not be a file: URL: it would read the runner's files")},
		{name: "navigate to chrome:", msg: `{"id":1,"method":"Page.navigate","params":{"url":"chrome://version"}}`, want: refused("1", "Page.navigate", "url must not be a chrome: URL: "+own)},
		{name: "navigate to view-source:", msg: `{"id":1,"method":"Page.navigate","params":{"url":"view-source:http://127.0.0.1/"}}`, want: refused("1", "Page.navigate", "url must not be a view-source: URL: "+own)},
		{name: "navigate to javascript:", msg: `{"id":1,"method":"Page.navigate","params":{"url":"javascript:alert(1)"}}`, want: refused("1", "Page.navigate", "url must be an http, https or data URL, or about:blank")},
		{name: "navigate with no url", msg: `{"id":1,"method":"Page.navigate","params":{}}`, want: refused("1", "Page.navigate", "url is required")},
		{name: "navigate with a url not a string", msg: `{"id":1,"method":"Page.navigate","params":{"url":1}}`, want: invalidParams("Page.navigate", "url must be a string")},
		{name: "createTarget chrome:", msg: `{"id":1,"method":"Target.createTarget","params":{"url":"chrome://version"}}`, want: refused("1", "Target.createTarget", "url must not be a chrome: URL: "+own)},
		{name: "createTarget devtools:", msg: `{"id":1,"method":"Target.createTarget","params":{"url":"devtools://devtools/bundled/inspector.html"}}`, want: refused("1", "Target.createTarget", "url must not be a devtools: URL: "+own)},
		{name: "createTarget chrome-extension:", msg: `{"id":1,"method":"Target.createTarget","params":{"url":"chrome-extension://abc/x.html"}}`, want: refused("1", "Target.createTarget", "url must not be a chrome-extension: URL: "+own)},
		{name: "createTarget file:", msg: `{"id":1,"method":"Target.createTarget","params":{"url":"file:///"}}`, want: refused("1", "Target.createTarget", "url must not be a file: URL: it would read the runner's files")},

		// Resources the browser is told to load: http and https only.
		{name: "loadNetworkResource file:", msg: `{"id":1,"method":"Network.loadNetworkResource","params":{"url":"file:///etc/passwd","options":{}}}`,
			want: refused("1", "Network.loadNetworkResource", "url must not be a file: URL: it would read the runner's files")},
		{name: "loadNetworkResource data:", msg: `{"id":1,"method":"Network.loadNetworkResource","params":{"url":"data:,x"}}`, want: refused("1", "Network.loadNetworkResource", "url must be an http or https URL")},
		{name: "loadNetworkResource http", msg: `{"id":1,"method":"Network.loadNetworkResource","params":{"url":"http://127.0.0.1/a.map"}}`, want: forward("Network.loadNetworkResource")},
		{name: "continueRequest to chrome:", msg: `{"id":1,"method":"Fetch.continueRequest","params":{"requestId":"r","url":"chrome://settings"}}`, want: refused("1", "Fetch.continueRequest", "url must not be a chrome: URL: "+own)},
		{name: "continueRequest to about:blank", msg: `{"id":1,"method":"Fetch.continueRequest","params":{"requestId":"r","url":"about:blank"}}`, want: refused("1", "Fetch.continueRequest", "url must be an http or https URL")},

		// Around the egress gate, or past this proxy.
		{name: "a context with its own proxy", msg: `{"id":1,"method":"Target.createBrowserContext","params":{"proxyServer":"http://127.0.0.1:3128"}}`, want: refused("1", "Target.createBrowserContext", "proxyServer is refused: "+noProxy)},
		{name: "a context with a proxy bypass", msg: `{"id":1,"method":"Target.createBrowserContext","params":{"proxyBypassList":"<-loopback>"}}`, want: refused("1", "Target.createBrowserContext", "proxyBypassList is refused: "+noProxy)},
		{name: "a context without the same-origin policy", msg: `{"id":1,"method":"Target.createBrowserContext","params":{"originsWithUniversalNetworkAccess":["http://127.0.0.1"]}}`,
			want: refused("1", "Target.createBrowserContext", "originsWithUniversalNetworkAccess is refused: it lifts the same-origin policy")},
		{name: "a context with a proxy of the wrong type", msg: `{"id":1,"method":"Target.createBrowserContext","params":{"proxyServer":1}}`, want: invalidParams("Target.createBrowserContext", "params: member proxyServer has the wrong type")},
		{name: "sendMessageToTarget", msg: `{"id":1,"method":"Target.sendMessageToTarget","params":{"message":"{}","sessionId":"S"}}`,
			want: refused("1", "Target.sendMessageToTarget", "refused: it would carry a message past this proxy's checks; attach with flatten: true and send with sessionId")},
		{name: "exposeDevToolsProtocol", msg: `{"id":1,"method":"Target.exposeDevToolsProtocol","params":{"targetId":"T"}}`,
			want: refused("1", "Target.exposeDevToolsProtocol", "refused: it would give a page's script the DevTools protocol, past this proxy's checks")},
		{name: "setRemoteLocations", msg: `{"id":1,"method":"Target.setRemoteLocations","params":{"locations":[{"host":"127.0.0.1","port":9222}]}}`,
			want: refused("1", "Target.setRemoteLocations", "refused: it would make the browser connect to other hosts")},
		{name: "a Target command not listed", msg: `{"id":1,"method":"Target.somethingNew"}`,
			want: refused("1", "Target.somethingNew", `not on the proxy's allowlist for the Target domain (docs/runner.md)`)},
		{name: "a Perfetto trace config", msg: `{"id":1,"method":"Tracing.start","params":{"perfettoConfig":"AAAA"}}`,
			want: refused("1", "Tracing.start", "perfettoConfig is refused: it can name a file the browser writes; use traceConfig")},

		// The browser is the session's.
		{name: "Browser.close", msg: `{"id":1,"method":"Browser.close"}`, want: refused("1", "Browser.close", endViaAPI)},
		{name: "Browser.crash", msg: `{"id":1,"method":"Browser.crash"}`, want: refused("1", "Browser.crash", endViaAPI)},
		{name: "Browser.getBrowserCommandLine", msg: `{"id":1,"method":"Browser.getBrowserCommandLine"}`, want: refused("1", "Browser.getBrowserCommandLine", "refused: the browser's command line is the runner's")},
		{name: "a Browser command not listed", msg: `{"id":1,"method":"Browser.getHistograms"}`,
			want: refused("1", "Browser.getHistograms", `not on the proxy's allowlist for the Browser domain (docs/runner.md)`)},
		{name: "Storage.overrideQuotaForOrigin", msg: `{"id":1,"method":"Storage.overrideQuotaForOrigin","params":{"origin":"http://127.0.0.1","quotaSize":1e12}}`,
			want: refused("1", "Storage.overrideQuotaForOrigin", "refused: it would let a site fill the runner's disk past the browser's quota")},

		// Domains off the allowlist.
		{name: "SystemInfo", msg: `{"id":1,"method":"SystemInfo.getInfo"}`, want: refused("1", "SystemInfo.getInfo", "the SystemInfo domain is refused: it reports the host's hardware, processes and the browser's command line")},
		{name: "Tethering", msg: `{"id":1,"method":"Tethering.bind","params":{"port":9000}}`, want: refused("1", "Tethering.bind", "the Tethering domain is refused: it binds ports on the runner's host")},
		{name: "Extensions", msg: `{"id":1,"method":"Extensions.loadUnpacked","params":{"path":"/x"}}`, want: refused("1", "Extensions.loadUnpacked", "the Extensions domain is refused: it loads extensions from the runner's files")},
		{name: "an unknown domain", msg: `{"id":1,"method":"Schema.getDomains"}`, want: refused("1", "Schema.getDomains", `the Schema domain is not on the proxy's allowlist (docs/runner.md)`)},
		{name: "a domain in the wrong case", msg: `{"id":1,"method":"page.navigate","params":{"url":"file:///"}}`, want: refused("1", "page.navigate", `the page domain is not on the proxy's allowlist (docs/runner.md)`)},

		// Downloads go where the session keeps them.
		{name: "a client's download path", msg: `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"allowAndName","browserContextId":"C","downloadPath":"/tmp/elsewhere","eventsEnabled":true}}`,
			want: rewrote("Browser.setDownloadBehavior", `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"allowAndName","browserContextId":"C","downloadPath":`+dlJSON+`,"eventsEnabled":true}}`, "downloads go to the session's downloads directory")},
		{name: "the browser's default download path", msg: `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"default"}}`,
			want: rewrote("Browser.setDownloadBehavior", `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"allow","downloadPath":`+dlJSON+`}}`, "downloads go to the session's downloads directory")},
		{name: "the deprecated Page twin", msg: `{"id":1,"sessionId":"S","method":"Page.setDownloadBehavior","params":{"behavior":"allow","downloadPath":"/root"}}`,
			want: rewrote("Page.setDownloadBehavior", `{"id":1,"method":"Page.setDownloadBehavior","params":{"behavior":"allow","downloadPath":`+dlJSON+`},"sessionId":"S"}`, "downloads go to the session's downloads directory")},
		{name: "downloads when the session refuses them", noDL: true, msg: `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"allowAndName","downloadPath":"/tmp/x","eventsEnabled":true}}`,
			want: rewrote("Browser.setDownloadBehavior", `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"deny","eventsEnabled":true}}`, "the session refuses downloads: behavior set to deny")},
		{name: "a path with deny", msg: `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"deny","downloadPath":"/tmp/x"}}`,
			want: rewrote("Browser.setDownloadBehavior", `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"deny"}}`, "a download path with behavior deny is dropped")},
		{name: "an unknown behaviour", msg: `{"id":1,"method":"Browser.setDownloadBehavior","params":{"behavior":"allowAll","downloadPath":"/tmp/x"}}`,
			want: invalidParams("Browser.setDownloadBehavior", "behavior must be deny, allow, allowAndName or default")},

		// Files handed to a page: from the downloads directory only.
		{name: "a file input through a link inside", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + filepath.Join(dl, "alias.pdf") + `"],"backendNodeId":3}}`,
			want: rewrote("DOM.setFileInputFiles", `{"id":1,"method":"DOM.setFileInputFiles","params":{"backendNodeId":3,"files":["`+report+`"]}}`, "files named by their resolved paths")},
		{name: "a file input climbing out", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + report + `","` + dl + `/sub/../../outside/canary.txt"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[1] "+notInDL)},
		{name: "a file input through a link out", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + filepath.Join(dl, "escape.txt") + `"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[0] "+notInDL)},
		{name: "a file input through a linked directory", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + filepath.Join(dl, "out", "canary.txt") + `"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[0] "+notInDL)},
		{name: "a file input of the canary", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + canary + `"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[0] "+notInDL)},
		{name: "a file input of a directory", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + filepath.Join(dl, "sub") + `"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[0] "+notInDL)},
		{name: "a file input of the directory itself", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + dl + `/"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[0] "+notInDL)},
		{name: "a file input of a missing file", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + filepath.Join(dl, "none.pdf") + `"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[0] "+notInDL)},
		{name: "a file input by a relative path", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["report.pdf"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files[0] must be an absolute path in the session's downloads directory")},
		{name: "a file input when the session refuses downloads", noDL: true, msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"files":["` + report + `"],"nodeId":3}}`,
			want: refused("1", "DOM.setFileInputFiles", "files must be empty: the session refuses downloads, and files are taken from its downloads directory only")},
		{name: "a file input with no files", msg: `{"id":1,"method":"DOM.setFileInputFiles","params":{"nodeId":3}}`, want: invalidParams("DOM.setFileInputFiles", "files must be an array of strings")},
		{name: "a drop of the canary", msg: `{"id":1,"method":"Input.dispatchDragEvent","params":{"type":"drop","x":1,"y":1,"data":{"items":[],"files":["` + canary + `"],"dragOperationsMask":1}}}`,
			want: refused("1", "Input.dispatchDragEvent", "data.files[0] "+notInDL)},
		{name: "a drop from downloads", msg: `{"id":1,"method":"Input.dispatchDragEvent","params":{"type":"drop","x":1,"y":1,"data":{"items":[],"files":["` + report + `"],"dragOperationsMask":1}}}`,
			want: forward("Input.dispatchDragEvent")},

		// Messages this proxy and the browser could read two ways, or
		// not at all.
		{name: "not JSON", msg: `{"id":1,"method":`, want: closed("the message is not valid JSON")},
		{name: "a duplicate member", msg: `{"id":1,"method":"Runtime.evaluate","method":"Page.navigate","params":{"url":"file:///"}}`, want: closed("the message is not valid JSON")},
		{name: "a duplicate member in params", msg: `{"id":1,"method":"Page.navigate","params":{"url":"http://127.0.0.1/","url":"file:///"}}`, want: closed("the message is not valid JSON")},
		{name: "invalid UTF-8", msg: "{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{\"expression\":\"\xff\"}}", want: closed("the message is not valid JSON")},
		{name: "not an object", msg: `[1]`, want: closed("a message must be a JSON object with an integer id")},
		{name: "no id", msg: `{"method":"Runtime.evaluate"}`, want: closed("a message must be a JSON object with an integer id")},
		{name: "an id that is no integer", msg: `{"id":"1","method":"Runtime.evaluate"}`, want: closed("a message must be a JSON object with an integer id")},
		{name: "a member Chromium does not read", msg: `{"id":1,"method":"Runtime.evaluate","Method":"Page.navigate"}`,
			want: verdict{Action: Refuse, Reason: `a message has an integer id, a method, and optionally params (an object) and sessionId (a string): unknown member Method`,
				Message: `{"id":1,"error":{"code":-32600,"message":"browserfleet: a message has an integer id, a method, and optionally params (an object) and sessionId (a string): unknown member Method"}}`}},
		{name: "a method that is no Domain.command", msg: `{"id":1,"method":"Page.navigate.x"}`,
			want: verdict{Action: Refuse, Reason: "method must be Domain.command", Message: `{"id":1,"error":{"code":-32600,"message":"browserfleet: method must be Domain.command"}}`}},
		{name: "params not an object", msg: `{"id":1,"method":"Page.navigate","params":["file:///"]}`, want: invalidParams("Page.navigate", "params must be an object")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Policy{DownloadsDir: dl}
			if tt.noDL {
				p = Policy{}
			}
			f, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			c := f.NewConn()
			for _, sid := range []string{"S", "S1"} {
				c.Observe([]byte(`{"method":"Target.attachedToTarget","params":{"sessionId":"` + sid + `","targetInfo":{"targetId":"T","type":"page","url":"about:blank"},"waitingForDebugger":false}}`))
			}
			v := c.Check([]byte(tt.msg))
			got := verdict{Action: v.Action, Message: string(v.Message), Method: v.Method, Reason: v.Reason}
			want := tt.want
			if want.Action == Forward {
				// A forwarded message goes byte for byte.
				want.Message = tt.msg
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Check(%s) (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
	// The checks read the scratch tree only; the canary is untouched.
	if b, err := os.ReadFile(canary); err != nil || string(b) != "x" {
		t.Errorf("the canary changed: %q, %v", b, err)
	}
}

// A message to a target session passes when the browser attached that
// session on the connection, to a target of the web.
func TestSessions(t *testing.T) {
	attached := func(sid, typ, url string) string {
		return `{"method":"Target.attachedToTarget","params":{"sessionId":"` + sid + `","targetInfo":{"targetId":"T` + sid + `","type":"` + typ + `","title":"x","url":"` + url + `","attached":true},"waitingForDebugger":true}}`
	}
	events := []string{
		attached("page", "page", "http://127.0.0.1:8080/"),
		attached("blank", "page", "about:blank"),
		attached("new", "page", ""),
		attached("frame", "iframe", "https://127.0.0.1/frame"),
		attached("worker", "worker", "blob:http://127.0.0.1:8080/0f1e"),
		attached("opaque", "worker", "blob:null/0f1e"),
		attached("browser", "browser", ""),
		attached("omnibox", "browser_ui", "chrome://omnibox-popup.top-chrome/"),
		attached("webui", "page", "chrome://settings/"),
		attached("webuiblob", "worker", "blob:chrome://omnibox-popup.top-chrome/0f1e"),
		attached("devtools", "other", "devtools://devtools/bundled/inspector.html"),
		attached("gone", "page", "http://127.0.0.1/"),
		`{"method":"Target.detachedFromTarget","params":{"sessionId":"gone","targetId":"Tgone"}}`,
		// Not an announcement: nothing recorded.
		`{"id":3,"result":{"sessionId":"reply"}}`,
	}
	c := mustNew(t).NewConn()
	for _, ev := range events {
		if !Watched([]byte(ev)[:min(len(ev), WatchBytes)]) && strings.Contains(ev, "Target.") {
			t.Fatalf("the proxy would not show Observe %s", ev)
		}
		c.Observe([]byte(ev))
	}
	const (
		unknown = "sessionId names no session the browser attached on this connection"
		own     = "the session's target is one of the browser's own pages, which take no commands through this proxy"
	)
	tests := []struct {
		sid, method string
		want        string // "" passes
	}{
		{"page", "Runtime.evaluate", ""},
		{"blank", "Runtime.evaluate", ""},
		{"new", "Page.enable", ""},
		{"frame", "Runtime.evaluate", ""},
		{"worker", "Runtime.evaluate", ""},
		{"opaque", "Runtime.evaluate", ""},
		{"browser", "Target.getTargets", ""},
		{"omnibox", "Runtime.evaluate", own},
		{"omnibox", "Runtime.runIfWaitingForDebugger", ""},
		{"omnibox", "Target.setAutoAttach", ""},
		{"omnibox", "Page.navigate", own},
		{"webui", "Page.enable", own},
		{"webuiblob", "Runtime.evaluate", own},
		{"devtools", "Runtime.evaluate", own},
		{"gone", "Runtime.evaluate", unknown},
		{"reply", "Runtime.evaluate", unknown},
		{"never", "Runtime.evaluate", unknown},
	}
	for _, tt := range tests {
		v := c.Check([]byte(`{"id":1,"sessionId":"` + tt.sid + `","method":"` + tt.method + `"}`))
		got := ""
		if v.Action == Refuse {
			got = strings.TrimPrefix(v.Reason, tt.method+": ")
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s to session %s (-want +got):\n%s", tt.method, tt.sid, diff)
		}
	}
	// Sessions are the connection's own.
	if v := mustNew(t).NewConn().Check([]byte(`{"id":1,"sessionId":"page","method":"Runtime.evaluate"}`)); v.Action != Refuse {
		t.Errorf("another connection's session passed: %s", v.Action)
	}
	// A browser's message of another kind is not watched.
	for _, head := range []string{`{"id":1,"result":{}}`, `{"method":"Page.frameNavigated",`, `{"method":"Target.attachedToTargetX"`} {
		if Watched([]byte(head)) {
			t.Errorf("%s is watched", head)
		}
	}
}

func mustNew(t *testing.T) *Filter {
	t.Helper()
	f, err := New(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCloseVerdicts(t *testing.T) {
	tests := []struct {
		name string
		got  Verdict
		want Verdict
	}{
		{"binary", CheckBinary(), Verdict{Action: Close, Reason: "browserfleet: CDP messages are text"}},
		{"too large", TooLarge(), Verdict{Action: Close, Reason: "browserfleet: a message may be 16 MiB at most"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		// A close reason fits a WebSocket close frame.
		if n := len(tt.got.Reason); n > 123 {
			t.Errorf("%s: the close reason is %d bytes", tt.name, n)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		dir     string
		wantErr string
	}{
		{dir: ""},
		{dir: "/data/downloads/x"},
		{dir: "downloads", wantErr: `cdpfilter: the downloads directory "downloads" is not a clean absolute path below /`},
		{dir: "/data/../x", wantErr: `cdpfilter: the downloads directory "/data/../x" is not a clean absolute path below /`},
		{dir: "/", wantErr: `cdpfilter: the downloads directory "/" is not a clean absolute path below /`},
	}
	for _, tt := range tests {
		_, err := New(Policy{DownloadsDir: tt.dir})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if diff := cmp.Diff(tt.wantErr, got); diff != "" {
			t.Errorf("New(%q) (-want +got):\n%s", tt.dir, diff)
		}
	}
}

// Every domain of the allowlist is spelled as Chromium spells it, and no
// domain is both allowed and refused.
func TestTable(t *testing.T) {
	for name, d := range table {
		if !identifier(name) || strings.ToUpper(name[:1]) != name[:1] {
			t.Errorf("domain %q is not a domain name", name)
		}
		if _, ok := refusedDomains[name]; ok {
			t.Errorf("domain %s is both allowed and refused", name)
		}
		if d.commands != nil && d.rules != nil {
			t.Errorf("domain %s has rules outside its command list", name)
		}
		for cmd := range d.refused {
			if _, ok := d.commands[cmd]; ok {
				t.Errorf("%s.%s is both allowed and refused", name, cmd)
			}
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
