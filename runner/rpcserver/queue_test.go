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

package rpcserver

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
)

func TestFIFO(t *testing.T) {
	var q fifo
	first, err := q.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 1; i <= 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := q.acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			release()
		}()
		// Arrival order is what the queue promises: let each one queue
		// before the next arrives.
		runnertest.WaitFor(t, "the waiter to queue", func() bool { return q.pending() == i })
	}
	// A waiter that gives up leaves the line without holding it up.
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := q.acquire(ctx)
		gaveUp <- err
	}()
	runnertest.WaitFor(t, "the impatient waiter to queue", func() bool { return q.pending() == 6 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire after cancel = %v", err)
	}
	runnertest.Want(t, "ahead", q.ahead(), 6)
	first()
	first() // releasing twice is harmless
	wg.Wait()
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	runnertest.Want(t, "ahead when idle", q.ahead(), 0)
}

func TestFIFOBound(t *testing.T) {
	q := fifo{limit: 1}
	first, err := q.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	runnertest.Want(t, "full with none waiting", q.full(), false)
	waiter := make(chan error, 1)
	go func() {
		release, err := q.acquire(context.Background())
		if err == nil {
			release()
		}
		waiter <- err
	}()
	runnertest.WaitFor(t, "the waiter to queue", func() bool { return q.pending() == 1 })
	runnertest.Want(t, "full with one waiting", q.full(), true)
	if _, err := q.acquire(context.Background()); !errors.Is(err, errBusy) {
		t.Fatalf("acquire beyond the bound = %v, want errBusy", err)
	}
	first()
	if err := <-waiter; err != nil {
		t.Fatalf("the waiter within the bound: %v", err)
	}
	runnertest.Want(t, "full when idle", q.full(), false)
}
