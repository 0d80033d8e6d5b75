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

// Package cdpconn is a DevTools connection of the caller's own, for what
// chromedp's shared one cannot do: write several commands back to back, in
// order, without waiting for each answer (chromedp's Target.Execute writes
// from its caller's goroutine and waits there, so nothing orders two
// commands sent from two goroutines), and see the events of sessions
// chromedp did not open (chromedp drops them).
package cdpconn

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	jsonv2 "github.com/go-json-experiment/json"
)

// ErrClosed is what commands get once their connection has ended.
var ErrClosed = errors.New("DevTools connection closed")

// Command is one command of a batch: a method and its parameters.
type Command struct {
	Method string
	Params any
}

// EventFunc receives the connection's events (messages without an id), on
// the connection's reading goroutine: it must not block, nor wait for an
// answer on the same connection.
type EventFunc func(c *Conn, msg *cdproto.Message)

// Conn is a DevTools connection to a browser's endpoint.
type Conn struct {
	conn    *chromedp.Conn
	onEvent EventFunc

	// mu guards the fields below and orders writes: one writer at a time.
	mu      sync.Mutex
	next    int64
	pending map[int64]chan *cdproto.Message
	// err is why the connection ended; nil while it is open.
	err error
}

// Dial connects to the browser-level DevTools endpoint (ws://...) within
// ctx; onEvent, when not nil, receives the events.
func Dial(ctx context.Context, endpoint string, onEvent EventFunc) (*Conn, error) {
	conn, err := chromedp.DialContext(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	c := &Conn{conn: conn, onEvent: onEvent, pending: make(map[int64]chan *cdproto.Message)}
	go c.read()
	return c, nil
}

// read hands each answer to the command waiting for it and each event to
// onEvent, until the connection ends.
func (c *Conn) read() {
	for {
		var msg cdproto.Message
		if err := c.conn.Read(context.Background(), &msg); err != nil {
			c.fail(fmt.Errorf("%w: %w", ErrClosed, err))
			return
		}
		if msg.ID == 0 {
			if c.onEvent != nil {
				c.onEvent(c, &msg)
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[msg.ID]
		delete(c.pending, msg.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- &msg
		}
	}
}

// fail ends the connection's commands: every command waiting gets err, and
// later ones fail.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// Close ends the connection; Chrome detaches its sessions with it.
func (c *Conn) Close() { _ = c.conn.Close() }

// Alive reports whether the connection is still open.
func (c *Conn) Alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil
}

func (c *Conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return ErrClosed
}

// Send writes cmds on session sid ("" for the browser) back to back, in
// order, with no other command between them, and returns a channel per
// command for its answer; a channel closed without one means the
// connection ended.
func (c *Conn) Send(sid target.SessionID, cmds ...Command) ([]<-chan *cdproto.Message, error) {
	msgs := make([]*cdproto.Message, len(cmds))
	for i, cmd := range cmds {
		params, err := jsonv2.Marshal(cmd.Params, chromedp.DefaultMarshalOptions)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmd.Method, err)
		}
		msgs[i] = &cdproto.Message{SessionID: sid, Method: cdproto.MethodType(cmd.Method), Params: params}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	answers := make([]<-chan *cdproto.Message, len(msgs))
	for i, msg := range msgs {
		c.next++
		msg.ID = c.next
		ch := make(chan *cdproto.Message, 1)
		c.pending[msg.ID] = ch
		answers[i] = ch
		if err := c.conn.Write(context.Background(), msg); err != nil {
			// The reader sees the broken connection too, and fails the
			// commands written before this one.
			delete(c.pending, msg.ID)
			return nil, fmt.Errorf("%s: %w: %w", cmds[i].Method, ErrClosed, err)
		}
	}
	return answers, nil
}

// Run sends cmds as Send does, waits for all their answers, and returns the
// first error.
func (c *Conn) Run(ctx context.Context, sid target.SessionID, cmds ...Command) error {
	answers, err := c.Send(sid, cmds...)
	if err != nil {
		return err
	}
	var first error
	for i, ch := range answers {
		if _, err := c.wait(ctx, cmds[i].Method, ch); err != nil && first == nil {
			first = err
			if ctx.Err() != nil {
				break
			}
		}
	}
	return first
}

// Call sends one command on session sid ("" for the browser), waits for its
// answer and decodes its result into res, which may be nil.
func (c *Conn) Call(ctx context.Context, sid target.SessionID, method string, params, res any) error {
	answers, err := c.Send(sid, Command{Method: method, Params: params})
	if err != nil {
		return err
	}
	msg, err := c.wait(ctx, method, answers[0])
	if err != nil || res == nil {
		return err
	}
	if err := jsonv2.Unmarshal(msg.Result, res, chromedp.DefaultUnmarshalOptions); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// wait waits for one answer; an answer that comes after ctx ended is
// dropped by the reader's buffered send.
func (c *Conn) wait(ctx context.Context, method string, ch <-chan *cdproto.Message) (*cdproto.Message, error) {
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case msg, ok := <-ch:
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: %w", method, c.closedErr())
		case msg.Error != nil:
			return nil, fmt.Errorf("%s: %w", method, msg.Error)
		}
		return msg, nil
	}
}
