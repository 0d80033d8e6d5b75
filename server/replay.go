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

package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runnertoken"
	"github.com/browserfleet/browserfleet/server/apikey"
)

// The replay is the history of a session's calls with their token usage.
// The session's runner records every call it serves, redacted, in memory
// and bounded (runner/replay); nothing of it is written to the cluster per
// call. While the session has a runner, the replay is the runner's. Once
// the runner is gone, what is left is the summary the manager copied from
// the runner's termination message into the session's status
// (status.history): the replay then has no pages and a summary.

// replayTimeout bounds asking the runner for its history.
const replayTimeout = 10 * time.Second

// replay serves GET /v1/sessions/{id}/replay.
func (s *server) replay(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	bs, ok := s.pathSession(w, r, project)
	if !ok {
		return
	}
	phase := phaseOf(bs)
	live := bs.Status.Endpoint != "" && (phase == v1alpha1.BrowserSessionReady || phase == v1alpha1.BrowserSessionEnding)
	if !live {
		writeJSON(w, http.StatusOK, success{Success: true, Data: replayFromStatus(bs)})
		return
	}
	rep, err := s.runnerReplay(r.Context(), bs)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, success{Success: true, Data: rep})
	case r.Context().Err() != nil:
		// The caller went away.
	case phase == v1alpha1.BrowserSessionEnding:
		// The runner is stopping: its summary is on its way to the
		// status, or already there.
		writeJSON(w, http.StatusOK, success{Success: true, Data: replayFromStatus(bs)})
	case errors.Is(err, runnertoken.ErrMissing):
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "the session's runner is not ready to answer yet; retry")
	default:
		s.log.Error(err, "getting the replay from the runner", "namespace", bs.Namespace, "session", bs.Name)
		writeError(w, http.StatusBadGateway, CodeRunnerUnreachable, "the session's runner cannot be reached for its history; retry")
	}
}

// runnerReplay asks the session's runner for its history.
func (s *server) runnerReplay(ctx context.Context, bs *v1alpha1.BrowserSession) (*replay.Replay, error) {
	c, err := s.runnerClient(ctx, bs)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, replayTimeout)
	defer cancel()
	rep, err := c.Replay(ctx)
	if err != nil {
		return nil, err
	}
	// The runner's replay never has a summary: that is for a session
	// whose runner is gone.
	rep.Summary = nil
	return rep, nil
}

// replayFromStatus is the replay of a session without a runner: no pages,
// and the summary in its status once it ended (none while it starts, nor
// when its runner left none).
func replayFromStatus(bs *v1alpha1.BrowserSession) replay.Replay {
	rep := replay.Replay{Pages: []replay.Page{}}
	if h := bs.Status.History; h != nil {
		rep.Summary = replay.SummaryOf(h)
	}
	return rep
}
