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

// Package otlptest is an OTLP/HTTP trace receiver on loopback, as an
// OpenTelemetry collector's otlp receiver listens on port 4318: tests point
// exporters at it and read back the spans they sent, decoded with the OTLP
// protobuf definitions.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TracesPath is where the receiver takes exports, as a collector does.
const TracesPath = "/v1/traces"

// maxExportBytes bounds one export's body; a batch of a test's spans is a
// few kilobytes.
const maxExportBytes = 16 << 20

// Span is one received span, flattened with its resource's service name.
type Span struct {
	// Service is the resource's service.name.
	Service string
	// Resource are the resource's attributes.
	Resource map[string]any
	// Scope is the instrumentation scope's name.
	Scope string
	// TraceID, SpanID and ParentSpanID are lowercase hex; ParentSpanID is
	// empty for a root span.
	TraceID, SpanID, ParentSpanID string
	Name                          string
	// Kind is "internal", "server", "client", "producer" or "consumer".
	Kind string
	// Attributes are string, int64, float64 or bool values.
	Attributes map[string]any
	// StatusCode is "unset", "ok" or "error".
	StatusCode    string
	StatusMessage string
}

// Receiver is a running receiver. Make one with NewReceiver.
type Receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	spans   []Span
	headers []http.Header
	bad     []string
}

// TB is what NewReceiver needs of a test: testing.TB or Ginkgo's
// GinkgoT().
type TB interface {
	Helper()
	Cleanup(func())
}

// NewReceiver starts a receiver on 127.0.0.1; it stops when the test ends.
func NewReceiver(t TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the receiver's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it.
func (r *Receiver) URL() string { return r.srv.URL }

// TracesURL is the traces endpoint, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// takes it.
func (r *Receiver) TracesURL() string { return r.srv.URL + TracesPath }

// Addr is the receiver's address.
func (r *Receiver) Addr() net.Addr { return r.srv.Listener.Addr() }

// Spans returns every span received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Trace returns the spans received so far of one trace.
func (r *Receiver) Trace(traceID string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// Headers returns the headers of every export received so far.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Refused returns why the receiver refused exports (wrong path, method,
// body); a test expects none.
func (r *Receiver) Refused() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}

func (r *Receiver) refuse(w http.ResponseWriter, status int, why string) {
	r.mu.Lock()
	r.bad = append(r.bad, why)
	r.mu.Unlock()
	http.Error(w, why, status)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != TracesPath || req.Method != http.MethodPost {
		r.refuse(w, http.StatusNotFound, req.Method+" "+req.URL.Path)
		return
	}
	if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-protobuf") {
		r.refuse(w, http.StatusUnsupportedMediaType, "content type "+ct)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, maxExportBytes)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			r.refuse(w, http.StatusBadRequest, "gzip: "+err.Error())
			return
		}
		defer func() { _ = zr.Close() }()
		body = io.LimitReader(zr, maxExportBytes)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		r.refuse(w, http.StatusBadRequest, "reading: "+err.Error())
		return
	}
	var export coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &export); err != nil {
		r.refuse(w, http.StatusBadRequest, "decoding: "+err.Error())
		return
	}
	spans := flatten(&export)
	r.mu.Lock()
	r.spans = append(r.spans, spans...)
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	out, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	if err != nil {
		r.refuse(w, http.StatusInternalServerError, "encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func flatten(export *coltracepb.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range export.GetResourceSpans() {
		res := attributes(rs.GetResource().GetAttributes())
		service, _ := res["service.name"].(string)
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				span := Span{
					Service:       service,
					Resource:      res,
					Scope:         ss.GetScope().GetName(),
					TraceID:       hex.EncodeToString(s.GetTraceId()),
					SpanID:        hex.EncodeToString(s.GetSpanId()),
					ParentSpanID:  hex.EncodeToString(s.GetParentSpanId()),
					Name:          s.GetName(),
					Kind:          kind(s.GetKind()),
					Attributes:    attributes(s.GetAttributes()),
					StatusCode:    status(s.GetStatus().GetCode()),
					StatusMessage: s.GetStatus().GetMessage(),
				}
				out = append(out, span)
			}
		}
	}
	return out
}

func attributes(kvs []*commonpb.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = v.GetStringValue()
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = v.GetIntValue()
		case *commonpb.AnyValue_DoubleValue:
			out[kv.GetKey()] = v.GetDoubleValue()
		case *commonpb.AnyValue_BoolValue:
			out[kv.GetKey()] = v.GetBoolValue()
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}

func kind(k tracepb.Span_SpanKind) string {
	switch k {
	case tracepb.Span_SPAN_KIND_SERVER:
		return "server"
	case tracepb.Span_SPAN_KIND_CLIENT:
		return "client"
	case tracepb.Span_SPAN_KIND_PRODUCER:
		return "producer"
	case tracepb.Span_SPAN_KIND_CONSUMER:
		return "consumer"
	default:
		return "internal"
	}
}

func status(c tracepb.Status_StatusCode) string {
	switch c {
	case tracepb.Status_STATUS_CODE_OK:
		return "ok"
	case tracepb.Status_STATUS_CODE_ERROR:
		return "error"
	default:
		return "unset"
	}
}
