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
	"sync"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hub turns the BrowserSession informer's events into wake-ups for the
// requests waiting on one session. One informer serves every waiter, so a
// thousand concurrent starts cost no more API-server watches than one, and
// nothing polls.
type hub struct {
	mu      sync.Mutex
	waiters map[types.NamespacedName]map[chan struct{}]struct{}
}

func newHub() *hub {
	return &hub{waiters: map[types.NamespacedName]map[chan struct{}]struct{}{}}
}

// subscribe returns a channel that receives a value whenever the session key
// changes (added, updated, deleted). Its buffer of one coalesces bursts: the
// waiter re-reads the cache anyway, which already holds the latest state when
// the event is delivered. Call cancel when done.
func (h *hub) subscribe(key types.NamespacedName) (ch <-chan struct{}, cancel func()) {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiters[key] == nil {
		h.waiters[key] = map[chan struct{}]struct{}{}
	}
	h.waiters[key][c] = struct{}{}
	return c, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.waiters[key], c)
		if len(h.waiters[key]) == 0 {
			delete(h.waiters, key)
		}
	}
}

// notify wakes the waiters of obj's session without blocking the informer.
func (h *hub) notify(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	key := client.ObjectKeyFromObject(o)
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.waiters[key] {
		select {
		case c <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// handler is the informer event handler.
func (h *hub) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    h.notify,
		UpdateFunc: func(_, obj any) { h.notify(obj) },
		DeleteFunc: h.notify,
	}
}
