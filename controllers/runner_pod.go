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
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/tracing"
)

// Labels on every object the manager creates for a session, beside
// v1alpha1.LabelManagedBy and v1alpha1.LabelSession.
const ()

// RunnerConfig is how the manager builds runner pods. It comes from the
// runner section of the manager's Configuration file (NewOptions).
type RunnerConfig struct {
	// Image is the runner image.
	Image string
	// ImagePullPolicy is the runner image's pull policy.
	ImagePullPolicy corev1.PullPolicy
	// Command and Args replace the image's entrypoint and arguments when set.
	Command []string
	Args    []string
	// Resources are the runner container's requests and limits.
	Resources corev1.ResourceRequirements
	// ShmSize bounds the memory-backed /dev/shm Chromium uses.
	ShmSize resource.Quantity
	// TmpSize bounds the writable /tmp (profile, downloads, caches).
	TmpSize resource.Quantity
	// RunAsUser is the non-root user the runner runs as.
	RunAsUser int64
	// TerminationGracePeriodSeconds is how long the runner has to close its
	// browser when its pod is deleted.
	TerminationGracePeriodSeconds int64
	// NodeSelector, Tolerations and RuntimeClassName place runner pods.
	NodeSelector     map[string]string
	Tolerations      []corev1.Toleration
	RuntimeClassName string
	// Regions place the runner of a session that names a region on the
	// region's nodes (region.go).
	Regions RegionConfig
	// ModelBaseURLs are the endpoints runners use, by provider, for a
	// session whose model names none: a self-hosted OpenAI-compatible
	// server (vLLM, Ollama, LiteLLM) or a proxy in place of the provider's
	// own API. With ModelGateway they apply only to sessions with a key,
	// headers or auth of their own: the others go through the API's model
	// gateway.
	ModelBaseURLs map[string]string
	// AllowedExecutables are the browser binaries of the runner image a
	// session's launchOptions.executablePath may name. The manager fails a
	// session naming another before it creates a pod, and passes the list
	// to each runner (rpc.FlagAllowedExecutable). Empty: none.
	AllowedExecutables []string
	// EgressAllowCIDRs are ranges runners may connect to although they are
	// not public (an in-cluster model server; loopback on make dev); each
	// runner gets them as its --egress-allow-cidr (runner/egress).
	EgressAllowCIDRs []netip.Prefix
	// EgressClusterCIDRs are the cluster's pod and service ranges, which
	// runners refuse even where they are public (--egress-cluster-cidr).
	EgressClusterCIDRs []netip.Prefix
	// SearchURL is the API's search relay, which runners get as
	// --search-url; empty: agents have no search tool.
	SearchURL string
	// ServicesURL is the API's runner listener, which runners get as
	// --services-url for the cache and the gateway; empty: neither.
	ServicesURL string
	// ModelGateway says the API at ServicesURL serves the model gateway:
	// runners get --model-gateway, and call models without credentials of
	// their own through it.
	ModelGateway bool
	// OTLPEndpoint is the collector runners export their spans to
	// (runnerTraceEnv); empty: none.
	OTLPEndpoint string
}

// RunnerSummaryFinalizer keeps a deleted runner pod until the manager has
// copied the summary of the runner's history from its container's
// termination message into the session's status (or found none): a
// kubelet deletes a pod for good right after it reports its container
// stopped, sooner than a reconcile may look.
const RunnerSummaryFinalizer = "browserfleet.io/runner-summary"

// runnerContainer names the runner pod's one container.
const runnerContainer = "runner"

// statusVolume is the runner's small writable volume at rpc.StatusDir, for
// its termination message.
const statusVolume = "status"

func runnerLabels(session *v1alpha1.BrowserSession) map[string]string {
	return map[string]string{
		v1alpha1.LabelManagedBy: v1alpha1.ManagedBy,
		v1alpha1.LabelComponent: v1alpha1.ComponentRunner,
		v1alpha1.LabelSession:   session.Name,
	}
}

// newRunnerToken returns a random token of 256 bits.
func newRunnerToken() ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("reading random bytes: %w", err)
	}
	return []byte(base64.RawURLEncoding.EncodeToString(b)), nil
}

// createTokenSecret creates, controlled by owner, the token Secret build
// makes with a new token, unless one of the name exists already: then it
// must be one ours accepts, read past the cache (the manager caches no
// token Secrets).
func createTokenSecret(ctx context.Context, c client.Client, reader client.Reader, scheme *runtime.Scheme, owner client.Object,
	build func(token []byte) *corev1.Secret, ours func(existing *corev1.Secret) bool) error {
	token, err := newRunnerToken()
	if err != nil {
		return err
	}
	secret := build(token)
	if err := controllerutil.SetControllerReference(owner, secret, scheme); err != nil {
		return fmt.Errorf("owning token secret: %w", err)
	}
	err = c.Create(ctx, secret)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating token secret %s: %w", secret.Name, err)
	}
	existing := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(secret), existing); err != nil {
		return fmt.Errorf("getting token secret %s: %w", secret.Name, err)
	}
	if !ours(existing) {
		return fmt.Errorf("token secret %s exists and does not belong to %s", secret.Name, owner.GetName())
	}
	return nil
}

// constructTokenSecret builds the Secret that holds a session's runner token.
// The owner reference is set by the caller.
func constructTokenSecret(session *v1alpha1.BrowserSession, token []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      v1alpha1.RunnerTokenSecretName(session.Name),
			Namespace: session.Namespace,
			Labels:    runnerLabels(session),
		},
		Type:      corev1.SecretTypeOpaque,
		Immutable: ptr.To(true),
		Data:      map[string][]byte{rpc.TokenSecretKey: token},
	}
}

// effectiveSpec is the session's spec as its runner is to apply it: the
// operator's endpoint for the model's provider filled in where the session
// names none. The BrowserSession itself keeps what its author wrote.
//
// userMetadata stays out: the runner has no use for it, and it is the
// caller's free-form data, up to the size of a resource, which an
// environment variable cannot hold (nor should every process of the pod
// read it).
func effectiveSpec(spec *v1alpha1.BrowserSessionSpec, cfg RunnerConfig) *v1alpha1.BrowserSessionSpec {
	out := spec.DeepCopy()
	if out.CloudSessionCreateParams != nil {
		out.CloudSessionCreateParams.UserMetadata = nil
	}
	if out.Model.BaseURL != "" || len(cfg.ModelBaseURLs) == 0 {
		return out
	}
	if gatewayOf(cfg) && !hasOwnCredentials(&out.Model) {
		// The runner calls such a model through the API's model gateway
		// (docs/gateway.md), whose own base URLs say where it goes; an
		// endpoint here would make it call the provider without a key.
		return out
	}
	provider := out.Model.Provider
	if provider == "" {
		provider, _, _ = strings.Cut(out.Model.Name, "/")
	}
	if endpoint, ok := cfg.ModelBaseURLs[provider]; ok {
		out.Model.BaseURL = endpoint
	}
	return out
}

// hasOwnCredentials reports whether a session's model brings a key,
// headers or auth of its own, so that its runner calls the provider
// itself rather than through the model gateway.
func hasOwnCredentials(m *v1alpha1.ModelSpec) bool {
	return m.APIKeySecretRef != nil || m.HeadersSecretRef != nil || len(m.Headers) > 0 || m.Auth != nil
}

// Volumes of the runner pod that carry its secrets (runner/rpc's contract).
const (
	secretsVolume      = "secrets"
	modelHeadersVolume = "model-headers"
)

// secretFileMode is the mode of the runner's secret files: the kubelet adds
// group read for the pod's fsGroup, which is the runner's own group.
const secretFileMode int32 = 0o400

// runnerIdentity is whom a runner pod serves: one session (a cold start),
// or a warm pool until a session claims it (browserpool_controller.go).
type runnerIdentity struct {
	// name is the pod's name; generateName its prefix when name is empty.
	name, generateName string
	namespace          string
	labels             map[string]string
	// session is the session's name; empty for a pool's runner.
	session string
	// pool is the pool's name; empty for a session's runner.
	pool string
	// tokenSecret holds the token the runner accepts calls with: the
	// session's, or the pool's until the claim hands it the session's.
	tokenSecret string
	// spec is the session's spec, or the pool's template as one.
	spec *v1alpha1.BrowserSessionSpec
	// finalizers of the pod.
	finalizers []string
}

// sessionRunner is the identity of a session's own runner pod.
func sessionRunner(session *v1alpha1.BrowserSession) runnerIdentity {
	return runnerIdentity{
		name:        v1alpha1.RunnerPodName(session.Name),
		namespace:   session.Namespace,
		labels:      runnerLabels(session),
		session:     session.Name,
		tokenSecret: v1alpha1.RunnerTokenSecretName(session.Name),
		spec:        &session.Spec,
		finalizers:  []string{RunnerSummaryFinalizer},
	}
}

// constructRunnerPod builds a session's runner pod. The owner reference is
// set by the caller.
func constructRunnerPod(session *v1alpha1.BrowserSession, cfg RunnerConfig) (*corev1.Pod, error) {
	return buildRunnerPod(sessionRunner(session), cfg)
}

// buildRunnerPod builds a runner pod. The pod runs untrusted web content,
// so it gets no API credentials, no privileges and no writable root
// filesystem. Its environment holds no secret: the token and every secret
// the spec references are files on read-only, memory-backed volumes (see
// secretVolumes). Its one writable path besides /tmp and /dev/shm is the
// small status volume of its termination message, where the runner leaves
// the summary of its history (runner_summary.go).
func buildRunnerPod(id runnerIdentity, cfg RunnerConfig) (*corev1.Pod, error) {
	spec, err := json.Marshal(effectiveSpec(id.spec, cfg))
	if err != nil {
		return nil, fmt.Errorf("encoding session spec: %w", err)
	}
	env := []corev1.EnvVar{
		{Name: rpc.EnvSessionName, Value: id.session},
		{Name: rpc.EnvNamespace, Value: id.namespace},
		{Name: rpc.EnvSession, Value: string(spec)},
		{Name: rpc.EnvPodIP, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		// Chromium writes its profile and caches under $HOME; the root
		// filesystem is read-only.
		{Name: "HOME", Value: "/tmp"},
		// Where the runner leaves the summary of its history.
		{Name: rpc.EnvTerminationMessagePath, Value: rpc.TerminationMessagePath},
	}
	if id.pool != "" {
		env = append(env, corev1.EnvVar{Name: rpc.EnvPool, Value: id.pool})
	}
	volumes, mounts, dirEnv := secretVolumes(id.spec, id.tokenSecret)
	env = append(env, dirEnv...)
	env = append(env, runnerTraceEnv(id, cfg)...)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:         id.name,
			GenerateName: id.generateName,
			Namespace:    id.namespace,
			Labels:       id.labels,
			Finalizers:   id.finalizers,
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To(cfg.TerminationGracePeriodSeconds),
			NodeSelector:                  cfg.NodeSelector,
			Affinity:                      regionAffinity(id.spec, cfg),
			Tolerations:                   cfg.Tolerations,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(cfg.RunAsUser),
				RunAsGroup:     ptr.To(cfg.RunAsUser),
				FSGroup:        ptr.To(cfg.RunAsUser),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            runnerContainer,
				Image:           cfg.Image,
				ImagePullPolicy: cfg.ImagePullPolicy,
				Command:         cfg.Command,
				Args:            runnerArgs(cfg),
				Env:             env,
				Ports:           []corev1.ContainerPort{{Name: rpc.PortName, ContainerPort: rpc.Port, Protocol: corev1.ProtocolTCP}},
				// The summary of the runner's history, or, when a failed
				// runner left none, the end of its log.
				TerminationMessagePath:   rpc.TerminationMessagePath,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Resources:                *cfg.Resources.DeepCopy(),
				ReadinessProbe: &corev1.Probe{
					ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: rpc.HealthPath, Port: intstr.FromString(rpc.PortName)},
					},
					PeriodSeconds:    2,
					TimeoutSeconds:   2,
					FailureThreshold: 3,
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Privileged:               ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					RunAsNonRoot:             ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				VolumeMounts: append([]corev1.VolumeMount{
					{Name: "dshm", MountPath: "/dev/shm"},
					{Name: "tmp", MountPath: "/tmp"},
					{Name: statusVolume, MountPath: rpc.StatusDir},
				}, mounts...),
			}},
			Volumes: append([]corev1.Volume{
				{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(cfg.ShmSize)}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(cfg.TmpSize)}}},
				{Name: statusVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}},
			}, volumes...),
		},
	}
	if cfg.RuntimeClassName != "" {
		pod.Spec.RuntimeClassName = ptr.To(cfg.RuntimeClassName)
	}
	return pod, nil
}

// runnerArgs are the runner container's arguments: the manager's own
// (egress ranges, allowed executables, the search relay), then the
// configured ones.
func runnerArgs(cfg RunnerConfig) []string {
	// The manager's own flags first: a stray positional argument in
	// cfg.Args cannot hide them from the runner's flag parsing.
	args := rpc.EgressArgs(cfg.EgressAllowCIDRs, cfg.EgressClusterCIDRs)
	for _, p := range cfg.AllowedExecutables {
		args = append(args, "--"+rpc.FlagAllowedExecutable+"="+p)
	}
	if cfg.SearchURL != "" {
		args = append(args, "--"+rpc.FlagSearchURL+"="+cfg.SearchURL)
	}
	if cfg.ServicesURL != "" {
		args = append(args, "--"+rpc.FlagServicesURL+"="+cfg.ServicesURL)
	}
	if gatewayOf(cfg) {
		args = append(args, "--"+rpc.FlagModelGateway)
	}
	return append(args, cfg.Args...)
}

// runnerTraceEnv is the runner's trace export (package tracing's OTEL_*
// variables), when cfg names a collector: it follows the API's sampling
// decision, and its spans name the session's namespace, pod and id. The
// collector is the operator's: no secret goes with it.
func runnerTraceEnv(id runnerIdentity, cfg RunnerConfig) []corev1.EnvVar {
	if cfg.OTLPEndpoint == "" {
		return nil
	}
	// Names of Kubernetes objects need no escaping in the W3C baggage
	// format of OTEL_RESOURCE_ATTRIBUTES. A pool's runner is named by its
	// pool: its pod's name is the API server's to choose, and its session
	// comes later.
	attrs := fmt.Sprintf("k8s.namespace.name=%s,k8s.pod.name=%s,browserfleet.session.id=%s",
		id.namespace, id.name, id.session)
	if id.pool != "" {
		attrs = fmt.Sprintf("k8s.namespace.name=%s,browserfleet.pool=%s", id.namespace, id.pool)
	}
	return []corev1.EnvVar{
		{Name: tracing.EnvEndpoint, Value: cfg.OTLPEndpoint},
		{Name: tracing.EnvProtocol, Value: tracing.ProtocolHTTPProtobuf},
		{Name: tracing.EnvTracesSampler, Value: rpc.TracesSamplerFollowCaller},
		{Name: tracing.EnvResourceAttrs, Value: attrs},
	}
}

// executableRefusal says why the session's launchOptions.executablePath
// cannot run, or "" when it can (none, or one the operator allows).
func executableRefusal(spec *v1alpha1.BrowserSessionSpec, cfg RunnerConfig) string {
	if spec.Browser == nil || spec.Browser.LaunchOptions == nil {
		return ""
	}
	path := spec.Browser.LaunchOptions.ExecutablePath
	if rpc.ExecutableAllowed(path, cfg.AllowedExecutables) {
		return ""
	}
	// The path may be 4096 bytes; status.message holds as many.
	if len(path) > 256 {
		path = path[:256] + "..."
	}
	return fmt.Sprintf("spec.browser.launchOptions.executablePath %q is not a browser this installation allows (the manager's runner.allowedExecutables); no runner pod was created", path)
}

// secretVolumes hands the runner its secrets as files, as runner/rpc lays
// them out: one projected volume at rpc.SecretsDir with the token and each
// referenced Secret key under its fixed file name, and a Secret volume at
// rpc.ModelHeadersDir for the model's header Secret (one file per header).
// All are read-only, memory-backed (the kubelet keeps Secret volumes in
// tmpfs) and mode 0400 under the pod's fsGroup. dirEnv names the
// directories for the runner.
func secretVolumes(spec *v1alpha1.BrowserSessionSpec, tokenSecret string) (volumes []corev1.Volume, mounts []corev1.VolumeMount, dirEnv []corev1.EnvVar) {
	sources := []corev1.VolumeProjection{secretProjection(tokenSecret, rpc.TokenSecretKey, rpc.FileToken)}
	for _, ref := range sessionSecretRefs(spec) {
		if ref.file != "" {
			sources = append(sources, secretProjection(ref.name, ref.key, ref.file))
		}
	}
	volumes = append(volumes, corev1.Volume{Name: secretsVolume, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: sources, DefaultMode: ptr.To(secretFileMode)},
	}})
	mounts = append(mounts, corev1.VolumeMount{Name: secretsVolume, MountPath: rpc.SecretsDir, ReadOnly: true})
	dirEnv = append(dirEnv, corev1.EnvVar{Name: rpc.EnvSecretsDir, Value: rpc.SecretsDir})

	if ref := spec.Model.HeadersSecretRef; ref != nil {
		volumes = append(volumes, corev1.Volume{Name: modelHeadersVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: ref.Name, DefaultMode: ptr.To(secretFileMode)},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: modelHeadersVolume, MountPath: rpc.ModelHeadersDir, ReadOnly: true})
		dirEnv = append(dirEnv, corev1.EnvVar{Name: rpc.EnvModelHeadersDir, Value: rpc.ModelHeadersDir})
	}
	return volumes, mounts, dirEnv
}

func secretProjection(name, key, file string) corev1.VolumeProjection {
	return corev1.VolumeProjection{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: name},
		Items:                []corev1.KeyToPath{{Key: key, Path: file}},
	}}
}

// gatewayOf says whether runners call models through the API's model
// gateway: the API serves one, and runners can reach its listener.
func gatewayOf(cfg RunnerConfig) bool { return cfg.ModelGateway && cfg.ServicesURL != "" }
