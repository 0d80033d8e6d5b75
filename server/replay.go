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
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/server/apikey"
)

// The replay is the history of a session's calls with their token usage,
// kept in a ConfigMap owned by the session (`<id>-replay`), one data key per
// call. It lives in the cluster, not in the API pod, so that every replica
// serves it and a restart loses nothing; it goes when the session is
// deleted. Each call adds its key with a JSON merge patch, which needs no
// read and never conflicts with a concurrent call's. A ConfigMap holds at
// most 1 MiB: when it is full the oldest calls are dropped.

// ReplaySuffix ends the name of a session's replay ConfigMap.
const ReplaySuffix = "-replay"

// LabelReplay marks replay ConfigMaps, with the session's name as value.
const LabelReplay = "browserfleet.io/replay-of"

// maxReplayValueBytes bounds the recorded parameters and result of one call;
// larger ones are recorded as a stub saying how large they were, so that
// one large extraction does not push out the rest of the history.
const maxReplayValueBytes = 8 << 10

// replayBudgetBytes is how full pruning leaves the ConfigMap, well under
// the API server's 1 MiB so that pruning is rare.
const replayBudgetBytes = 512 << 10

// replayEntry is one call as the operation handlers report it.
type replayEntry struct {
	ActionID  string
	Method    string
	Params    any
	Result    any
	Started   time.Time
	Ended     time.Time
	Usage     rpc.Usage
	PageURL   string
	Succeeded bool
}

// replayAction is a recorded call, in the reference server's shape, plus
// actionId and pageUrl.
type replayAction struct {
	ActionID   string          `json:"actionId"`
	Method     string          `json:"method"`
	Parameters json.RawMessage `json:"parameters"`
	Result     json.RawMessage `json:"result"`
	Timestamp  int64           `json:"timestamp"`
	EndTime    int64           `json:"endTime"`
	TokenUsage tokenUsage      `json:"tokenUsage"`
	PageURL    string          `json:"pageUrl,omitempty"`
}

// tokenUsage is a call's model usage. The reference has a `cost`; this
// service does not know its users' prices, so it leaves it out.
type tokenUsage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	TimeMs            int64 `json:"timeMs"`
}

// replayPage groups the calls made on one page: a navigate starts a page.
type replayPage struct {
	URL       string         `json:"url"`
	Timestamp int64          `json:"timestamp"`
	Duration  int64          `json:"duration"`
	Actions   []replayAction `json:"actions"`
}

type replayData struct {
	Pages []replayPage `json:"pages"`
}

// replayName is the name of a session's replay ConfigMap.
func replayName(session string) string { return session + ReplaySuffix }

// redactedValue stands for what the history never keeps.
const redactedValue = "[redacted]"

// redactForHistory returns v as JSON without what must not be kept: the
// text fill and type actions put into a field (whatever the field: the
// runner cannot be sure it is not a password), the values of variables
// (their names stay), and in every URL the user info, query values (their
// keys stay) and fragment.
func redactForHistory(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(redactNode(doc))
}

func redactNode(n any) any {
	switch n := n.(type) {
	case map[string]any:
		method, _ := n["method"].(string)
		for k, v := range n {
			switch {
			case k == "variables":
				if vars, ok := v.(map[string]any); ok {
					for name := range vars {
						vars[name] = redactedValue
					}
					continue
				}
			case k == "arguments" && (method == "fill" || method == "type"):
				if args, ok := v.([]any); ok {
					for i := range args {
						args[i] = redactedValue
					}
					continue
				}
			case k == "url" || k == "pageUrl":
				if u, ok := v.(string); ok {
					n[k] = redactHistoryURL(u)
					continue
				}
			}
			n[k] = redactNode(v)
		}
		return n
	case []any:
		for i := range n {
			n[i] = redactNode(n[i])
		}
		return n
	}
	return n
}

// redactHistoryURL keeps a URL's scheme, host, path and query keys.
func redactHistoryURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactedValue
	}
	if u.Scheme == "data" {
		return "data:" + redactedValue
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{redactedValue}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// boundedJSON encodes v for the history (redactForHistory), or a stub when
// it is too large to keep.
func boundedJSON(v any) json.RawMessage {
	raw, err := redactForHistory(v)
	if err != nil {
		return json.RawMessage(`{"unrecorded":"encoding failed"}`)
	}
	if len(raw) > maxReplayValueBytes {
		return json.RawMessage(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(raw)))
	}
	if string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}

// record adds a call to the session's replay. The replay is a record, not
// the call's outcome: a failure to write it is logged and the call answered
// as it went.
func (s *server) record(bs *v1alpha1.BrowserSession, e replayEntry) {
	a := replayAction{
		ActionID:   e.ActionID,
		Method:     e.Method,
		Parameters: boundedJSON(e.Params),
		Result:     boundedJSON(e.Result),
		Timestamp:  e.Started.UnixMilli(),
		EndTime:    e.Ended.UnixMilli(),
		TokenUsage: tokenUsage{
			InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens,
			ReasoningTokens: e.Usage.ReasoningTokens, CachedInputTokens: e.Usage.CachedInputTokens,
			TimeMs: e.Usage.InferenceTimeMs,
		},
		PageURL: redactHistoryURL(e.PageURL),
	}
	value, err := json.Marshal(a)
	if err != nil {
		s.log.Error(err, "encoding replay entry", "namespace", bs.Namespace, "session", bs.Name)
		return
	}
	// Keys sort in call order: zero-padded start time, then the id.
	key := fmt.Sprintf("%020d-%s", e.Started.UnixNano(), e.ActionID)

	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := s.appendReplay(ctx, bs, key, string(value)); err != nil {
		s.log.Error(err, "recording replay", "namespace", bs.Namespace, "session", bs.Name)
	}
}

func (s *server) appendReplay(ctx context.Context, bs *v1alpha1.BrowserSession, key, value string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: bs.Namespace, Name: replayName(bs.Name)}}
	patch, err := json.Marshal(map[string]any{"data": map[string]string{key: value}})
	if err != nil {
		return fmt.Errorf("encoding replay patch: %w", err)
	}
	for range 3 {
		err = s.opts.Client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
		switch {
		case err == nil:
			return nil
		case apierrors.IsNotFound(err):
			err = s.createReplay(ctx, bs, key, value)
			if err == nil || !apierrors.IsAlreadyExists(err) {
				return err
			}
			// Another call created it a moment ago: patch again.
		case apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err):
			// Full: drop the oldest calls, then add this one.
			if err := s.pruneReplay(ctx, client.ObjectKeyFromObject(cm), key, value); err != nil {
				return fmt.Errorf("pruning replay %s: %w", cm.Name, err)
			}
			return nil
		default:
			return fmt.Errorf("patching replay %s: %w", cm.Name, err)
		}
	}
	return fmt.Errorf("recording replay %s: %w", cm.Name, err)
}

func (s *server) createReplay(ctx context.Context, bs *v1alpha1.BrowserSession, key, value string) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: bs.Namespace,
			Name:      replayName(bs.Name),
			Labels:    map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy, LabelReplay: bs.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(),
				Kind:       "BrowserSession",
				Name:       bs.Name,
				UID:        bs.UID,
			}},
		},
		Data: map[string]string{key: value},
	}
	if err := s.opts.Client.Create(ctx, cm); err != nil {
		return fmt.Errorf("creating replay %s: %w", cm.Name, err)
	}
	return nil
}

// pruneReplay drops the oldest calls until the replay, with the new one,
// fits replayBudgetBytes.
func (s *server) pruneReplay(ctx context.Context, key types.NamespacedName, newKey, newValue string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := s.opts.APIReader.Get(ctx, key, cm); err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[newKey] = newValue
		keys := make([]string, 0, len(cm.Data))
		size := 0
		for k, v := range cm.Data {
			keys = append(keys, k)
			size += len(k) + len(v)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if size <= replayBudgetBytes || k == newKey {
				break
			}
			size -= len(k) + len(cm.Data[k])
			delete(cm.Data, k)
		}
		return s.opts.Client.Update(ctx, cm)
	})
}

// replay serves GET /v1/sessions/{id}/replay.
func (s *server) replay(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	bs, ok := s.pathSession(w, r, project)
	if !ok {
		return
	}
	// The API server, not a cache: the API pod caches no ConfigMaps, and
	// a call answered a moment ago must be in the replay.
	cm := &corev1.ConfigMap{}
	err := s.opts.APIReader.Get(r.Context(), types.NamespacedName{Namespace: bs.Namespace, Name: replayName(bs.Name)}, cm)
	if client.IgnoreNotFound(err) != nil {
		s.log.Error(err, "getting replay", "namespace", bs.Namespace, "session", bs.Name)
		writeInternal(w)
		return
	}
	// A replay of an older session of the same name is not this one's.
	if err == nil && !ownedByUID(cm.OwnerReferences, bs.UID) {
		cm.Data = nil
	}
	writeJSON(w, http.StatusOK, success{Success: true, Data: replayOf(cm.Data, s.log.Error)})
}

func ownedByUID(refs []metav1.OwnerReference, uid types.UID) bool {
	return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == uid })
}

// replayOf groups recorded calls into pages, in call order. A navigate
// starts a page at the URL it reached; calls before the first navigate are
// on about:blank, where every session starts. A page lasts from its first
// call's start to its last call's end.
func replayOf(data map[string]string, logErr func(error, string, ...any)) replayData {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := replayData{Pages: []replayPage{}}
	for _, k := range keys {
		var a replayAction
		if err := json.Unmarshal([]byte(data[k]), &a); err != nil {
			logErr(err, "skipping unreadable replay entry", "key", k)
			continue
		}
		if len(out.Pages) == 0 || (a.Method == "navigate" && a.PageURL != "") {
			url := a.PageURL
			if url == "" {
				url = "about:blank"
			}
			out.Pages = append(out.Pages, replayPage{URL: url, Timestamp: a.Timestamp, Actions: []replayAction{}})
		}
		p := &out.Pages[len(out.Pages)-1]
		p.Actions = append(p.Actions, a)
		p.Duration = max(p.Duration, a.EndTime-p.Timestamp)
	}
	return out
}
