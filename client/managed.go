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
	"os"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/gateway"
)

// managedServices are the service's managed services a local instance
// uses: the server-side cache and the model gateway, both reached with the
// project's key. nil fields: the instance has no APIKey (or no service
// origin), and its calls report DISABLED and need a model of their own.
type managedServices struct {
	cache   cache.Store
	gateway *gateway.Endpoint
}

// localServices finds a local instance's managed services: its APIKey and
// APIURL, each else its environment variable. It is the one home of that
// rule; an instance with neither uses none, and an APIURL that is not a
// service origin is refused naming the field.
func localServices(cfg *instanceConfig) (*managedServices, error) {
	key, origin := cfg.apiKey, cfg.apiURL
	if key == "" {
		key = os.Getenv(EnvAPIKey)
	}
	if origin == "" {
		origin = os.Getenv(EnvAPIURL)
	}
	if key == "" || origin == "" {
		return &managedServices{}, nil
	}
	base, err := serviceOrigin(origin)
	if err != nil {
		return nil, err
	}
	c, err := cache.NewClient(cache.ClientOptions{BaseURL: base, APIKey: key})
	if err != nil {
		return nil, invalid("CreateOptions.APIURL", "%s", err.Error())
	}
	gw, err := gateway.NewProjectEndpoint(base, key, nil)
	if err != nil {
		return nil, invalid("CreateOptions.APIURL", "%s", err.Error())
	}
	return &managedServices{cache: c, gateway: gw}, nil
}

// setting is the cache setting of a local call: on only when the call or
// the instance turns it on and the instance has the service's cache.
// Without a lookup the call reports DISABLED; a local instance does not
// see the project's default, so nothing turns it on but the caller.
func (m *managedServices) setting(c *Caching) *cache.Setting {
	if m.cache == nil || !c.Enabled() {
		return nil
	}
	t := int64(c.Threshold())
	if t <= 0 {
		t = cache.DefaultThreshold
	}
	return &cache.Setting{Threshold: t}
}
