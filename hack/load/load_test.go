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

package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

func TestLoopbackURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8000", true},
		{"http://127.3.4.5:8000/", true},
		{"https://[::1]:8443", true},
		{"http://localhost:8000", true},
		{"http://10.0.0.1:8000", false},
		{"http://0.0.0.0:8000", false},
		{"http://example.com", false},
		{"http://127.0.0.1.example.com", false},
		{"ftp://127.0.0.1", false},
		{"127.0.0.1:8000", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := loopbackURL(tc.url)
			if diff := cmp.Diff(tc.ok, err == nil); diff != "" {
				t.Errorf("accepted (-want +got):\n%s (error %v)", diff, err)
			}
		})
	}
}

func TestListeningInodes(t *testing.T) {
	// /proc/net/tcp: 127.0.0.1:8000 (0x1F40) listens, and has an
	// established connection; 0.0.0.0:8080 listens.
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F40 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1
`
	for _, tc := range []struct {
		port int
		want []string
	}{
		{8000, []string{"111"}},
		{8080, []string{"222"}},
		{9000, nil},
	} {
		if diff := cmp.Diff(tc.want, listeningInodes(strings.NewReader(table), tc.port)); diff != "" {
			t.Errorf("port %d (-want +got):\n%s", tc.port, diff)
		}
	}
}

func TestVMRSS(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  string
		want    int64
		wantErr bool
	}{
		{"present", "Name:\tdev\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\nThreads:\t12\n", 123456, false},
		{"gone", "Name:\tdev\n", 0, true},
		{"odd unit", "VmRSS:\t 12 MB\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := vmRSS(strings.NewReader(tc.status))
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Fatalf("error (-want +got):\n%s (%v)", diff, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("VmRSS (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummarise(t *testing.T) {
	msd := func(ms ...int) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want latencies
	}{
		{"none", nil, latencies{}},
		{"one", msd(7), latencies{N: 1, P50ms: 7, P95ms: 7, MaxMs: 7}},
		{"unsorted ten", msd(10, 1, 9, 2, 8, 3, 7, 4, 6, 5), latencies{N: 10, P50ms: 5, P95ms: 10, MaxMs: 10}},
		{"twenty", msd(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), latencies{N: 20, P50ms: 10, P95ms: 19, MaxMs: 20}},
		{"sub-millisecond", []time.Duration{1500 * time.Microsecond}, latencies{N: 1, P50ms: 1.5, P95ms: 1.5, MaxMs: 1.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarise(tc.in)); diff != "" {
				t.Errorf("summarise (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadEnvFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "env")
	content := "export BROWSERFLEET_API_URL='http://127.0.0.1:8000'\n" +
		"export BROWSERFLEET_API_KEY='bf_it'\\''s'\n" +
		"# a comment\n" +
		"export KUBECONFIG=/tmp/kc\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"BROWSERFLEET_API_URL": "http://127.0.0.1:8000",
		"BROWSERFLEET_API_KEY": "bf_it's",
		"KUBECONFIG":           "/tmp/kc",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vars (-want +got):\n%s", diff)
	}
	none, err := readEnvFile(filepath.Join(dir, "missing"))
	if err != nil || len(none) != 0 {
		t.Errorf("a missing file: %v, %v; want no values and no error", none, err)
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults", []string{"starts"}, ""},
		{"reduced", []string{"-sessions", "5", "-acts", "20", "acts"}, ""},
		{"no scenario", nil, "name one scenario"},
		{"unknown scenario", []string{"soak"}, "unknown scenario"},
		{"too many starts", []string{"-starts", "101", "starts"}, "-starts is 101"},
		{"too many acts", []string{"-acts", "1001", "acts"}, "-acts is 1001"},
		{"too many streams", []string{"-streams", "5001", "sse"}, "-streams is 5001"},
		{"no sessions", []string{"-sessions", "0", "acts"}, "-sessions is 0"},
		{"long timeout", []string{"-timeout", "2h", "sse"}, "-timeout is 2h0m0s"},
		{"bad mode", []string{"-mode", "hot", "starts"}, "-mode is \"hot\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, io.Discard)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || !strings.Contains(got, tc.wantErr) {
				t.Errorf("parseFlags(%q) = %q, want an error containing %q", tc.args, got, tc.wantErr)
			}
		})
	}
}

func TestEventStream(t *testing.T) {
	const wire = "event: starting\ndata: {\"type\":\"system\"}\n\n" +
		": keep-alive\n\n" +
		"event: connected\ndata: {\"type\":\"system\"}\n\n" +
		"event: running\ndata: {\"type\":\"log\"}\n\n" +
		"event: finished\ndata: {\"data\":{\"status\":\"finished\"}}\n\n"
	st := &eventStream{body: io.NopCloser(strings.NewReader(wire)), r: bufio.NewReader(strings.NewReader(wire))}
	var events []string
	for {
		ev, _, err := st.next()
		if err != nil {
			break
		}
		events = append(events, ev)
	}
	if diff := cmp.Diff([]string{"starting", "connected", "running", "finished"}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name, wire, want string
		ok               bool
	}{
		{"finished", wire, "finished", true},
		{"error first", "event: connected\ndata: {}\n\nevent: error\ndata: {\"e\":1}\n\n", "finished", false},
		{"cut short", "event: connected\ndata: {}\n\n", "finished", false},
		{"connected", wire, "connected", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &eventStream{body: io.NopCloser(strings.NewReader(tc.wire)), r: bufio.NewReader(strings.NewReader(tc.wire))}
			ok, _, _ := st.until(tc.want)
			if diff := cmp.Diff(tc.ok, ok); diff != "" {
				t.Errorf("until(%q) (-want +got):\n%s", tc.want, diff)
			}
		})
	}
}

// TestPoolTemplate: the pool matches the sessions this command starts,
// by the rule the manager claims with.
func TestPoolTemplate(t *testing.T) {
	got, err := poolTemplate("default")
	if err != nil {
		t.Fatal(err)
	}
	want := v1alpha1.NormalizeTemplate(v1alpha1.BrowserPoolTemplate{})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}
	if v1alpha1.LaunchHash(got) != v1alpha1.LaunchHash(v1alpha1.BrowserPoolTemplate{}) {
		t.Error("the template's launch hash differs from a default session's")
	}
}
