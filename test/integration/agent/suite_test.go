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

// Package agent_test holds AgentTask dispatch to its contract end to end:
// the real manager against envtest's kube-apiserver, each runner pod run
// as a real runner process with Debian's Chromium by the local kubelet
// stand-in, a small site the agents browse, and the scripted model server
// for model calls. The manager can be stopped and started again, as a
// restart or a change of leader does.
package agent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/controllers"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/localkubelet"
	"github.com/browserfleet/browserfleet/internal/testing/agentsite"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/runner/config"
)

// runnerImage is the runner pods' image; the local kubelet runs the runner
// binary the suite builds for it.
const runnerImage = "registry.test/browserfleet/runner:test"

// modelName is the model every task names; its endpoint is the spec's
// scripted model server.
const modelName = "openai/gpt-test"

// modelKey is the model API key of the tasks' Secret: it reaches the model
// server only through the dispatcher and the runner.
const modelKey = "sk-task-key-5f1c"

var (
	fw        = &framework.Framework{}
	restCfg   *rest.Config
	k8sClient client.Client
	kubelet   *localkubelet.Kubelet
	site      *agentsite.Site
	// suiteT is the suite's test, which scripted model servers report an
	// unscripted request to.
	suiteT *testing.T

	opts    controllers.Options
	manager *managerProcess

	stopKubelet func()
)

func TestAgent(t *testing.T) {
	if _, err := config.FindChromium(); err != nil {
		t.Fatalf("these tests drive a real browser: %v", err)
	}
	suiteT = t
	site = agentsite.New(t, agentsite.Options{Password: "pw"})
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	SetDefaultConsistentlyDuration(3 * time.Second)
	RunSpecs(t, "Agent Dispatch Suite")
}

var _ = BeforeSuite(func() {
	dir := GinkgoT().TempDir()

	restCfg = fw.Start()
	k8sClient = framework.Client(restCfg)

	opts = controllers.DefaultOptions()
	opts.Runner.Image = runnerImage
	// The site and the scripted model servers are on loopback, which the
	// runners' egress gate allows here as make dev does.
	opts.Runner.EgressAllowCIDRs = devstack.LoopbackEgress
	manager = startManager()

	kubelet, stopKubelet = framework.StartRunnerKubelet(restCfg, filepath.Join(dir, "kubelet"), runnerImage)
})

var _ = AfterSuite(func() {
	if manager != nil {
		manager.stop()
	}
	if stopKubelet != nil {
		// Every runner process and its Chromium go with the kubelet.
		stopKubelet()
	}
	fw.Stop()
})

// managerProcess is one run of the manager, as cmd/manager sets it up.
type managerProcess struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startManager starts a manager. Each has its own cache and dispatcher, as
// a new process (or a new leader) does.
func startManager() *managerProcess {
	GinkgoHelper()
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 framework.Scheme(),
		Cache:                  controllers.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// One process has one manager; these runs follow each other in
		// one test process, whose controller names are global.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	Expect(controllers.SetupWithManager(ctx, mgr, opts)).To(Succeed())
	m := &managerProcess{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer GinkgoRecover()
		defer close(m.done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	return m
}

// stop stops the manager and waits until it has: its dispatcher has
// stopped following every task.
func (m *managerProcess) stop() {
	m.cancel()
	<-m.done
}

// restartManager stops the running manager, lets between run while none
// runs, and starts a new one.
func restartManager(between func()) {
	GinkgoHelper()
	manager.stop()
	manager = nil
	between()
	manager = startManager()
}

// newNamespace gives each spec a namespace of its own, with a Secret of
// the tasks' model key that every task of it may use.
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bf-agent-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	Expect(k8sClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "model", Namespace: ns.Name, Labels: map[string]string{v1alpha1.LabelSessionSecret: v1alpha1.SessionSecretAny}},
		StringData: map[string]string{"apiKey": modelKey},
	})).To(Succeed())
	return ns.Name
}

// newSession creates a session and ends it when the spec ends, so that its
// runner and Chromium stop.
func newSession(ctx context.Context, ns, name string) types.NamespacedName {
	GinkgoHelper()
	s := &v1alpha1.BrowserSession{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1alpha1.BrowserSessionSpec{Model: v1alpha1.ModelSpec{Name: modelName}},
	}
	Expect(k8sClient.Create(ctx, s)).To(Succeed())
	key := client.ObjectKeyFromObject(s)
	DeferCleanup(endSession, key)
	return key
}

// endSession ends a session, as the API's end does.
func endSession(ctx context.Context, key types.NamespacedName) {
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"ended":true}}`))
	_ = client.IgnoreNotFound(k8sClient.Patch(ctx, &v1alpha1.BrowserSession{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}, patch))
}

// newTask makes an AgentTask of the session whose model is the scripted
// server, its key from the namespace's Secret.
func newTask(ns, name, session string, model *llmtest.Server) *v1alpha1.AgentTask {
	return &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.AgentTaskSpec{
			SessionRef: v1alpha1.SessionReference{Name: session},
			AgentConfig: v1alpha1.AgentConfig{Model: &v1alpha1.ModelSpec{
				Name: modelName, BaseURL: model.BaseURL(llmtest.OpenAI),
				APIKeySecretRef: &v1alpha1.SecretKeyReference{Name: "model", Key: "apiKey"},
			}},
			ExecuteOptions: v1alpha1.ExecuteOptions{Instruction: "Tell me what the home page offers."},
		},
	}
}

// newModel starts a scripted model server for one spec.
func newModel() *llmtest.Server {
	return llmtest.NewServer(suiteT)
}

// call is a scripted tool call with its arguments given as a value.
func call(name string, args any) llmtest.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return llmtest.Call(name, string(b))
}

// step is a model reply of one tool call, with usage.
func step(name string, args any) llmtest.Reply {
	return llmtest.ToolCalls(call(name, args)).WithUsage(100, 10)
}

// Replies of the scripted agent.
func gotoHome() llmtest.Reply { return step("goto", map[string]string{"url": site.URL + "/"}) }
func think(thought string) llmtest.Reply {
	return step("think", map[string]string{"reasoning": thought})
}
func readPage() llmtest.Reply { return step("ariaTree", map[string]string{}) }
func done(message string) llmtest.Reply {
	return step("done", map[string]any{"reasoning": message, "taskComplete": true, "output": map[string]string{"answer": message}})
}

// task reads a task afresh.
func task(ctx context.Context, key types.NamespacedName) func(Gomega) *v1alpha1.AgentTask {
	return func(g Gomega) *v1alpha1.AgentTask {
		t := &v1alpha1.AgentTask{}
		g.Expect(k8sClient.Get(ctx, key, t)).To(Succeed())
		return t
	}
}

// taskGone says whether the task is gone.
func taskGone(ctx context.Context, key types.NamespacedName) func() bool {
	return func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &v1alpha1.AgentTask{})) }
}

func taskPhase(ctx context.Context, key types.NamespacedName) func(Gomega) v1alpha1.AgentTaskPhase {
	return func(g Gomega) v1alpha1.AgentTaskPhase { return task(ctx, key)(g).Status.Phase }
}

func taskFinalizers(ctx context.Context, key types.NamespacedName) func(Gomega) []string {
	return func(g Gomega) []string { return task(ctx, key)(g).Finalizers }
}

func taskSteps(ctx context.Context, key types.NamespacedName) func(Gomega) int32 {
	return func(g Gomega) int32 { return task(ctx, key)(g).Status.Steps }
}

// requests counts the requests a model server got.
func requests(m *llmtest.Server) func() int {
	return func() int { return len(m.Requests()) }
}

// actionTypes lists the types of a task's status actions.
func actionTypes(t *v1alpha1.AgentTask) []string {
	out := make([]string, 0, len(t.Status.Actions))
	for _, a := range t.Status.Actions {
		out = append(out, a.Type)
	}
	return out
}

// eventReasons lists the reasons of the events about an object.
func eventReasons(ctx context.Context, ns, name string) func(Gomega) []string {
	return func(g Gomega) []string {
		var list eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}
