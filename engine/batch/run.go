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

package batch

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// run is one batch: a goja runtime, which only the goroutine of Run
// touches (goja is not safe for concurrent use), and the queue of the
// operations the script called. The operations run one at a time, each on
// a goroutine of its own that hands its outcome back through done; the
// loop (await) settles its promise on the script's goroutine, where goja
// then runs the script's continuations.
type run struct {
	ctx    context.Context
	host   Host
	call   Call
	limits Limits
	rt     *goja.Runtime

	// opCtx is the operations' context: ctx's, cancelled too when an
	// operation outlives the batch by its grace.
	opCtx     context.Context
	cancelOps context.CancelCauseFunc

	// halted is closed, with reason set, when the batch must stop: the
	// deadline passed, ctx ended, or the heap watchdog fired.
	halted   chan struct{}
	haltOnce sync.Once
	reason   error

	queue   []*job
	running *job
	done    chan jobDone
	// started counts the operations the script called (queued or run).
	started int

	// Touched only by the operations, which run one after another
	// (each started after the previous one's outcome was received).
	active string
	usage  GroupUsage

	// The script's side, touched on Run's goroutine only.
	js *bindings
}

// job is one operation the script called.
type job struct {
	name string
	// do runs off the script's goroutine.
	do func(ctx context.Context) (any, error)
	// toJS turns do's value into the promise's, on the script's
	// goroutine.
	toJS            func(v any) (goja.Value, error)
	resolve, reject func(any) error
}

type jobDone struct {
	j   *job
	v   any
	err error
}

func newRun(ctx context.Context, host Host, call Call) (*run, error) {
	l := call.Limits
	if l.MaxOperations <= 0 {
		l.MaxOperations = DefaultMaxOperations
	}
	if l.Grace <= 0 {
		l.Grace = DefaultGrace
	}
	if l.HeapSampleInterval <= 0 {
		l.HeapSampleInterval = DefaultHeapSampleInterval
	}
	if call.Timeout == 0 {
		call.Timeout = DefaultTimeout
	}
	r := &run{
		ctx: ctx, host: host, call: call, limits: l,
		rt:     goja.New(),
		halted: make(chan struct{}),
		done:   make(chan jobDone, 1),
		active: call.Active,
	}
	r.rt.SetMaxCallStackSize(MaxCallStackSize)
	r.opCtx, r.cancelOps = context.WithCancelCause(ctx)
	js, err := newBindings(r)
	if err != nil {
		return nil, err
	}
	r.js = js
	return r, nil
}

// halt stops the batch for reason: the script is interrupted where it
// runs, and no operation starts from now on.
func (r *run) halt(reason error) {
	r.haltOnce.Do(func() {
		r.reason = reason
		close(r.halted)
		r.rt.Interrupt(reason)
	})
}

func (r *run) isHalted() bool {
	select {
	case <-r.halted:
		return true
	default:
		return false
	}
}

// run runs the batch; deadline fires when its timeout has passed (Run's
// timer, or a test's channel).
func (r *run) run(deadline <-chan time.Time) (*Result, error) {
	defer r.cancelOps(nil)
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-deadline:
			r.halt(fmt.Errorf("%w of %v: no operation starts after it", ErrDeadline, r.call.Timeout))
		case <-finished:
		}
	}()
	stopCtx := context.AfterFunc(r.ctx, func() { r.halt(context.Cause(r.ctx)) })
	defer stopCtx()
	if r.limits.MaxHeapGrowth > 0 {
		defer r.watchHeap()()
	}

	value, err := r.js.start()
	if err == nil {
		value, err = r.await(value)
	}
	var out []byte
	if err == nil {
		out, err = r.js.toJSON(value)
	}
	// Whether the script's outcome came of a halt; a halt while an
	// operation drains does not change it.
	halted := r.isHalted()
	// The batch is over: what is queued never starts, what runs may
	// finish.
	r.drain()
	if err != nil {
		if halted && !errors.Is(err, r.reason) {
			// The interrupt surfaced as something else (an
			// exception thrown from the interrupted code): the
			// reason is what the caller must see.
			err = r.reason
		}
		return nil, err
	}
	return &Result{Value: out, Active: r.active, Usage: r.usage, Operations: r.started}, nil
}

// await runs the loop until value, when it is a promise, settles.
func (r *run) await(value goja.Value) (goja.Value, error) {
	p, ok := value.Export().(*goja.Promise)
	if !ok {
		return value, nil
	}
	for {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return p.Result(), nil
		case goja.PromiseStateRejected:
			return nil, r.js.scriptError(p.Result(), "")
		}
		if r.running == nil && !r.next() {
			if r.isHalted() {
				return nil, r.reason
			}
			return nil, &ScriptError{Message: "Error: the script's promise can never settle: it awaits something that is not a batch operation (a batch has no timers or events)"}
		}
		select {
		case d := <-r.done:
			if err := r.settle(d); err != nil {
				return nil, r.js.vmError(err)
			}
		case <-r.halted:
			return nil, r.reason
		}
	}
}

// next starts the next queued operation, unless the batch halted; it
// reports whether one started.
func (r *run) next() bool {
	if len(r.queue) == 0 || r.isHalted() {
		return false
	}
	j := r.queue[0]
	r.queue = r.queue[1:]
	r.running = j
	go func() {
		v, err := j.do(r.opCtx)
		r.done <- jobDone{j: j, v: v, err: err}
	}()
	return true
}

// settle settles a finished operation's promise, which runs the script's
// continuations; the error is an uncatchable one of goja (an interrupt).
func (r *run) settle(d jobDone) error {
	r.running = nil
	if d.err != nil {
		return d.j.reject(r.js.operationError(d.j.name, d.err))
	}
	v, err := d.j.toJS(d.v)
	if err != nil {
		return d.j.reject(r.js.operationError(d.j.name, err))
	}
	return d.j.resolve(v)
}

// drain drops the queued operations and waits for the running one, which
// is cancelled if it outlives the batch by the grace.
func (r *run) drain() {
	r.queue = nil
	if r.running == nil {
		return
	}
	t := time.NewTimer(r.limits.Grace)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		r.cancelOps(fmt.Errorf("the %s the batch left running went on %v after the batch ended", r.running.name, r.limits.Grace))
		// A Host returns once its context ends.
		<-r.done
	}
	r.running = nil
}

// enqueue queues an operation and returns its promise, or a rejected one
// past the bound of operations.
func (r *run) enqueue(j *job) goja.Value {
	p, resolve, reject := r.rt.NewPromise()
	if r.started >= r.limits.MaxOperations {
		_ = reject(r.js.rangeError(fmt.Sprintf("%s: the batch passed its bound of %d operations", j.name, r.limits.MaxOperations)))
		return r.rt.ToValue(p)
	}
	r.started++
	j.resolve, j.reject = resolve, reject
	r.queue = append(r.queue, j)
	return r.rt.ToValue(p)
}

// liveHeap is the runtime/metrics sample of the live heap: what the last
// garbage collection kept.
const liveHeap = "/gc/heap/live:bytes"

// watchHeap samples the live heap until the returned function is called,
// and halts the batch once it grew by more than MaxHeapGrowth.
func (r *run) watchHeap() (stop func()) {
	sample := []metrics.Sample{{Name: liveHeap}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	base := read()
	limit := uint64(r.limits.MaxHeapGrowth)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(r.limits.HeapSampleInterval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if live := read(); live > base && live-base > limit {
					r.halt(fmt.Errorf("%w: the script's memory grew by more than %s; it was stopped", ErrLimit, mib(limit)))
					return
				}
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}

// mib writes a byte count in MiB.
func mib(n uint64) string {
	return fmt.Sprintf("%d MiB", n>>20)
}

// stackOf is the stack part of goja's text of an exception: the lines
// after the first.
func stackOf(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return strings.TrimRight(rest, "\n")
}
