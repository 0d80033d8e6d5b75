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

package chromium

import (
	"fmt"
	"time"

	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/chromedp"
)

// supervise waits for the browser to go away. Unasked (Close not called),
// that is a crash: the reason is recorded for /healthz and for every call
// in flight or to come, and whatever is left of Chromium is killed, so that
// a half-dead browser does not linger in the pod.
func (b *Browser) supervise() {
	// A renderer crash leaves the browser up and the tab dead until it is
	// navigated again; it is worth a log line, not the session.
	chromedp.ListenTarget(b.ctx, func(ev any) {
		if _, ok := ev.(*inspector.EventTargetCrashed); ok {
			b.log.Error("the page's renderer crashed; navigating the page recovers it", "target", b.targetID)
		}
	})
	select {
	case <-b.cdp.LostConnection:
	case <-b.ctx.Done():
	}
	if !b.closing.Load() {
		reason := b.crashReason()
		b.crash.Store(&crashError{reason: reason})
		b.log.Error("browser crashed", "reason", reason)
		b.cancel()
		if b.pid != 0 {
			_ = killGroup(b.pid)
		}
	}
	close(b.gone)
}

// crashReason says why the DevTools connection dropped, as precisely as the
// process table still tells.
func (b *Browser) crashReason() string {
	if b.settings.attach != nil {
		return fmt.Sprintf("lost the DevTools connection to the browser at %s", RedactURL(b.settings.attach.url))
	}
	// The connection and the process end in either order: on a busy
	// machine the socket may close before the kernel has made the process
	// a zombie. Give it a moment, so that one crash reads the same however
	// the two race.
	deadline := time.Now().Add(exitWait)
	for {
		if desc, exited := exitStatus(b.pid); exited {
			if desc != "" {
				return fmt.Sprintf("chromium (pid %d) exited unexpectedly: %s", b.pid, desc)
			}
			return fmt.Sprintf("chromium (pid %d) exited unexpectedly", b.pid)
		}
		if !time.Now().Before(deadline) {
			return fmt.Sprintf("lost the DevTools connection to chromium (pid %d); the process was killed", b.pid)
		}
		time.Sleep(exitPoll)
	}
}

// How long crashReason waits for a browser whose connection dropped to be
// seen exiting, and how often it looks.
const (
	exitWait = 2 * time.Second
	exitPoll = 20 * time.Millisecond
)
