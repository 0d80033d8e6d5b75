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
	"sync"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// fifo runs the session's page operations one at a time, in the order they
// arrive. Two engines acting on one page at once would interleave their
// snapshots and clicks, and a caller that sent navigate then act expects
// act to see the navigated page. A sync.Mutex does not promise an order;
// this queue does.
//
// The line is bounded: with limit operations waiting, another is refused
// at once (errBusy), so that a caller cannot pile up goroutines and
// connections in the runner. A limit of 0 or less means
// DefaultMaxQueuedOperations.
type fifo struct {
	limit   int
	mu      sync.Mutex
	busy    bool
	waiting []chan struct{}
}

// DefaultMaxQueuedOperations is how many operations may wait for their turn
// on a session's page unless the runner's --max-queued-operations says
// otherwise.
const DefaultMaxQueuedOperations = 16

// errBusy refuses an operation that finds the line full.
var errBusy = rpc.Errorf(rpc.CodeSessionBusy, "the session is busy: earlier operations fill its queue; retry when they have finished")

func (q *fifo) max() int {
	if q.limit <= 0 {
		return DefaultMaxQueuedOperations
	}
	return q.limit
}

// full says whether an operation arriving now would be refused.
func (q *fifo) full() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.busy && len(q.waiting) >= q.max()
}

// acquire waits for the operations that arrived earlier, then returns the
// function that lets the next one run. It returns ctx's error, and holds
// nothing, if ctx ends first, and errBusy if the line is full.
func (q *fifo) acquire(ctx context.Context) (release func(), err error) {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return q.releaseOnce(), nil
	}
	if len(q.waiting) >= q.max() {
		q.mu.Unlock()
		return nil, errBusy
	}
	turn := make(chan struct{})
	q.waiting = append(q.waiting, turn)
	q.mu.Unlock()

	select {
	case <-turn:
		return q.releaseOnce(), nil
	case <-ctx.Done():
		q.mu.Lock()
		for i, t := range q.waiting {
			if t == turn {
				q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
				q.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		q.mu.Unlock()
		// Our turn came as ctx ended: pass it on.
		q.release()
		return nil, ctx.Err()
	}
}

func (q *fifo) releaseOnce() func() {
	var once sync.Once
	return func() { once.Do(q.release) }
}

// release hands the turn to the longest waiting operation, if any.
func (q *fifo) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.busy = false
		return
	}
	next := q.waiting[0]
	q.waiting = q.waiting[1:]
	close(next)
}

// pending is how many operations wait for their turn.
func (q *fifo) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// ahead is how many operations run or wait before one that arrives now.
func (q *fifo) ahead() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.busy {
		return 0
	}
	return 1 + len(q.waiting)
}
