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

package localkubelet

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// poolSize is how many pod addresses a block holds: .1 to .254.
const poolSize = 254

// ipPool hands out the addresses of one 127.A.B.0/24 block. Each Kubelet
// picks its block at random, so that test processes running side by side
// rarely share one. Addresses go out in turn, and a freed one comes back
// only after all the others went out, so that a new pod does not answer on
// an address a client still holds for an old one.
type ipPool struct {
	a, b int

	mu   sync.Mutex
	next int
	used [poolSize + 1]bool
}

func newIPPool() *ipPool {
	return &ipPool{a: 2 + rand.IntN(253), b: rand.IntN(256), next: 1}
}

func (p *ipPool) cidr() string { return fmt.Sprintf("127.%d.%d.0/24", p.a, p.b) }

func (p *ipPool) addr(n int) string { return fmt.Sprintf("127.%d.%d.%d", p.a, p.b, n) }

// get returns a free address.
func (p *ipPool) get() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range poolSize {
		n := p.next
		p.next = n%poolSize + 1
		if !p.used[n] {
			p.used[n] = true
			return p.addr(n), nil
		}
	}
	return "", fmt.Errorf("all %d addresses of %s are in use", poolSize, p.cidr())
}

// put frees an address that get returned.
func (p *ipPool) put(ip string) {
	var a, b, n int
	if _, err := fmt.Sscanf(ip, "127.%d.%d.%d", &a, &b, &n); err != nil || a != p.a || b != p.b || n < 1 || n > poolSize {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used[n] = false
}
