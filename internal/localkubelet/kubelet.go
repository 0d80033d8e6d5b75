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

package localkubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// Defaults of Options.
const (
	DefaultNodeName    = "localkubelet"
	DefaultStopTimeout = 10 * time.Second
)

// Image is what a container image runs locally: images are not pulled, so
// each image a pod uses needs one.
type Image struct {
	// Entrypoint is the image's ENTRYPOINT as a local argv. A container's
	// command replaces it.
	Entrypoint []string
	// Args is the image's CMD: the default arguments, which a container's
	// args replace.
	Args []string
	// Env is the image's environment; a container's env overrides it.
	Env map[string]string
}

// Options configure a Kubelet.
type Options struct {
	// Config reaches the API server. Required.
	Config *rest.Config
	// NodeName is the Node the Kubelet registers and binds pods to.
	// Default DefaultNodeName.
	NodeName string
	// Namespaces limits the pods it runs to these namespaces. Default: all.
	Namespaces []string
	// Selector selects the pods it runs. Default: the pods browserfleet
	// manages (v1alpha1.LabelManagedBy=v1alpha1.ManagedBy).
	Selector labels.Selector
	// Images maps image names, as pods spell them, to what they run.
	Images map[string]Image
	// Paths maps executables as containers name them in command (for
	// example /usr/bin/runner) to local executables.
	Paths map[string]string
	// StateDir holds the pods' directories and the containers' logs. It
	// belongs to the Kubelet: its pods directory is wiped on start.
	// Required.
	StateDir string
	// StopTimeout bounds each process's grace period when Run stops.
	// Default DefaultStopTimeout.
	StopTimeout time.Duration
	// LogOutput, when set, gets the containers' output too, each line
	// prefixed by pod and container.
	LogOutput io.Writer
	// Logger logs what the Kubelet does. Default: discard.
	Logger logr.Logger
}

// Kubelet runs the containers of the pods bound to its node as local
// processes. Make one with New and run it with Run.
type Kubelet struct {
	opts   Options
	log    logr.Logger
	mgr    manager.Manager
	client client.Client
	reader client.Reader
	ips    *ipPool
	logOut io.Writer
	// events wakes the reconciler up for a pod when one of its processes
	// changed state.
	events chan event.GenericEvent
	ready  chan struct{}
	done   chan struct{}

	// tmpRoot holds the pods' directories during Run; podSeq names them.
	tmpRoot string
	podSeq  atomic.Int64
	// root: the Kubelet runs as root, and so runs containers as their
	// pods' users.
	root bool

	mu       sync.Mutex
	runCtx   context.Context
	ran      bool
	stopping bool
	pods     map[types.NamespacedName]*podState
	// procs counts the goroutines that wait for processes.
	procs sync.WaitGroup
}

// New checks opts and sets the Kubelet up; Run starts it.
func New(opts Options) (*Kubelet, error) {
	if opts.Config == nil {
		return nil, errors.New("localkubelet: Options.Config is required")
	}
	if opts.StateDir == "" {
		return nil, errors.New("localkubelet: Options.StateDir is required")
	}
	if opts.NodeName == "" {
		opts.NodeName = DefaultNodeName
	}
	if opts.Selector == nil {
		opts.Selector = labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy})
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	stateDir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("localkubelet: resolving the state directory: %w", err)
	}
	opts.StateDir = stateDir
	for _, dir := range []string{opts.podsDir(), opts.logsDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("localkubelet: creating the state directory: %w", err)
		}
	}
	k := &Kubelet{
		opts:   opts,
		log:    opts.Logger,
		ips:    newIPPool(),
		events: make(chan event.GenericEvent, 1024),
		ready:  make(chan struct{}),
		done:   make(chan struct{}),
		pods:   map[types.NamespacedName]*podState{},
		root:   os.Geteuid() == 0,
	}
	if opts.LogOutput != nil {
		k.logOut = &lockedWriter{w: opts.LogOutput}
	}
	if err := k.setupManager(); err != nil {
		return nil, fmt.Errorf("localkubelet: %w", err)
	}
	return k, nil
}

func (o *Options) podsDir() string { return filepath.Join(o.StateDir, "pods") }
func (o *Options) logsDir() string { return filepath.Join(o.StateDir, "logs") }

func (k *Kubelet) setupManager() error {
	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("building the scheme: %w", err)
	}
	var namespaces map[string]cache.Config
	if len(k.opts.Namespaces) > 0 {
		namespaces = map[string]cache.Config{}
		for _, ns := range k.opts.Namespaces {
			namespaces[ns] = cache.Config{}
		}
	}
	mgr, err := manager.New(k.opts.Config, manager.Options{
		Scheme: scheme,
		Logger: k.log,
		Cache: cache.Options{
			DefaultNamespaces: namespaces,
			ByObject:          map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: k.opts.Selector}},
		},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Test suites run several Kubelets in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	k.mgr, k.client, k.reader = mgr, mgr.GetClient(), mgr.GetAPIReader()
	// Secrets and ConfigMaps are watched by metadata only, to retry the
	// containers waiting for them as soon as they change; their data is
	// read from the API server when a container starts, so that the cache
	// holds none.
	err = builder.ControllerManagedBy(mgr).
		Named("localkubelet").
		For(&corev1.Pod{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(k.podsWaitingFor)).
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(k.podsWaitingFor)).
		WatchesRawSource(source.Channel(k.events, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		Complete(reconcile.Func(k.syncPod))
	if err != nil {
		return fmt.Errorf("creating the controller: %w", err)
	}
	return nil
}

// Run registers the node and runs pods until ctx is cancelled; then it
// stops every process (see the package documentation) and returns once all
// have exited. A Kubelet runs once.
func (k *Kubelet) Run(ctx context.Context) error {
	k.mu.Lock()
	if k.ran {
		k.mu.Unlock()
		return errors.New("localkubelet: Run was called twice")
	}
	// runCtx ends when ctx does, or when the manager fails on its own.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	k.ran, k.runCtx = true, runCtx
	k.mu.Unlock()
	defer close(k.done)

	if err := k.wipePods(); err != nil {
		return fmt.Errorf("localkubelet: %w", err)
	}
	tmpRoot, err := k.makeTmpRoot()
	if err != nil {
		return fmt.Errorf("localkubelet: %w", err)
	}
	k.tmpRoot = tmpRoot
	defer func() { _ = os.RemoveAll(tmpRoot) }()
	if err := k.registerNode(ctx); err != nil {
		return fmt.Errorf("localkubelet: %w", err)
	}
	go func() {
		// The pod informer is the controller's: once it synced, every pod
		// there is will be seen.
		if _, err := k.mgr.GetCache().GetInformer(ctx, &corev1.Pod{}); err != nil {
			return
		}
		if k.mgr.GetCache().WaitForCacheSync(ctx) {
			close(k.ready)
		}
	}()
	k.log.Info("starting the local kubelet", "node", k.opts.NodeName, "podCIDR", k.ips.cidr(), "stateDir", k.opts.StateDir)
	err = k.mgr.Start(runCtx)
	cancel()
	k.shutdown()
	k.markNodeStopped()
	k.log.Info("stopped the local kubelet", "node", k.opts.NodeName)
	if err != nil {
		return fmt.Errorf("localkubelet: running the manager: %w", err)
	}
	return nil
}

// WaitReady returns once the node is registered and the Kubelet sees every
// pod it selects, or with an error when ctx ends or Run failed first.
func (k *Kubelet) WaitReady(ctx context.Context) error {
	select {
	case <-k.ready:
		return nil
	case <-k.done:
		return errors.New("localkubelet: stopped before it was ready")
	case <-ctx.Done():
		return fmt.Errorf("localkubelet: waiting until ready: %w", ctx.Err())
	}
}

// NodeName is the name of the Kubelet's node.
func (k *Kubelet) NodeName() string { return k.opts.NodeName }

// PodCIDR is the block the Kubelet's pod addresses come from.
func (k *Kubelet) PodCIDR() string { return k.ips.cidr() }

// PID returns the process of the pod's first container, while it runs.
func (k *Kubelet) PID(key types.NamespacedName) (int, bool) {
	k.mu.Lock()
	ps := k.pods[key]
	k.mu.Unlock()
	if ps == nil {
		return 0, false
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.containers[0].proc; p != nil {
		return p.pid, true
	}
	return 0, false
}

// LogPath is the log file of a pod's container.
func (k *Kubelet) LogPath(key types.NamespacedName, container string) string {
	return filepath.Join(k.opts.logsDir(), fmt.Sprintf("%s_%s_%s.log", key.Namespace, key.Name, container))
}

// makeTmpRoot makes the directory of the pods' directories: short, in the
// system's temporary directory, and searchable (not listable) by every
// user, so that containers that run as their pods' users reach their own
// pod's directory and no other.
func (k *Kubelet) makeTmpRoot() (string, error) {
	dir, err := os.MkdirTemp("", "lk-")
	if err != nil {
		return "", fmt.Errorf("creating the pods' directory: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("creating the pods' directory: %w", err)
	}
	if !k.root {
		return dir, nil
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil && fi.Mode().Perm()&0o001 == 0 {
			err = fmt.Errorf("other users cannot search it")
		}
		if err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("the pods' directory %s is out of reach of the pods' users: %s: %w (set TMPDIR to a directory such as /tmp)", dir, d, err)
		}
		if d == filepath.Dir(d) {
			return dir, nil
		}
	}
}

// wipePods removes what processes of a previous run left in the pods
// directory: they are gone, and their pods are restarted or failed.
func (k *Kubelet) wipePods() error {
	entries, err := os.ReadDir(k.opts.podsDir())
	if err != nil {
		return fmt.Errorf("reading the pods directory: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(k.opts.podsDir(), e.Name())); err != nil {
			return fmt.Errorf("removing a previous run's pod directory: %w", err)
		}
	}
	return nil
}

// enqueue makes the reconciler look at a pod again. After Run stopped,
// nothing is listening any more and the event is dropped.
func (k *Kubelet) enqueue(key types.NamespacedName) {
	ev := event.GenericEvent{Object: &corev1.Pod{}}
	ev.Object.SetNamespace(key.Namespace)
	ev.Object.SetName(key.Name)
	select {
	case k.events <- ev:
	case <-k.runCtx.Done():
	}
}

// shutdown stops every process once the manager stopped, so that no
// reconcile starts another.
func (k *Kubelet) shutdown() {
	k.mu.Lock()
	k.stopping = true
	pods := make([]*podState, 0, len(k.pods))
	for _, ps := range k.pods {
		pods = append(pods, ps)
	}
	k.mu.Unlock()
	for _, ps := range pods {
		ps.kill(min(ps.terminationGrace(), k.opts.StopTimeout))
	}
	for _, ps := range pods {
		ps.waitExited()
		k.forget(ps)
	}
	k.procs.Wait()
}

// lockedWriter serializes the writes of several containers' log copiers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
