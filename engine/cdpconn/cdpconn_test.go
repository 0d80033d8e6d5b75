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

package cdpconn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"

	"github.com/browserfleet/browserfleet/engine/cdpconn"
	"github.com/browserfleet/browserfleet/internal/testing/chromium"
)

// TestConn drives a real browser over a connection of its own: a call's
// result, a batch answered in order, an event of a session it opened, a
// command's error, and the error of every command once it is closed.
func TestConn(t *testing.T) {
	b, err := chromium.Launch()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	events := make(chan string, 64)
	c, err := cdpconn.Dial(ctx, b.Endpoint, func(_ *cdpconn.Conn, msg *cdproto.Message) {
		select {
		case events <- string(msg.Method):
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	var v browser.GetVersionReturns
	if err := c.Call(ctx, "", browser.CommandGetVersion, nil, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Product, "Chrome") {
		t.Errorf("Browser.getVersion product = %q, want a Chrome", v.Product)
	}

	var created target.CreateTargetReturns
	if err := c.Call(ctx, "", target.CommandCreateTarget, target.CreateTarget("about:blank"), &created); err != nil {
		t.Fatal(err)
	}
	var attached target.AttachToTargetReturns
	if err := c.Call(ctx, "", target.CommandAttachToTarget, target.AttachToTarget(created.TargetID).WithFlatten(true), &attached); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx, attached.SessionID,
		cdpconn.Command{Method: "Page.enable"},
		cdpconn.Command{Method: "Page.navigate", Params: map[string]any{"url": "about:blank#2"}},
	); err != nil {
		t.Fatal(err)
	}
	for seen := false; !seen; {
		select {
		case m := <-events:
			seen = strings.HasPrefix(m, "Page.")
		case <-ctx.Done():
			t.Fatal("no Page event of the session the connection opened")
		}
	}

	if err := c.Call(ctx, attached.SessionID, "No.such", nil, nil); err == nil || !strings.Contains(err.Error(), "No.such") {
		t.Errorf("an unknown method: err = %v, want an error naming it", err)
	}

	c.Close()
	for c.Alive() {
		select {
		case <-ctx.Done():
			t.Fatal("the connection is still alive after Close")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := c.Call(ctx, "", browser.CommandGetVersion, nil, nil); !errors.Is(err, cdpconn.ErrClosed) {
		t.Errorf("a call after Close: err = %v, want ErrClosed", err)
	}
}
