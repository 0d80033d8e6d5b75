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
	"fmt"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"

	"github.com/browserfleet/browserfleet/engine/cdpconn"
)

// laneDialTimeout bounds opening an input lane: the dial and the attach.
const laneDialTimeout = 5 * time.Second

// inputLane is a DevTools connection of the Page's own (cdpconn), attached
// to its tab, for the events of a click. Commands written to one connection
// reach the browser in the order written, and the lane writes a click's
// events without waiting for the answer to the one before: chromedp's
// connection cannot promise both.
//
// Why it matters: the renderer answers a mouse move only after dispatching
// it, and it dispatches moves with its next animation frame (up to 16.7 ms
// at 60 Hz) unless an event that is not a move arrives first, which flushes
// the moves queued before it. Written back to back, a click's move, press
// and release reach the page in that order, within a millisecond or two.
type inputLane struct {
	conn    *cdpconn.Conn
	session target.SessionID
}

// dialLane opens a lane to the tab tid of the browser whose DevTools
// endpoint (ws://...) is endpoint.
func dialLane(ctx context.Context, endpoint string, tid target.ID) (*inputLane, error) {
	ctx, cancel := context.WithTimeout(ctx, laneDialTimeout)
	defer cancel()
	conn, err := cdpconn.Dial(ctx, endpoint, func(c *cdpconn.Conn, msg *cdproto.Message) {
		if msg.Method == cdproto.EventTargetDetachedFromTarget {
			// The tab is gone, or detached the lane: the next click
			// opens another.
			c.Close()
		}
	})
	if err != nil {
		return nil, err
	}
	var res target.AttachToTargetReturns
	if err := conn.Call(ctx, "", target.CommandAttachToTarget, target.AttachToTarget(tid).WithFlatten(true), &res); err != nil {
		conn.Close()
		return nil, fmt.Errorf("attach to the tab: %w", err)
	}
	return &inputLane{conn: conn, session: res.SessionID}, nil
}

// alive reports whether the lane's connection is still open.
func (l *inputLane) alive() bool { return l.conn.Alive() }

// close ends the lane; Chrome detaches its session with the connection.
func (l *inputLane) close() { l.conn.Close() }

// run writes cmds back to back, in order, then waits for all their answers
// and returns the first error.
func (l *inputLane) run(ctx context.Context, cmds ...cdpconn.Command) error {
	return l.conn.Run(ctx, l.session, cmds...)
}
