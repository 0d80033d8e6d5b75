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
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
	"github.com/browserfleet/browserfleet/startlatency"
)

// Label values with a meaning of their own.
const (
	// RouteUnmatched is the route of a request no ServeMux pattern matched.
	RouteUnmatched = "unmatched"
	// OutcomeSuccess is the outcome of an operation that did not fail.
	OutcomeSuccess = "success"
	// Other stands for a value outside a label's known set or over its cap.
	Other = "other"
	// unknownModel is the model label of tokens reported without a model.
	unknownModel = "unknown"
)

// Caps on label values that are not from a closed set.
const (
	// MaxRoutes is how many distinct routes get a series of their own. The
	// API has a few dozen; more means a caller passes raw paths.
	MaxRoutes = 100
	// MaxModels is how many distinct model names get a series of their own.
	MaxModels = 100
	// maxLabelLen bounds one label value, in bytes.
	maxLabelLen = 256
)

// Histogram buckets, in seconds. Requests range from a millisecond (GET
// of a session from the cache) to minutes (a start waiting for a pod, a
// streamed agent run); operations from a tenth of a second (navigate to a
// cached page) to many minutes (agentExecute).
var (
	requestBuckets   = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	operationBuckets = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800}
)

// operations are the values of the operation label.
var operations = set("act", "observe", "extract", "navigate", "agentExecute", "start", "batch")

// outcomes are the values of the outcome label: success, the runner's
// error codes and the API's own.
var outcomes = set(
	OutcomeSuccess,
	string(rpc.CodeBadRequest), string(rpc.CodeUnauthorized), string(rpc.CodeNotFound),
	string(rpc.CodeMethodNotAllowed), string(rpc.CodePayloadTooLarge),
	string(rpc.CodeBrowserStarting), string(rpc.CodeBrowserCrashed), string(rpc.CodeShuttingDown),
	string(rpc.CodeTimeout), string(rpc.CodeCanceled), string(rpc.CodeNavigationFailed),
	string(rpc.CodeProxyAuthFailed), string(rpc.CodeEgressDenied), string(rpc.CodeSessionBusy), string(rpc.CodeSchemaViolation), string(rpc.CodeModelError),
	string(rpc.CodeEngineError), string(rpc.CodeRunnerUnreachable), string(rpc.CodeInternal),
	string(rpc.CodeBatchScriptError), string(rpc.CodeBatchDeadline), string(rpc.CodeBatchLimit),
	string(rpc.CodeBudgetExceeded),
	// The API's codes (server/errors.go; this package cannot import it).
	"INVALID_REQUEST", "SESSION_NOT_FOUND", "SESSION_ENDED", "SESSION_NOT_READY",
	"SESSION_FAILED", "UNAVAILABLE", "START_TIMEOUT",
)

// Metrics records the API pod's metrics. Its methods are safe for
// concurrent use, and are no-ops on a nil *Metrics.
type Metrics struct {
	requestDuration   *prometheus.HistogramVec
	inFlight          *prometheus.GaugeVec
	operationDuration *prometheus.HistogramVec
	tokens            *prometheus.CounterVec
	searches          *prometheus.CounterVec
	cacheRequests     *prometheus.CounterVec
	startLatency      *startlatency.Histogram
	routes            *capped
	models            *capped
}

// New creates the metrics and registers them on reg. sessions, if not nil,
// is listed at every scrape for browserfleet_sessions: pass the manager's
// cached client (mgr.GetClient() or mgr.GetCache()), not a direct API
// reader, since scrapes come every few seconds. With a nil sessions the
// session gauges are not registered. On error nothing stays registered.
func New(reg prometheus.Registerer, sessions client.Reader) (*Metrics, error) {
	return newMetrics(reg, sessions, defaultListTimeout)
}

func newMetrics(reg prometheus.Registerer, sessions client.Reader, listTimeout time.Duration) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: a Registerer is required")
	}
	m := &Metrics{
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "browserfleet_api_request_duration_seconds",
			Help:    "Time the API took to answer a request, by route (ServeMux pattern) and HTTP status; for streams, until the stream ended.",
			Buckets: requestBuckets,
		}, []string{"route", "code"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "browserfleet_api_requests_in_flight",
			Help: "Requests the API is serving now, streams and CDP connections included, by route.",
		}, []string{"route"}),
		operationDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "browserfleet_operation_duration_seconds",
			Help:    "Duration of browser operations, by operation, outcome (success or error code) and whether the response was streamed.",
			Buckets: operationBuckets,
		}, []string{"operation", "outcome", "streamed"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "browserfleet_model_tokens_total",
			Help: "Model tokens spent by operations and agents, by model (provider/model) and kind (input, output, reasoning, cached_input).",
		}, []string{"model", "kind"}),
		searches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "browserfleet_search_requests_total",
			Help: "Web searches agents asked the API's search relay for, by outcome (success or the relay's error code).",
		}, []string{"outcome"}),
		cacheRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "browserfleet_cache_requests_total",
			Help: "Calls to the server-side cache's endpoints (the client library's and the runners'), by operation (get, set) and outcome (hit, miss, stored, refused: a bad request, error: the store failed or there is none).",
		}, []string{"operation", "outcome"}),
		startLatency: startlatency.New(),
		routes:       newCapped(MaxRoutes),
		models:       newCapped(MaxModels),
	}
	cs := []prometheus.Collector{m.requestDuration, m.inFlight, m.operationDuration, m.tokens, m.searches, m.cacheRequests, m.startLatency.Collector()}
	if sessions != nil {
		cs = append(cs, newSessionCollector(sessions, listTimeout))
	}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("metrics: registering: %w", err)
		}
	}
	return m, nil
}

// ObserveRequest records one answered request: route is its ServeMux
// pattern ("" for none), code its HTTP status, d how long it took.
func (m *Metrics) ObserveRequest(route string, code int, d time.Duration) {
	if m == nil {
		return
	}
	m.requestDuration.WithLabelValues(m.route(route), statusLabel(code)).Observe(d.Seconds())
}

// InFlight counts a request on route as in flight until the returned func
// is called, typically deferred; further calls do nothing. Call it inside the
// handler: ServeMux sets r.Pattern only when it dispatches.
func (m *Metrics) InFlight(route string) (done func()) {
	if m == nil {
		return func() {}
	}
	g := m.inFlight.WithLabelValues(m.route(route))
	g.Inc()
	var once sync.Once
	return func() { once.Do(g.Dec) }
}

// ObserveOperation records one browser operation: op is act, observe,
// extract, navigate, agentExecute or start; outcome is OutcomeSuccess or
// the error code it failed with; streamed says whether the answer was a
// stream.
func (m *Metrics) ObserveOperation(op, outcome string, streamed bool, d time.Duration) {
	if m == nil {
		return
	}
	m.operationDuration.WithLabelValues(oneOf(operations, op), oneOf(outcomes, outcome), strconv.FormatBool(streamed)).Observe(d.Seconds())
}

// ObserveFirstAnswer records the start latency the API's callers see: d
// from a start request's arrival to its answer, for a session that
// claimed a runner of pool ("" for none: a cold start).
func (m *Metrics) ObserveFirstAnswer(pool string, d time.Duration) {
	if m == nil {
		return
	}
	m.startLatency.Observe(startlatency.PhaseFirstAnswer, startlatency.Start(pool), d)
}

// searchOutcomes are the values of the search outcome label.
var searchOutcomes = set(search.OutcomeSuccess, search.CodeBadRequest, search.CodeUnauthorized, search.CodeBusy, search.CodeFailed, search.CodeTimeout)

// ObserveSearch counts one call to the search relay: outcome is
// search.OutcomeSuccess or the relay's error code.
func (m *Metrics) ObserveSearch(outcome string) {
	if m == nil {
		return
	}
	m.searches.WithLabelValues(oneOf(searchOutcomes, outcome)).Inc()
}

// Operations and outcomes of the cache endpoints.
const (
	CacheGet     = "get"
	CacheSet     = "set"
	CacheHit     = "hit"
	CacheMiss    = "miss"
	CacheStored  = "stored"
	CacheRefused = "refused"
	CacheError   = "error"
)

var (
	cacheOperations = set(CacheGet, CacheSet)
	cacheOutcomes   = set(CacheHit, CacheMiss, CacheStored, CacheRefused, CacheError)
)

// ObserveCache counts one call to a cache endpoint: operation is CacheGet
// or CacheSet, outcome one of the Cache outcomes.
func (m *Metrics) ObserveCache(operation, outcome string) {
	if m == nil {
		return
	}
	m.cacheRequests.WithLabelValues(oneOf(cacheOperations, operation), oneOf(cacheOutcomes, outcome)).Inc()
}

// AddTokens adds the tokens one model call or run spent. model is the
// "provider/model" name. Zero and negative counts add nothing (and create no
// series), so a model that never reasons has no reasoning series.
func (m *Metrics) AddTokens(model string, input, output, reasoning, cachedInput int64) {
	if m == nil {
		return
	}
	if input <= 0 && output <= 0 && reasoning <= 0 && cachedInput <= 0 {
		// Nothing to count: do not take one of the MaxModels places.
		return
	}
	if model == "" {
		model = unknownModel
	}
	model = m.models.admit(clean(model))
	for _, k := range []struct {
		kind string
		n    int64
	}{{"input", input}, {"output", output}, {"reasoning", reasoning}, {"cached_input", cachedInput}} {
		if k.n > 0 {
			m.tokens.WithLabelValues(model, k.kind).Add(float64(k.n))
		}
	}
}

// route is the route label of a ServeMux pattern.
func (m *Metrics) route(pattern string) string {
	if pattern == "" {
		return RouteUnmatched
	}
	return m.routes.admit(clean(pattern))
}

// statusLabel is the code label of an HTTP status; anything that is no
// status is Other.
func statusLabel(code int) string {
	if code < 100 || code > 599 {
		return Other
	}
	return strconv.Itoa(code)
}

// set makes a lookup set of values.
func set(values ...string) map[string]bool {
	s := make(map[string]bool, len(values))
	for _, v := range values {
		s[v] = true
	}
	return s
}

// oneOf returns v if it is in known, and Other otherwise.
func oneOf(known map[string]bool, v string) string {
	if known[v] {
		return v
	}
	return Other
}

// clean makes v a valid label value: Prometheus refuses (and WithLabelValues
// panics on) invalid UTF-8, and a long value is a cost with no use.
func clean(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if len(v) > maxLabelLen {
		v = v[:maxLabelLen]
		for !utf8.ValidString(v) {
			// Cut a rune in half; drop its remains.
			v = v[:len(v)-1]
		}
	}
	return v
}

// capped admits the first max distinct values of a label and maps the rest
// to Other.
type capped struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newCapped(limit int) *capped {
	return &capped{max: limit, seen: make(map[string]struct{}, limit)}
}

// admit returns v if it was admitted before or there is room for it, and
// Other otherwise.
func (c *capped) admit(v string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return Other
	}
	c.seen[v] = struct{}{}
	return v
}
