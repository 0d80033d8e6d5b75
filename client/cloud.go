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
	"encoding/json"
	"time"
)

// CloudBrowserLaunchOptions say where the service is and what session
// LaunchCloudBrowser starts there (the fields of POST /v1/sessions/start).
type CloudBrowserLaunchOptions struct {
	// APIURL is the service origin without /v1; empty is
	// $BROWSERFLEET_API_URL.
	APIURL string
	// APIKey is the project's service API key; empty is
	// $BROWSERFLEET_API_KEY.
	APIKey string
	// ModelName is the session's default model; an instance's Model is
	// sent with each call and takes its place.
	ModelName string
	// BrowserSettings configure the browser itself.
	BrowserSettings *CloudBrowserSettings
	// Proxies asks for the service's proxy (ProxiesEnabled) or lists
	// proxies; nil is none.
	Proxies *CloudProxies
	// Region is where the session runs, where the service has regions.
	Region string
	// Timeout is the session's lifetime; zero is the service's default.
	Timeout time.Duration
	// KeepAlive keeps the session running when its clients disconnect.
	KeepAlive bool
	// UserMetadata is stored with the session and listed by it.
	UserMetadata map[string]json.RawMessage
}

// CloudBrowserSettings are the session's browserSettings.
type CloudBrowserSettings struct {
	BlockAds      bool
	SolveCaptchas bool
	Viewport      *Viewport
	// Built by the cloud piece: the rest of browserSettings.
}

// CloudProxies is the session's proxies: true, or a list.
type CloudProxies struct {
	Enabled bool
	// Built by the cloud piece: the list form.
}

// CloudBrowserConnectOptions say which running session ConnectCloudBrowser
// attaches to.
type CloudBrowserConnectOptions struct {
	// APIURL and APIKey are as in CloudBrowserLaunchOptions.
	APIURL string
	APIKey string
	// SessionID is the session's id, as POST /v1/sessions/start returned
	// it. Required.
	SessionID string
}

// LaunchCloudBrowser starts a session on the service and returns its
// handle; its Close ends the session.
func LaunchCloudBrowser(ctx context.Context, opts CloudBrowserLaunchOptions) (*Browser, error) {
	return nil, errUnbuilt
}

// ConnectCloudBrowser attaches to a running session of the service; its
// Close disconnects and leaves the session running.
func ConnectCloudBrowser(ctx context.Context, opts CloudBrowserConnectOptions) (*Browser, error) {
	return nil, errUnbuilt
}
