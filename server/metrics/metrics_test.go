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

package metrics

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/startlatency"
)

// samples gathers the metric family name from g as "label=value,..." →
// value for counters and gauges, and "labels count" and "labels sum" for
// histograms. A missing family is an empty map.
func samples(t *testing.T, g prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := strings.Join(labels, ",")
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key+" count"] = float64(m.GetHistogram().GetSampleCount())
				out[key+" sum"] = m.GetHistogram().GetSampleSum()
			default:
				t.Fatalf("%s: unexpected type %v", name, mf.GetType())
			}
		}
	}
	return out
}

func newTest(t *testing.T, sessions client.Reader) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := New(reg, sessions)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m, reg
}

func TestObserveRequest(t *testing.T) {
	type call struct {
		route string
		code  int
		d     time.Duration
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  map[string]float64
	}{
		{
			name: "route and code",
			calls: []call{
				{"POST /v1/sessions/{id}/act", 200, 2 * time.Second},
				{"POST /v1/sessions/{id}/act", 200, time.Second},
				{"POST /v1/sessions/{id}/act", 504, 500 * time.Millisecond},
				{"GET /v1/sessions", 200, 250 * time.Millisecond},
			},
			want: map[string]float64{
				"code=200,route=POST /v1/sessions/{id}/act count": 2,
				"code=200,route=POST /v1/sessions/{id}/act sum":   3,
				"code=504,route=POST /v1/sessions/{id}/act count": 1,
				"code=504,route=POST /v1/sessions/{id}/act sum":   0.5,
				"code=200,route=GET /v1/sessions count":           1,
				"code=200,route=GET /v1/sessions sum":             0.25,
			},
		},
		{
			name:  "no route is unmatched",
			calls: []call{{"", 404, time.Millisecond}},
			want: map[string]float64{
				"code=404,route=unmatched count": 1,
				"code=404,route=unmatched sum":   0.001,
			},
		},
		{
			name:  "client closed request",
			calls: []call{{"POST /v1/sessions/start", 499, time.Second}},
			want: map[string]float64{
				"code=499,route=POST /v1/sessions/start count": 1,
				"code=499,route=POST /v1/sessions/start sum":   1,
			},
		},
		{
			name:  "no status is other",
			calls: []call{{"GET /healthz", 0, time.Second}, {"GET /healthz", 1000, time.Second}},
			want: map[string]float64{
				"code=other,route=GET /healthz count": 2,
				"code=other,route=GET /healthz sum":   2,
			},
		},
		{
			name:  "invalid UTF-8 is replaced",
			calls: []call{{"GET /\xff", 200, time.Second}},
			want: map[string]float64{
				"code=200,route=GET /\uFFFD count": 1,
				"code=200,route=GET /\uFFFD sum":   1,
			},
		},
		{
			name:  "long route is cut",
			calls: []call{{"GET /" + strings.Repeat("é", 200), 200, time.Second}},
			want: map[string]float64{
				// 256 bytes would split an "é" (2 bytes) after "GET /" (5).
				"code=200,route=GET /" + strings.Repeat("é", 125) + " count": 1,
				"code=200,route=GET /" + strings.Repeat("é", 125) + " sum":   1,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, reg := newTest(t, nil)
			for _, c := range tc.calls {
				m.ObserveRequest(c.route, c.code, c.d)
			}
			if diff := cmp.Diff(tc.want, samples(t, reg, "browserfleet_api_request_duration_seconds")); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestHistogramLayout pins the exposition of the request histogram:
// name, help, labels and buckets.
func TestRequestHistogramLayout(t *testing.T) {
	m, reg := newTest(t, nil)
	m.ObserveRequest("GET /v1/sessions/{id}", 200, 30*time.Millisecond)
	const want = `
# HELP browserfleet_api_request_duration_seconds Time the API took to answer a request, by route (ServeMux pattern) and HTTP status; for streams, until the stream ended.
# TYPE browserfleet_api_request_duration_seconds histogram
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="0.005"} 0
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="0.01"} 0
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="0.025"} 0
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="0.05"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="0.1"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="0.25"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="0.5"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="1"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="2.5"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="5"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="10"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="30"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="60"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="120"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="300"} 1
browserfleet_api_request_duration_seconds_bucket{code="200",route="GET /v1/sessions/{id}",le="+Inf"} 1
browserfleet_api_request_duration_seconds_sum{code="200",route="GET /v1/sessions/{id}"} 0.03
browserfleet_api_request_duration_seconds_count{code="200",route="GET /v1/sessions/{id}"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "browserfleet_api_request_duration_seconds"); err != nil {
		t.Error(err)
	}
}

// TestLint runs promlint over every metric with a sample.
func TestLint(t *testing.T) {
	m, reg := newTest(t, fake.NewClientBuilder().WithScheme(testScheme(t)).Build())
	m.ObserveRequest("GET /v1/sessions", 200, time.Second)
	defer m.InFlight("GET /v1/sessions")()
	m.ObserveOperation("act", OutcomeSuccess, false, time.Second)
	m.AddTokens("openai/gpt-4.1-mini", 1, 1, 1, 1)
	m.ObserveFirstAnswer("", time.Second)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatalf("GatherAndLint: %v", err)
	}
	if diff := cmp.Diff(0, len(problems)); diff != "" {
		t.Errorf("lint problems %v (-want +got):\n%s", problems, diff)
	}
}

func TestInFlight(t *testing.T) {
	m, reg := newTest(t, nil)
	const act, stream = "POST /v1/sessions/{id}/act", "GET /v1/sessions/{id}/devtools/browser/{token}"
	get := func() map[string]float64 { return samples(t, reg, "browserfleet_api_requests_in_flight") }

	doneAct1 := m.InFlight(act)
	doneAct2 := m.InFlight(act)
	doneStream := m.InFlight(stream)
	doneNone := m.InFlight("")
	if diff := cmp.Diff(map[string]float64{"route=" + act: 2, "route=" + stream: 1, "route=unmatched": 1}, get()); diff != "" {
		t.Errorf("all in flight (-want +got):\n%s", diff)
	}
	doneAct1()
	doneAct1() // A second call must not count the request out twice.
	doneNone()
	if diff := cmp.Diff(map[string]float64{"route=" + act: 1, "route=" + stream: 1, "route=unmatched": 0}, get()); diff != "" {
		t.Errorf("after one act and the unmatched ended (-want +got):\n%s", diff)
	}
	doneAct2()
	doneStream()
	if diff := cmp.Diff(map[string]float64{"route=" + act: 0, "route=" + stream: 0, "route=unmatched": 0}, get()); diff != "" {
		t.Errorf("after all ended (-want +got):\n%s", diff)
	}
}

func TestObserveOperation(t *testing.T) {
	type call struct {
		op, outcome string
		streamed    bool
		d           time.Duration
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  map[string]float64
	}{
		{
			name: "known operations and outcomes",
			calls: []call{
				{"act", OutcomeSuccess, false, time.Second},
				{"act", OutcomeSuccess, false, 3 * time.Second},
				{"act", "TIMEOUT", true, 30 * time.Second},
				{"extract", "MODEL_ERROR", false, 2 * time.Second},
				{"agentExecute", OutcomeSuccess, true, 120 * time.Second},
				{"start", "START_TIMEOUT", false, 60 * time.Second},
				{"navigate", "NAVIGATION_FAILED", false, time.Second},
				{"observe", "CANCELED", true, time.Second},
			},
			want: map[string]float64{
				"operation=act,outcome=success,streamed=false count":                2,
				"operation=act,outcome=success,streamed=false sum":                  4,
				"operation=act,outcome=TIMEOUT,streamed=true count":                 1,
				"operation=act,outcome=TIMEOUT,streamed=true sum":                   30,
				"operation=extract,outcome=MODEL_ERROR,streamed=false count":        1,
				"operation=extract,outcome=MODEL_ERROR,streamed=false sum":          2,
				"operation=agentExecute,outcome=success,streamed=true count":        1,
				"operation=agentExecute,outcome=success,streamed=true sum":          120,
				"operation=start,outcome=START_TIMEOUT,streamed=false count":        1,
				"operation=start,outcome=START_TIMEOUT,streamed=false sum":          60,
				"operation=navigate,outcome=NAVIGATION_FAILED,streamed=false count": 1,
				"operation=navigate,outcome=NAVIGATION_FAILED,streamed=false sum":   1,
				"operation=observe,outcome=CANCELED,streamed=true count":            1,
				"operation=observe,outcome=CANCELED,streamed=true sum":              1,
			},
		},
		{
			name: "unknown values are other",
			calls: []call{
				{"screenshot", OutcomeSuccess, false, time.Second},
				{"act", "SOMETHING_NEW", false, time.Second},
				{"act", "", false, time.Second},
				{"act", "timeout", false, time.Second}, // Codes are upper case.
				{"Act", "\xff", false, time.Second},
			},
			want: map[string]float64{
				"operation=other,outcome=success,streamed=false count": 1,
				"operation=other,outcome=success,streamed=false sum":   1,
				"operation=act,outcome=other,streamed=false count":     3,
				"operation=act,outcome=other,streamed=false sum":       3,
				"operation=other,outcome=other,streamed=false count":   1,
				"operation=other,outcome=other,streamed=false sum":     1,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, reg := newTest(t, nil)
			for _, c := range tc.calls {
				m.ObserveOperation(c.op, c.outcome, c.streamed, c.d)
			}
			got := samples(t, reg, "browserfleet_operation_duration_seconds")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObserveCache(t *testing.T) {
	m, reg := newTest(t, nil)
	for _, c := range [][2]string{
		{CacheGet, CacheHit}, {CacheGet, CacheHit}, {CacheGet, CacheMiss}, {CacheGet, CacheRefused}, {CacheGet, CacheError},
		{CacheSet, CacheStored}, {CacheSet, CacheRefused},
		{"delete", CacheStored}, {CacheSet, "HIT"}, // unknown values are other
	} {
		m.ObserveCache(c[0], c[1])
	}
	want := map[string]float64{
		"operation=get,outcome=hit":      2,
		"operation=get,outcome=miss":     1,
		"operation=get,outcome=refused":  1,
		"operation=get,outcome=error":    1,
		"operation=set,outcome=stored":   1,
		"operation=set,outcome=refused":  1,
		"operation=other,outcome=stored": 1,
		"operation=set,outcome=other":    1,
	}
	if diff := cmp.Diff(want, samples(t, reg, "browserfleet_cache_requests_total")); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}

func TestObserveFirstAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pools []string
		want  map[string]float64
	}{
		{name: "none", want: map[string]float64{}},
		{
			name:  "cold and warm",
			pools: []string{"", "", "pool-a", "pool-b"},
			want: map[string]float64{
				"phase=first_answer,start=cold count": 2,
				"phase=first_answer,start=cold sum":   2,
				"phase=first_answer,start=warm count": 2,
				"phase=first_answer,start=warm sum":   2,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, reg := newTest(t, nil)
			for _, pool := range tc.pools {
				m.ObserveFirstAnswer(pool, time.Second)
			}
			if diff := cmp.Diff(tc.want, samples(t, reg, startlatency.Name)); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddTokens(t *testing.T) {
	type call struct {
		model                                 string
		input, output, reasoning, cachedInput int64
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  map[string]float64
	}{
		{
			name: "every kind, summed",
			calls: []call{
				{"openai/gpt-4.1-mini", 100, 20, 5, 60},
				{"openai/gpt-4.1-mini", 50, 10, 0, 0},
				{"anthropic/claude-sonnet-4-5", 7, 3, 0, 2},
			},
			want: map[string]float64{
				"kind=input,model=openai/gpt-4.1-mini":                150,
				"kind=output,model=openai/gpt-4.1-mini":               30,
				"kind=reasoning,model=openai/gpt-4.1-mini":            5,
				"kind=cached_input,model=openai/gpt-4.1-mini":         60,
				"kind=input,model=anthropic/claude-sonnet-4-5":        7,
				"kind=output,model=anthropic/claude-sonnet-4-5":       3,
				"kind=cached_input,model=anthropic/claude-sonnet-4-5": 2,
			},
		},
		{
			name:  "zero and negative counts add nothing",
			calls: []call{{"openai/gpt-4.1-mini", 0, 0, 0, 0}, {"openai/gpt-4.1-mini", -5, 10, -1, 0}},
			want:  map[string]float64{"kind=output,model=openai/gpt-4.1-mini": 10},
		},
		{
			name:  "no model is unknown",
			calls: []call{{"", 1, 2, 0, 0}},
			want:  map[string]float64{"kind=input,model=unknown": 1, "kind=output,model=unknown": 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, reg := newTest(t, nil)
			for _, c := range tc.calls {
				m.AddTokens(c.model, c.input, c.output, c.reasoning, c.cachedInput)
			}
			if diff := cmp.Diff(tc.want, samples(t, reg, "browserfleet_model_tokens_total")); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModelCap(t *testing.T) {
	m, reg := newTest(t, nil)
	// All-zero calls take no place under the cap.
	m.AddTokens("zero/model", 0, 0, 0, 0)
	for i := range MaxModels + 10 {
		m.AddTokens(fmt.Sprintf("p/model-%d", i), 1, 0, 0, 0)
	}
	// A model admitted before the cap keeps its series.
	m.AddTokens("p/model-0", 1, 0, 0, 0)

	got := samples(t, reg, "browserfleet_model_tokens_total")
	want := map[string]float64{"kind=input,model=other": 10}
	for i := range MaxModels {
		want[fmt.Sprintf("kind=input,model=p/model-%d", i)] = 1
	}
	want["kind=input,model=p/model-0"] = 2
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(MaxModels+1, testutil.CollectAndCount(m.tokens)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

// TestModelCapConcurrent checks, under -race, that concurrent calls neither
// lose tokens nor admit more than MaxModels models.
func TestModelCapConcurrent(t *testing.T) {
	m, reg := newTest(t, nil)
	const goroutines, perGoroutine = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				m.AddTokens(fmt.Sprintf("p/model-%d-%d", g, i), 1, 0, 0, 0)
			}
		})
	}
	wg.Wait()
	total := 0.0
	for _, v := range samples(t, reg, "browserfleet_model_tokens_total") {
		total += v
	}
	if diff := cmp.Diff(float64(goroutines*perGoroutine), total); diff != "" {
		t.Errorf("tokens counted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(MaxModels+1, testutil.CollectAndCount(m.tokens)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestRouteCap(t *testing.T) {
	m, reg := newTest(t, nil)
	// A caller that passes raw paths instead of patterns.
	for i := range MaxRoutes + 5 {
		m.ObserveRequest(fmt.Sprintf("GET /v1/sessions/%d", i), 200, time.Second)
	}
	m.ObserveRequest("", 404, time.Second) // Unmatched is not capped.
	got := samples(t, reg, "browserfleet_api_request_duration_seconds")
	if diff := cmp.Diff(float64(5), got["code=200,route=other count"]); diff != "" {
		t.Errorf("requests counted as other (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(float64(1), got["code=404,route=unmatched count"]); diff != "" {
		t.Errorf("unmatched requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(MaxRoutes+2, testutil.CollectAndCount(m.requestDuration)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	return s
}

func session(namespace, name string, phase v1alpha1.BrowserSessionPhase) client.Object {
	return &v1alpha1.BrowserSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Status:     v1alpha1.BrowserSessionStatus{Phase: phase},
	}
}

func TestSessions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		objects []client.Object
		want    map[string]float64
	}{
		{
			name: "no sessions: every phase at zero",
			want: map[string]float64{
				"phase=Pending": 0, "phase=Starting": 0, "phase=Ready": 0,
				"phase=Ending": 0, "phase=Ended": 0, "phase=Failed": 0,
			},
		},
		{
			name: "counted across namespaces, no phase is Pending",
			objects: []client.Object{
				session("team-a", "s1", v1alpha1.BrowserSessionReady),
				session("team-a", "s2", v1alpha1.BrowserSessionReady),
				session("team-b", "s3", v1alpha1.BrowserSessionReady),
				session("team-b", "s4", ""),
				session("team-c", "s5", v1alpha1.BrowserSessionPending),
				session("team-c", "s6", v1alpha1.BrowserSessionFailed),
				session("team-c", "s7", v1alpha1.BrowserSessionEnded),
				session("team-c", "s8", "Bogus"), // Not counted.
			},
			want: map[string]float64{
				"phase=Pending": 2, "phase=Starting": 0, "phase=Ready": 3,
				"phase=Ending": 0, "phase=Ended": 1, "phase=Failed": 1,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(tc.objects...).Build()
			_, reg := newTest(t, c)
			if diff := cmp.Diff(tc.want, samples(t, reg, "browserfleet_sessions")); diff != "" {
				t.Errorf("browserfleet_sessions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]float64{"": 0}, samples(t, reg, "browserfleet_sessions_list_errors_total")); diff != "" {
				t.Errorf("browserfleet_sessions_list_errors_total (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionsExposition pins the gauge's name, help and labels.
func TestSessionsExposition(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).
		WithObjects(session("team-a", "s1", v1alpha1.BrowserSessionStarting)).Build()
	_, reg := newTest(t, c)
	const want = `
# HELP browserfleet_sessions BrowserSessions by phase, across all namespaces, as the API pod's cache sees them.
# TYPE browserfleet_sessions gauge
browserfleet_sessions{phase="Ended"} 0
browserfleet_sessions{phase="Ending"} 0
browserfleet_sessions{phase="Failed"} 0
browserfleet_sessions{phase="Pending"} 0
browserfleet_sessions{phase="Ready"} 0
browserfleet_sessions{phase="Starting"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "browserfleet_sessions"); err != nil {
		t.Error(err)
	}
}

func TestSessionsListError(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).
		WithObjects(session("team-a", "s1", v1alpha1.BrowserSessionReady)).
		WithInterceptorFuncs(interceptor.Funcs{
			List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
				return errors.New("cache not synced")
			},
		}).Build()
	_, reg := newTest(t, c)
	for scrape := 1; scrape <= 2; scrape++ {
		// The scrape itself succeeds: the other metrics must still be served.
		if diff := cmp.Diff(map[string]float64{}, samples(t, reg, "browserfleet_sessions")); diff != "" {
			t.Errorf("scrape %d: browserfleet_sessions (-want +got):\n%s", scrape, diff)
		}
	}
	// Two scrapes above, one here.
	if diff := cmp.Diff(map[string]float64{"": 3}, samples(t, reg, "browserfleet_sessions_list_errors_total")); diff != "" {
		t.Errorf("browserfleet_sessions_list_errors_total (-want +got):\n%s", diff)
	}
}

func TestSessionsListTimeout(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).
		WithInterceptorFuncs(interceptor.Funcs{
			// A cache that never syncs: List waits for its context.
			List: func(ctx context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
				<-ctx.Done()
				return ctx.Err()
			},
		}).Build()
	reg := prometheus.NewPedanticRegistry()
	if _, err := newMetrics(reg, c, 50*time.Millisecond); err != nil {
		t.Fatalf("newMetrics: %v", err)
	}
	start := time.Now()
	got := samples(t, reg, "browserfleet_sessions_list_errors_total")
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("scrape took %v, want about the 50ms list timeout", elapsed)
	}
	if diff := cmp.Diff(map[string]float64{"": 1}, got); diff != "" {
		t.Errorf("browserfleet_sessions_list_errors_total (-want +got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	t.Run("no registerer", func(t *testing.T) {
		if _, err := New(nil, nil); err == nil {
			t.Error("New(nil, nil) succeeded, want an error")
		}
	})
	t.Run("conflict leaves nothing registered", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		// The same metric as New's fourth, registered first. (Same help
		// and labels: a registry never forgets a name's label names and
		// help, even after Unregister.)
		other, err := New(prometheus.NewRegistry(), nil)
		if err != nil {
			t.Fatal(err)
		}
		conflict := other.tokens
		if err := reg.Register(conflict); err != nil {
			t.Fatal(err)
		}
		c := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
		if _, err := New(reg, c); err == nil {
			t.Fatal("New succeeded despite a conflicting metric")
		}
		reg.Unregister(conflict)
		// Succeeds only if the failed New unregistered what it had
		// registered before the conflict.
		if _, err := New(reg, c); err != nil {
			t.Errorf("New after the conflict was removed: %v", err)
		}
	})
	t.Run("twice on one registry", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		if _, err := New(reg, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := New(reg, nil); err == nil {
			t.Error("second New on the same registry succeeded")
		}
	})
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	// None of these may panic.
	m.ObserveRequest("GET /v1/sessions", 200, time.Second)
	done := m.InFlight("GET /v1/sessions")
	if done == nil {
		t.Fatal("InFlight on nil returned a nil func")
	}
	done()
	m.ObserveOperation("act", OutcomeSuccess, true, time.Second)
	m.AddTokens("openai/gpt-4.1-mini", 1, 2, 3, 4)
	m.ObserveCache(CacheGet, CacheHit)
	m.ObserveFirstAnswer("pool-a", time.Second)
}
