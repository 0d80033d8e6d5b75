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

package v1alpha1

// Labels browserfleet puts on the objects it creates. The manager, the API
// pod and the key store select on them, so they are defined once, here.
const (
	// LabelManagedBy marks objects browserfleet created; the manager's and
	// the API pod's caches only see Pods and Secrets that carry it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy = "browserfleet"
	// LabelSession is the name of the BrowserSession an object belongs to.
	LabelSession = "browserfleet.io/session"
	// LabelComponent says which part of browserfleet an object belongs to.
	LabelComponent = "app.kubernetes.io/component"
	// ComponentRunner is LabelComponent's value on runner pods and secrets.
	ComponentRunner = "runner"

	// LabelSessionSecret opts a Secret in to being referenced by the
	// BrowserSessions and AgentTasks of its namespace: its value is
	// SessionSecretAny, for every session and task of the namespace, or the
	// name of the one session or task that may reference it. A session or
	// task that references a Secret without it does not start
	// (docs/sessions.md), so that the right to create sessions is not the
	// right to send any Secret of the namespace to an endpoint of the
	// session author's choosing. The manager caches the metadata of the
	// Secrets that carry it, nothing else of them.
	LabelSessionSecret = "browserfleet.io/session-secret"
	// SessionSecretAny is the LabelSessionSecret value that lets every
	// session and task of the namespace reference the Secret.
	SessionSecretAny = "true"

	// AnnotationClaimDeadline is set by the /v1 API on a session it creates:
	// an RFC 3339 time by which the client that asked for the session must
	// have received its id. The API removes it just before it hands the id
	// over; the manager ends a session whose deadline passed while the
	// annotation is still there (reason Unclaimed), so that a start
	// abandoned by an API restart does not run until its timeout. Sessions
	// created with kubectl have none.
	AnnotationClaimDeadline = "browserfleet.io/claim-deadline"

	// LabelPool is the name of the BrowserPool that started a runner pod.
	// It stays on the pod after a session claims it; the pool's own
	// (unclaimed) pods are those it controls.
	LabelPool = "browserfleet.io/pool"
	// LabelLaunchHash is LaunchHash of the template a pooled runner pod was
	// started with; a session whose launch-time settings hash the same
	// claims one.
	LabelLaunchHash = "browserfleet.io/launch-hash"
)

// RunnerPodName is the name of a session's runner pod.
func RunnerPodName(sessionName string) string { return sessionName + "-runner" }

// PoolTokenSecretName is the name of the Secret that holds the token a
// pool's unclaimed runners accept their claim with.
func PoolTokenSecretName(poolName string) string { return poolName + "-pool-token" }

// RunnerTokenSecretName is the name of the Secret that holds a session's
// runner token.
func RunnerTokenSecretName(sessionName string) string { return sessionName + "-runner-token" }
