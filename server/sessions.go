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
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/server/apikey"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// errNotFound stands for an id that cannot name a session.
var errNotFound = errors.New("no such session")

// cleanupTimeout bounds the clean-up writes made after the request is over
// (ending an abandoned session, deleting an orphaned Secret).
const cleanupTimeout = 10 * time.Second

// success is the envelope of a successful reply.
type success struct {
	Success bool `json:"success"`
	Data    any  `json:"data,omitempty"`
}

// startData is start's `data`: exactly the spec's three properties.
type startData struct {
	SessionID string `json:"sessionId"`
	// CDPURL is the session's DevTools WebSocket through the API pod,
	// with a signed, expiring token (cdp.go); null when the server signs
	// none.
	CDPURL    *string `json:"cdpUrl"`
	Available bool    `json:"available"`
}

// sessionView is a session as GET /v1/sessions/{id} and the list show it.
type sessionView struct {
	SessionID    string                       `json:"sessionId"`
	Phase        v1alpha1.BrowserSessionPhase `json:"phase"`
	Message      string                       `json:"message"`
	CreatedAt    metav1.Time                  `json:"createdAt"`
	StartedAt    *metav1.Time                 `json:"startedAt"`
	ExpiresAt    *metav1.Time                 `json:"expiresAt"`
	EndedAt      *metav1.Time                 `json:"endedAt"`
	ModelName    string                       `json:"modelName"`
	UserMetadata map[string]json.RawMessage   `json:"userMetadata"`
	CDPURL       *string                      `json:"cdpUrl"`
}

// listData is the list's `data`; an object rather than a bare array so that
// paging can be added without breaking clients.
type listData struct {
	Sessions []sessionView `json:"sessions"`
	// Continue, when set, asks for the next page: pass it as ?continue=.
	Continue string `json:"continue,omitempty"`
}

// phaseOf is the session's phase; a session the controller has not seen yet
// is Pending.
func phaseOf(bs *v1alpha1.BrowserSession) v1alpha1.BrowserSessionPhase {
	if bs.Status.Phase == "" {
		return v1alpha1.BrowserSessionPending
	}
	return bs.Status.Phase
}

// over reports whether the session is ending, ended or failed, or was asked
// to end: it will never be Ready (again).
func over(bs *v1alpha1.BrowserSession) bool {
	switch phaseOf(bs) {
	case v1alpha1.BrowserSessionEnding, v1alpha1.BrowserSessionEnded, v1alpha1.BrowserSessionFailed:
		return true
	}
	return bs.Spec.Ended
}

// view is the session as the API shows it; cdpUrl is set while it is Ready.
func (s *server) view(r *http.Request, bs *v1alpha1.BrowserSession) sessionView {
	v := sessionView{
		SessionID:    bs.Name,
		Phase:        phaseOf(bs),
		Message:      bs.Status.Message,
		CreatedAt:    bs.CreationTimestamp,
		StartedAt:    bs.Status.StartedAt,
		ExpiresAt:    bs.Status.ExpiresAt,
		EndedAt:      bs.Status.EndedAt,
		ModelName:    bs.Spec.Model.Name,
		UserMetadata: map[string]json.RawMessage{},
	}
	if v.Phase == v1alpha1.BrowserSessionReady && !bs.Spec.Ended {
		v.CDPURL = s.cdpURL(r, bs)
	}
	if c := bs.Spec.CloudSessionCreateParams; c != nil {
		for k, j := range c.UserMetadata {
			v.UserMetadata[k] = json.RawMessage(j.Raw)
		}
	}
	return v
}

// lookup returns the session id of the project, or nil if there is none. It
// reads the cache, and the API server before it concludes that there is
// none: a session created a moment ago (by another API pod, say) may not
// have reached this pod's cache yet.
func (s *server) lookup(ctx context.Context, namespace, id string) (*v1alpha1.BrowserSession, error) {
	// Not a possible name: no lookup, and no odd name reaches the API server.
	if len(validation.IsDNS1123Label(id)) > 0 {
		return nil, nil
	}
	key := types.NamespacedName{Namespace: namespace, Name: id}
	bs := &v1alpha1.BrowserSession{}
	err := s.opts.Client.Get(ctx, key, bs)
	if apierrors.IsNotFound(err) {
		err = s.opts.APIReader.Get(ctx, key, bs)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("getting session %s: %w", key, err)
	}
	return bs, nil
}

// start serves POST /v1/sessions/start.
func (s *server) start(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	arrived := time.Now()
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req, verr := serverv1.DecodeStartWith(body, serverv1.StartOptions{AllowedExecutables: s.opts.AllowedExecutables, AcceptedRegions: s.opts.AcceptedRegions, Gateway: s.opts.Gateway != nil})
	stream, issue := wantsStream(r, nil)
	if !s.acceptable(w, verr, issue) {
		return
	}
	if req.CloudSessionID != "" {
		s.resume(w, r, project, req.CloudSessionID, stream)
		return
	}
	if !s.roomFor(w, r, project) {
		return
	}
	req.ModelAPIKey = r.Header.Get(HeaderModelAPIKey)
	// The id is the name: a random UUID is unguessable and a DNS label.
	name := uuid.NewString()
	session, secret, err := req.ToSession(name, project.Namespace)
	if err != nil {
		s.log.Error(err, "mapping start request", "namespace", project.Namespace)
		writeInternal(w)
		return
	}
	// Should this server stop before the client has the id, the manager
	// ends the session at this deadline.
	claimBy := time.Now().Add(s.opts.StartTimeout + claimMargin).UTC().Format(time.RFC3339)
	metav1.SetMetaDataAnnotation(&session.ObjectMeta, v1alpha1.AnnotationClaimDeadline, claimBy)
	key := client.ObjectKeyFromObject(session)
	// Subscribe before the create, so that no event is missed in between.
	wake, cancel := s.hub.subscribe(key)
	defer cancel()
	if err := s.createWithSecrets(r.Context(), session, "BrowserSession", secret); err != nil {
		var status apierrors.APIStatus
		if apierrors.IsInvalid(err) && errors.As(err, &status) {
			// DecodeStart should have caught it; if the CRD's schema is
			// stricter, the client still deserves the fields named.
			writeIssues(w, "invalid request body", issuesOf(status.Status()))
			return
		}
		s.log.Error(err, "creating session", "namespace", project.Namespace, "session", name)
		writeInternal(w)
		return
	}
	s.await(w, r, key, wake, arrived, stream)
}

// quotaRetryAfter is the Retry-After of a start refused for the project's
// quota, in seconds: sessions end at their callers' pace, not the server's.
const quotaRetryAfter = "10"

// roomFor answers 429 QUOTA_EXCEEDED, and reports false, when the project
// has no room for one more session (quota.Room). It counts from the cache:
// two starts racing through two replicas may both pass, and the manager
// then holds the later one back (QuotaExceeded) until the project has room.
func (s *server) roomFor(w http.ResponseWriter, r *http.Request, project apikey.Project) bool {
	var sessions v1alpha1.BrowserSessionList
	if err := s.opts.Client.List(r.Context(), &sessions, client.InNamespace(project.Namespace)); err != nil {
		s.log.Error(err, "listing sessions for quota", "namespace", project.Namespace)
		writeInternal(w)
		return false
	}
	ok, msg := quota.Room(s.opts.Quota.For(project.Namespace), sessions.Items)
	if !ok {
		w.Header().Set("Retry-After", quotaRetryAfter)
		writeError(w, http.StatusTooManyRequests, CodeQuotaExceeded, msg)
	}
	return ok
}

// createWithSecrets creates obj, then its request Secrets with obj as their
// owner, in one create each, so that every fault converges: a Secret never
// exists without its owner (the garbage collector takes it with obj), and
// an obj whose Secrets never come waits for them a bounded time and fails
// without a pod (the manager's sessions.secretWait). On a failure it
// deletes obj, by name even when its create seemed to fail: a create that
// timed out may have succeeded, and the name is this request's own.
func (s *server) createWithSecrets(ctx context.Context, obj client.Object, kind string, secrets ...*corev1.Secret) error {
	c := s.opts.Client
	if err := c.Create(ctx, obj); err != nil {
		if !apierrors.IsInvalid(err) && !apierrors.IsAlreadyExists(err) {
			s.cleanup(obj)
		}
		return fmt.Errorf("creating %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	owner := []metav1.OwnerReference{{
		APIVersion: v1alpha1.GroupVersion.String(),
		Kind:       kind,
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
	}}
	for _, secret := range secrets {
		if secret == nil {
			continue
		}
		secret.OwnerReferences = owner
		if err := c.Create(ctx, secret); err != nil {
			// Deleting obj takes the Secrets made so far with it.
			s.cleanup(obj)
			return fmt.Errorf("creating request secret %s/%s: %w", secret.Namespace, secret.Name, err)
		}
	}
	return nil
}

// cleanup deletes objects after a failed or abandoned call. It runs on its own context:
// the request's may be what ended.
func (s *server) cleanup(objs ...client.Object) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	for _, o := range objs {
		var opts []client.DeleteOption
		if uid := o.GetUID(); uid != "" {
			// Only the object this call made.
			opts = append(opts, client.Preconditions{UID: &uid})
		}
		if err := s.opts.Client.Delete(ctx, o, opts...); client.IgnoreNotFound(err) != nil {
			s.log.Error(err, "cleaning up", "namespace", o.GetNamespace(), "name", o.GetName())
		}
	}
}

// resume serves a start with cloudSessionID: the existing session, once it
// is Ready.
func (s *server) resume(w http.ResponseWriter, r *http.Request, project apikey.Project, id string, stream bool) {
	key := types.NamespacedName{Namespace: project.Namespace, Name: id}
	wake, cancel := s.hub.subscribe(key)
	defer cancel()
	// The API server, not the cache: a session ended a moment ago (maybe by
	// this very client, through this pod) may still look Ready in the cache,
	// and resuming it would hand out a session that is going away.
	bs := &v1alpha1.BrowserSession{}
	err := errNotFound
	if len(validation.IsDNS1123Label(id)) == 0 {
		err = s.opts.APIReader.Get(r.Context(), key, bs)
	}
	if apierrors.IsNotFound(err) || errors.Is(err, errNotFound) {
		writeSessionNotFound(w)
		return
	}
	if err != nil {
		s.log.Error(err, "resuming session", "namespace", project.Namespace)
		writeInternal(w)
		return
	}
	if over(bs) {
		writeError(w, http.StatusConflict, CodeSessionEnded, fmt.Sprintf("session %s is %s and cannot be resumed", id, strings.ToLower(string(phaseOfEnded(bs)))))
		return
	}
	s.await(w, r, key, wake, time.Time{}, stream)
}

// phaseOfEnded names the state of a session that is over; a session asked
// to end whose controller has not caught up yet is Ending.
func phaseOfEnded(bs *v1alpha1.BrowserSession) v1alpha1.BrowserSessionPhase {
	p := phaseOf(bs)
	if p != v1alpha1.BrowserSessionEnded && p != v1alpha1.BrowserSessionFailed {
		return v1alpha1.BrowserSessionEnding
	}
	return p
}

// await waits for the session to be Ready, Failed, over, or for the start
// timeout, re-reading the cache each time the informer reports a change, and
// answers accordingly; a streamed start reports each phase the session goes
// through as a log line. A non-zero arrived says this request, which
// arrived then, made the session: if the client never learns its id
// (timeout, client gone), the session is ended rather than left to hold a
// browser until its own timeout; once it does, the time since arrived is
// the start's first answer (startlatency). A resume is no start of a
// session, and is not observed.
func (s *server) await(w http.ResponseWriter, r *http.Request, key types.NamespacedName, wake <-chan struct{}, arrived time.Time, stream bool) {
	created := !arrived.IsZero()
	ctx, cancel := s.operationContext(r.Context())
	defer cancel()
	var resp responder = plain{w: w, bare: true}
	if stream {
		st, ok := s.openStream(w)
		if !ok {
			s.abandon(key, created)
			return
		}
		defer st.Close()
		_ = st.Connected()
		resp = streamed{st}
	}
	timer := time.NewTimer(s.opts.StartTimeout)
	defer timer.Stop()
	seen := false
	var lastPhase v1alpha1.BrowserSessionPhase
	var lastMessage string
	for {
		bs := &v1alpha1.BrowserSession{}
		err := s.opts.Client.Get(ctx, key, bs)
		switch {
		case apierrors.IsNotFound(err):
			// Before the first sighting this is the cache lagging behind
			// the create; after it, the session was deleted.
			if seen {
				resp.fail(http.StatusBadGateway, CodeSessionFailed, "session was deleted before it became ready")
				return
			}
		case err != nil:
			if ctx.Err() == nil {
				s.log.Error(err, "reading session", "namespace", key.Namespace, "session", key.Name)
				resp.fail(http.StatusInternalServerError, CodeInternal, "internal error")
			}
			s.abandon(key, created)
			return
		default:
			if !seen {
				// What the session asked for and will not get is said
				// first, in the same words as its UnsupportedSetting
				// condition.
				for _, u := range v1alpha1.UnsupportedSettings(&bs.Spec) {
					resp.log(rpc.LogLine{Category: "session", Message: "unsupported setting: " + u.String(), Level: rpc.LogLevelInfo, Timestamp: time.Now().UTC()})
				}
			}
			seen = true
			if p := phaseOf(bs); p != lastPhase || bs.Status.Message != lastMessage {
				lastPhase, lastMessage = p, bs.Status.Message
				msg := "session is " + string(p)
				if lastMessage != "" {
					msg += ": " + lastMessage
				}
				resp.log(rpc.LogLine{Category: "session", Message: msg, Level: rpc.LogLevelInfo, Timestamp: time.Now().UTC()})
			}
			switch phaseOf(bs) {
			case v1alpha1.BrowserSessionReady:
				if created {
					if err := s.claim(ctx, bs); err != nil {
						s.log.Error(err, "claiming session", "namespace", key.Namespace, "session", key.Name)
						s.abandon(key, created)
						resp.fail(http.StatusInternalServerError, CodeInternal, "internal error")
						return
					}
				}
				resp.succeed(startData{SessionID: key.Name, CDPURL: s.cdpURL(r, bs), Available: true}, "", nil)
				if created {
					s.opts.Metrics.ObserveFirstAnswer(bs.Status.Pool, time.Since(arrived))
				}
				return
			case v1alpha1.BrowserSessionFailed:
				msg := bs.Status.Message
				if msg == "" {
					msg = "session failed to start"
				}
				resp.fail(http.StatusBadGateway, CodeSessionFailed, msg)
				return
			case v1alpha1.BrowserSessionEnding, v1alpha1.BrowserSessionEnded:
				resp.fail(http.StatusConflict, CodeSessionEnded, "session ended before it became ready")
				return
			}
		}
		select {
		case <-wake:
		case <-timer.C:
			s.abandon(key, created)
			resp.fail(http.StatusGatewayTimeout, CodeStartTimeout,
				fmt.Sprintf("session did not become ready within %s", s.opts.StartTimeout))
			return
		case <-ctx.Done():
			s.abandon(key, created)
			if errors.Is(context.Cause(ctx), errShuttingDown) {
				resp.fail(http.StatusServiceUnavailable, CodeUnavailable, "the API server is shutting down; retry the call")
			}
			return
		}
	}
}

// claimMargin is how long after the start timeout a session's claim
// deadline falls: time for the claim's patch and the reply.
const claimMargin = 30 * time.Second

// claimPatch removes the claim deadline: the client gets the id next.
var claimPatch = client.RawPatch(types.MergePatchType,
	[]byte(`{"metadata":{"annotations":{"`+v1alpha1.AnnotationClaimDeadline+`":null}}}`))

// claim removes the session's claim deadline, just before its id goes to
// the client that asked for it.
func (s *server) claim(ctx context.Context, bs *v1alpha1.BrowserSession) error {
	if _, ok := bs.Annotations[v1alpha1.AnnotationClaimDeadline]; !ok {
		return nil
	}
	if err := s.opts.Client.Patch(ctx, bs, claimPatch); err != nil {
		return fmt.Errorf("removing the claim deadline: %w", err)
	}
	return nil
}

// abandon ends a session this request created but whose id the client did
// not receive.
func (s *server) abandon(key types.NamespacedName, created bool) {
	if !created {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	bs := &v1alpha1.BrowserSession{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := s.opts.Client.Patch(ctx, bs, endPatch); client.IgnoreNotFound(err) != nil {
		s.log.Error(err, "ending abandoned session", "namespace", key.Namespace, "session", key.Name)
	}
}

// endPatch ends a session. A merge patch touches only spec.ended, so it
// neither conflicts with the controller's status writes nor needs a read.
var endPatch = client.RawPatch(types.MergePatchType, []byte(`{"spec":{"ended":true}}`))

// end serves POST /v1/sessions/{id}/end.
func (s *server) end(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if !emptyBody(body) {
		writeIssues(w, "end takes no request body", []serverv1.Issue{{Path: "", Message: "request body must be empty"}})
		return
	}
	bs, ok := s.pathSession(w, r, project)
	if !ok {
		return
	}
	if !bs.Spec.Ended {
		err := s.opts.Client.Patch(r.Context(), bs, endPatch)
		if apierrors.IsNotFound(err) {
			writeSessionNotFound(w)
			return
		}
		if err != nil {
			s.log.Error(err, "ending session", "namespace", bs.Namespace, "session", bs.Name)
			writeInternal(w)
			return
		}
	}
	writeJSON(w, http.StatusOK, success{Success: true})
}

// emptyBody reports whether an end body is empty: nothing, or `{}` with any
// JSON whitespace, which clients that always send a JSON body use for "no
// parameters".
func emptyBody(body []byte) bool {
	b := bytes.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, body)
	return len(b) == 0 || string(b) == "{}"
}

// pathSession returns the project's session that the path names, or
// answers 404 (or 500) itself.
func (s *server) pathSession(w http.ResponseWriter, r *http.Request, project apikey.Project) (*v1alpha1.BrowserSession, bool) {
	bs, err := s.lookup(r.Context(), project.Namespace, r.PathValue("id"))
	if err != nil {
		s.log.Error(err, "getting session", "namespace", project.Namespace)
		writeInternal(w)
		return nil, false
	}
	if bs == nil {
		writeSessionNotFound(w)
		return nil, false
	}
	return bs, true
}

// get serves GET /v1/sessions/{id}.
func (s *server) get(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	bs, ok := s.pathSession(w, r, project)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, success{Success: true, Data: s.view(r, bs)})
}

// metadataPrefix starts the list's userMetadata filter parameters.
const metadataPrefix = "userMetadata."

var phases = []v1alpha1.BrowserSessionPhase{
	v1alpha1.BrowserSessionPending, v1alpha1.BrowserSessionStarting, v1alpha1.BrowserSessionReady,
	v1alpha1.BrowserSessionEnding, v1alpha1.BrowserSessionEnded, v1alpha1.BrowserSessionFailed,
}

// list serves GET /v1/sessions: the project's sessions, filtered.
func (s *server) list(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	query := r.URL.Query()
	var issues []serverv1.Issue
	for param, values := range query {
		switch {
		case param == "phase":
			for _, v := range values {
				if !slices.Contains(phases, v1alpha1.BrowserSessionPhase(v)) {
					issues = append(issues, serverv1.Issue{Path: param, Message: fmt.Sprintf("unknown phase %q; want one of %v", v, phases)})
				}
			}
		case strings.HasPrefix(param, metadataPrefix) && len(param) > len(metadataPrefix):
		case param == "limit" || param == "continue":
		default:
			issues = append(issues, serverv1.Issue{Path: param, Message: "unknown query parameter; want phase, userMetadata.<key>, limit or continue"})
		}
	}
	limit, after, pageIssues := pageOf(query)
	issues = append(issues, pageIssues...)
	if len(issues) > 0 {
		slices.SortFunc(issues, func(a, b serverv1.Issue) int { return strings.Compare(a.Path, b.Path) })
		writeIssues(w, "invalid query", issues)
		return
	}

	var sessions v1alpha1.BrowserSessionList
	if err := s.opts.Client.List(r.Context(), &sessions, client.InNamespace(project.Namespace)); err != nil {
		s.log.Error(err, "listing sessions", "namespace", project.Namespace)
		writeInternal(w)
		return
	}
	out := listData{Sessions: []sessionView{}}
	for i := range sessions.Items {
		v := s.view(r, &sessions.Items[i])
		if matches(v, query) {
			out.Sessions = append(out.Sessions, v)
		}
	}
	slices.SortStableFunc(out.Sessions, func(a, b sessionView) int { return compareListed(a, b) })
	if after != nil {
		start, _ := slices.BinarySearchFunc(out.Sessions, *after, func(v sessionView, c listCursor) int {
			if cmp := compareListed(v, sessionView{SessionID: c.name, CreatedAt: metav1.NewTime(c.created)}); cmp != 0 {
				return cmp
			}
			return -1 // the cursor's own session is on the previous page
		})
		out.Sessions = out.Sessions[start:]
	}
	if len(out.Sessions) > limit {
		out.Sessions = out.Sessions[:limit]
		last := out.Sessions[limit-1]
		out.Continue = listCursor{created: last.CreatedAt.Time, name: last.SessionID}.String()
	}
	writeJSON(w, http.StatusOK, success{Success: true, Data: out})
}

// compareListed orders the list: oldest first, then by id.
func compareListed(a, b sessionView) int {
	if c := a.CreatedAt.Compare(b.CreatedAt.Time); c != 0 {
		return c
	}
	return strings.Compare(a.SessionID, b.SessionID)
}

// The list's pages: limit sessions each (DefaultListLimit unless asked,
// at most MaxListLimit); continue is the opaque cursor a page ends with.
const (
	DefaultListLimit = 100
	MaxListLimit     = 500
)

// listCursor is the last session of a page: the next page starts after it.
// Sessions created or deleted in between do not shift the pages.
type listCursor struct {
	created time.Time
	name    string
}

func (c listCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.created.Unix(), 10) + "/" + c.name))
}

func parseCursor(s string) (*listCursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	sec, name, ok := strings.Cut(string(raw), "/")
	n, err := strconv.ParseInt(sec, 10, 64)
	if !ok || err != nil || len(validation.IsDNS1123Label(name)) > 0 {
		return nil, false
	}
	return &listCursor{created: time.Unix(n, 0), name: name}, true
}

// pageOf reads limit and continue.
func pageOf(query map[string][]string) (limit int, after *listCursor, issues []serverv1.Issue) {
	limit = DefaultListLimit
	if v, ok := query["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if len(v) != 1 || err != nil || n < 1 || n > MaxListLimit {
			issues = append(issues, serverv1.Issue{Path: "limit", Message: fmt.Sprintf("must be one integer from 1 to %d", MaxListLimit)})
		}
		limit = n
	}
	if v, ok := query["continue"]; ok {
		c, valid := parseCursor(v[0])
		if len(v) != 1 || !valid {
			issues = append(issues, serverv1.Issue{Path: "continue", Message: "must be the continue value of the previous page"})
		}
		after = c
	}
	return limit, after, issues
}

// matches applies the list's filters (already validated) to one session.
func matches(v sessionView, query map[string][]string) bool {
	for param, values := range query {
		if param == "limit" || param == "continue" {
			continue
		}
		if param == "phase" {
			if !slices.Contains(values, string(v.Phase)) {
				return false
			}
			continue
		}
		raw, ok := v.UserMetadata[strings.TrimPrefix(param, metadataPrefix)]
		if !ok || !slices.ContainsFunc(values, func(want string) bool { return metadataEquals(raw, want) }) {
			return false
		}
	}
	return true
}

// metadataEquals compares a metadata value with a query value: a string
// value by its text, any other value by its compact JSON.
func metadataEquals(raw json.RawMessage, want string) bool {
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return str == want
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return false
	}
	return buf.String() == want
}

// issuesOf turns an Invalid status from the API server into issues.
func issuesOf(st metav1.Status) []serverv1.Issue {
	var issues []serverv1.Issue
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			issues = append(issues, serverv1.Issue{Path: strings.TrimPrefix(c.Field, "spec."), Message: c.Message})
		}
	}
	if len(issues) == 0 {
		issues = []serverv1.Issue{{Path: "", Message: st.Message}}
	}
	return issues
}
