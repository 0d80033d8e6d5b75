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

package page

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	jsonv2 "github.com/go-json-experiment/json"
)

// laneDialTimeout bounds opening an input lane: the dial and the attach.
const laneDialTimeout = 5 * time.Second

// errLaneClosed is what commands still waiting on a lane get when its
// connection ends.
var errLaneClosed = errors.New("input connection closed")

// inputLane is a DevTools connection of the Page's own, attached to its tab,
// for the events of a click. Commands written to one connection reach the
// browser in the order written, and the lane writes a command without
// waiting for the answer to the one before it. chromedp's connection cannot
// promise both: a command goes out from the caller's goroutine and is
// waited for there (Target.Execute), so a second command sent without that
// wait, from another goroutine, may overtake the first.
//
// Why it matters: the renderer answers a mouse move only after dispatching
// it, and it dispatches moves with its next animation frame (up to 16.7 ms
// at 60 Hz) unless an event that is not a move arrives first, which flushes
// the moves queued before it. Written back to back, a click's move, press
// and release reach the page in that order, within a millisecond or two.
type inputLane struct {
	conn    *chromedp.Conn
	session target.SessionID

	mu      sync.Mutex
	next    int64
	pending map[int64]chan *cdproto.Message
	// err is why the connection ended; nil while it is open.
	err error
}

// dialLane opens a lane to the tab tid of the browser whose DevTools
// endpoint (ws://...) is endpoint.
func dialLane(ctx context.Context, endpoint string, tid target.ID) (*inputLane, error) {
	ctx, cancel := context.WithTimeout(ctx, laneDialTimeout)
	defer cancel()
	conn, err := chromedp.DialContext(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	// chromedp's Conn.Read does not watch a context: closing the
	// connection is what ends a read that waits too long.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	l, err := attachLane(conn, tid)
	if !stop() {
		err = fmt.Errorf("attach to the tab: %w", context.Cause(ctx))
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	go l.read()
	return l, nil
}

// attachLane attaches conn to the tab tid (a flat session) and returns the
// lane on it.
func attachLane(conn *chromedp.Conn, tid target.ID) (*inputLane, error) {
	const attachID = 1
	params, err := jsonv2.Marshal(target.AttachToTarget(tid).WithFlatten(true), chromedp.DefaultMarshalOptions)
	if err != nil {
		return nil, err
	}
	if err := conn.Write(context.Background(), &cdproto.Message{ID: attachID, Method: target.CommandAttachToTarget, Params: params}); err != nil {
		return nil, fmt.Errorf("attach to the tab: %w", err)
	}
	for {
		var msg cdproto.Message
		if err := conn.Read(context.Background(), &msg); err != nil {
			return nil, fmt.Errorf("attach to the tab: %w", err)
		}
		if msg.ID != attachID {
			// Target.attachedToTarget and the like.
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("attach to the tab: %w", msg.Error)
		}
		var res target.AttachToTargetReturns
		if err := jsonv2.Unmarshal(msg.Result, &res, chromedp.DefaultUnmarshalOptions); err != nil {
			return nil, fmt.Errorf("attach to the tab: %w", err)
		}
		return &inputLane{conn: conn, session: res.SessionID, next: attachID, pending: make(map[int64]chan *cdproto.Message)}, nil
	}
}

// read hands each answer to the command waiting for it, until the
// connection ends or Chrome detaches the lane's session.
func (l *inputLane) read() {
	for {
		var msg cdproto.Message
		if err := l.conn.Read(context.Background(), &msg); err != nil {
			l.fail(fmt.Errorf("%w: %w", errLaneClosed, err))
			return
		}
		if msg.Method == cdproto.EventTargetDetachedFromTarget {
			l.fail(fmt.Errorf("%w: the tab detached it", errLaneClosed))
			_ = l.conn.Close()
			return
		}
		if msg.ID == 0 {
			continue
		}
		l.mu.Lock()
		ch := l.pending[msg.ID]
		delete(l.pending, msg.ID)
		l.mu.Unlock()
		if ch != nil {
			ch <- &msg
		}
	}
}

// fail ends the lane: every command waiting gets err, and later sends fail.
func (l *inputLane) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
	for id, ch := range l.pending {
		close(ch)
		delete(l.pending, id)
	}
}

// alive reports whether the lane's connection is still open.
func (l *inputLane) alive() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err == nil
}

// close ends the lane; Chrome detaches its session with the connection.
func (l *inputLane) close() {
	_ = l.conn.Close()
}

// laneCommand is one command of a batch sent on a lane.
type laneCommand struct {
	method string
	params any
}

// run writes cmds back to back, in order, then waits for all their answers
// and returns the first error.
func (l *inputLane) run(ctx context.Context, cmds ...laneCommand) error {
	answers, err := l.send(cmds)
	if err != nil {
		return err
	}
	var first error
	for i, ch := range answers {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case msg, ok := <-ch:
			switch {
			case first != nil:
			case !ok:
				first = l.closedErr()
			case msg.Error != nil:
				first = fmt.Errorf("%s: %w", cmds[i].method, msg.Error)
			}
		}
	}
	return first
}

// send writes cmds under the lane's lock, so that no other batch comes
// between them, and returns a channel per command for its answer.
func (l *inputLane) send(cmds []laneCommand) ([]chan *cdproto.Message, error) {
	msgs := make([]*cdproto.Message, len(cmds))
	for i, c := range cmds {
		params, err := jsonv2.Marshal(c.params, chromedp.DefaultMarshalOptions)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.method, err)
		}
		msgs[i] = &cdproto.Message{SessionID: l.session, Method: cdproto.MethodType(c.method), Params: params}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	answers := make([]chan *cdproto.Message, len(msgs))
	for i, msg := range msgs {
		l.next++
		msg.ID = l.next
		answers[i] = make(chan *cdproto.Message, 1)
		l.pending[msg.ID] = answers[i]
		if err := l.conn.Write(context.Background(), msg); err != nil {
			// The reader sees the broken connection too and fails the
			// commands written before this one.
			delete(l.pending, msg.ID)
			return nil, fmt.Errorf("%w: %w", errLaneClosed, err)
		}
	}
	return answers, nil
}

func (l *inputLane) closedErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	return errLaneClosed
}
