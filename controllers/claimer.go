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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/runnertoken"
)

// The hand-over's fixed bounds (docs/pools.md).
const (
	// handoverAttempts is how many claim calls in a row may fail to reach
	// the runner before the session fails ClaimFailed.
	handoverAttempts = 5
	// handoverBackoff is the wait after the first failed attempt; it
	// doubles after each.
	handoverBackoff = 200 * time.Millisecond
	// handoverCallTimeout bounds each claim call, secrets read included.
	handoverCallTimeout = 15 * time.Second
	// maxHandovers is how many hand-overs run at once; more wait.
	maxHandovers = 32
)

// Claimer hands claimed runners their sessions. A session claims a pooled
// runner in Reconcile with one conditional update of the pod
// (claimWarmRunner); the runner then needs the session itself (its id,
// spec, token and model secrets), which takes a call to the runner, and no
// network call runs inside Reconcile. Handover starts that call in a
// worker and answers at once; the worker's end enqueues the session again.
// A hand-over lost to a restart of the manager is made again: the runner
// answers a repeated claim of the same session as it did the first.
type Claimer struct {
	reader client.Reader
	runner RunnerConfig
	log    logr.Logger
	base   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	slots  chan struct{}

	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	runs  map[types.UID]*handover
}

// handover is where the Claimer stands with one session.
type handover struct {
	done bool
	// failure says why the hand-over failed for good; "" while it runs
	// or when it is done.
	failure string
}

// NewClaimer returns a Claimer that reads Secrets with reader (past the
// cache) and calls runners with the runner RPC's client.
func NewClaimer(reader client.Reader, runner RunnerConfig, log logr.Logger) *Claimer {
	// The workers outlive the Reconcile that starts them; Start ends them
	// with the manager.
	base, stop := context.WithCancel(context.Background())
	return &Claimer{
		reader: reader, runner: runner, log: log, base: base, stop: stop,
		slots: make(chan struct{}, maxHandovers), runs: map[types.UID]*handover{},
	}
}

// Start waits for the manager to stop, then stops every worker and waits
// for them.
func (c *Claimer) Start(ctx context.Context) error {
	<-ctx.Done()
	c.stop()
	c.wg.Wait()
	return nil
}

// NeedLeaderElection keeps the Claimer to the leader, with the controller
// it serves.
func (c *Claimer) NeedLeaderElection() bool { return true }

// Source is the controller's source of the Claimer's wake-ups: a
// hand-over's end enqueues its session.
func (c *Claimer) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.queue = q
		return nil
	})
}

// Handover reports whether the session's claimed runner has the session,
// starting the hand-over when none runs. failure is set when it failed
// for good.
func (c *Claimer) Handover(s *v1alpha1.BrowserSession, pod *corev1.Pod) (done bool, failure string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.runs[s.UID]; ok {
		return h.done, h.failure
	}
	c.runs[s.UID] = &handover{}
	job := handoverJob{
		session:  s.DeepCopy(),
		pool:     pod.Labels[v1alpha1.LabelPool],
		endpoint: "http://" + runnerHostPort(pod.Status.PodIP),
	}
	c.wg.Add(1)
	go c.work(job)
	return false, ""
}

// Failure says why the session's hand-over failed for good, or "".
func (c *Claimer) Failure(uid types.UID) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.runs[uid]; ok {
		return h.failure
	}
	return ""
}

// Forget drops what the Claimer knows of a session: it is ready, over or
// gone.
func (c *Claimer) Forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.runs, uid)
}

type handoverJob struct {
	session  *v1alpha1.BrowserSession
	pool     string
	endpoint string
}

func (c *Claimer) work(job handoverJob) {
	defer c.wg.Done()
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-c.base.Done():
		return
	}
	log := c.log.WithValues("session", klog.KObj(job.session), "pool", job.pool)
	var failure string
	var last error
	for attempt := 1; ; attempt++ {
		err := c.claim(job)
		if err == nil {
			log.V(1).Info("handed the runner its session")
			break
		}
		last = err
		var rerr *rpc.Error
		if errors.As(err, &rerr) && !retryable(rerr.Code) {
			failure = err.Error()
			break
		}
		var sp *secretProblem
		if errors.As(err, &sp) {
			failure = sp.message
			break
		}
		if attempt >= handoverAttempts || !sleepCtx(c.base, handoverBackoff<<(attempt-1)) {
			failure = fmt.Sprintf("%d attempts failed, the last: %v", attempt, last)
			break
		}
	}
	if c.base.Err() != nil {
		return
	}
	if failure != "" {
		log.Info("could not hand the runner its session", "err", failure)
	}
	c.mu.Lock()
	if h, ok := c.runs[job.session.UID]; ok {
		h.done, h.failure = failure == "", failure
	}
	q := c.queue
	c.mu.Unlock()
	if q != nil {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: job.session.Namespace, Name: job.session.Name}})
	}
}

// claim makes one claim call: the session's token and model secrets, read
// now, go to the runner with the pool's token.
func (c *Claimer) claim(job handoverJob) error {
	ctx, cancel := context.WithTimeout(c.base, handoverCallTimeout)
	defer cancel()
	s := job.session
	poolToken, err := readToken(ctx, c.reader, s.Namespace, v1alpha1.PoolTokenSecretName(job.pool))
	if err != nil {
		return err
	}
	token, err := runnertoken.Read(ctx, c.reader, s)
	if err != nil {
		return fmt.Errorf("reading the session's runner token: %w", err)
	}
	secrets, err := readSecrets(ctx, c.reader, s, sessionSecretRefs(&s.Spec))
	if err != nil {
		return err
	}
	req := rpc.ClaimRequest{
		Session:   s.Name,
		Namespace: s.Namespace,
		Spec:      *effectiveSpec(&s.Spec, c.runner),
		Token:     token,
		Secrets:   claimSecrets(&s.Spec.Model, secrets),
	}
	if _, err := rpc.NewClient(job.endpoint, poolToken, nil).Claim(ctx, req); err != nil {
		return fmt.Errorf("claiming the runner: %w", err)
	}
	return nil
}

// claimSecrets are a session's model secrets as a claim carries them,
// read as the runner reads its own secret files.
func claimSecrets(m *v1alpha1.ModelSpec, secrets map[string]*corev1.Secret) rpc.ClaimSecrets {
	var out rpc.ClaimSecrets
	if r := m.APIKeySecretRef; r != nil {
		out.ModelAPIKey = secretValue(secrets[r.Name].Data[r.Key])
	}
	if m.Auth != nil && m.Auth.CredentialsSecretRef != nil {
		r := m.Auth.CredentialsSecretRef
		out.ModelCredentials = secretValue(secrets[r.Name].Data[r.Key])
	}
	if r := m.HeadersSecretRef; r != nil {
		out.ModelHeaders = map[string]string{}
		for k, v := range secrets[r.Name].Data {
			out.ModelHeaders[k] = secretValue(v)
		}
	}
	return out
}

// readToken reads a token Secret's token.
func readToken(ctx context.Context, reader client.Reader, namespace, name string) (string, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", &secretProblem{message: fmt.Sprintf("the pool's token Secret %s is gone", name)}
		}
		return "", fmt.Errorf("getting token Secret %s: %w", name, err)
	}
	tok := strings.TrimSpace(string(secret.Data[rpc.TokenSecretKey]))
	if tok == "" {
		return "", &secretProblem{message: fmt.Sprintf("the pool's token Secret %s holds no token", name)}
	}
	return tok, nil
}

// sleepCtx waits d; false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
