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

package apitest

import (
	"context"
	"encoding/json"

	"github.com/coder/websocket"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// CDP is a raw DevTools connection to a session's cdpUrl: one call at a
// time, its reply (or error reply) decoded; events in between are skipped.
type CDP struct {
	ctx  context.Context
	conn *websocket.Conn
	next int64
}

// DialCDP connects to cdpURL; the connection closes when the spec ends.
func DialCDP(ctx context.Context, cdpURL string) *CDP {
	GinkgoHelper()
	conn, _, err := websocket.Dial(ctx, cdpURL, nil) //nolint:bodyclose // websocket.Dial closes the handshake's body
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(conn.CloseNow)
	conn.SetReadLimit(-1)
	return &CDP{ctx: ctx, conn: conn}
}

// Conn is the connection itself, to see it close.
func (c *CDP) Conn() *websocket.Conn { return c.conn }

// Call sends method with params (a JSON object) to the target session sid
// ("" for the browser) and returns the reply.
func (c *CDP) Call(method, params, sid string) map[string]any {
	GinkgoHelper()
	c.next++
	msg := map[string]any{"id": c.next, "method": method, "params": json.RawMessage(params)}
	if sid != "" {
		msg["sessionId"] = sid
	}
	raw, err := json.Marshal(msg)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.conn.Write(c.ctx, websocket.MessageText, raw)).To(Succeed())
	for {
		_, data, err := c.conn.Read(c.ctx)
		Expect(err).NotTo(HaveOccurred())
		var reply map[string]any
		Expect(json.Unmarshal(data, &reply)).To(Succeed())
		if reply["id"] == float64(c.next) {
			return reply
		}
	}
}

// OpenTab creates a tab at about:blank and attaches to it (flat), returning
// its session id.
func (c *CDP) OpenTab() string {
	GinkgoHelper()
	created := c.Call("Target.createTarget", `{"url":"about:blank"}`, "")
	Expect(created).To(HaveKey("result"), "%v", created)
	targetID := created["result"].(map[string]any)["targetId"].(string)
	attached := c.Call("Target.attachToTarget", `{"targetId":"`+targetID+`","flatten":true}`, "")
	Expect(attached).To(HaveKey("result"), "%v", attached)
	return attached["result"].(map[string]any)["sessionId"].(string)
}
