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

package runner

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/internal/testing/benchpage"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// BenchmarkSessionMemory measures what an idle session holds: the summed
// PSS (/proc/<pid>/smaps_rollup) of the runner process and of every
// Chromium process, first on about:blank, right after the browser is
// ready, then after the bench page (internal/testing/benchpage,
// served on loopback) was loaded through the runner's navigate, and last
// after a page embedding three other sites (127.0.0.2 to .4), which shows
// what site isolation costs. The runner
// is the real binary (cmd/runner, built into a temporary directory), started
// as a runner pod's container is: its configuration in the environment,
// its token a file, a session (setsid) of its own, so that the runner and
// Chromium's processes, helpers it leaves behind included, are the
// session's members. Each figure is taken once the sum stays within
// settleBand for settleSamples samples in a row: pages, the GC and
// Chromium's own purges move it for a while after a load. Run it with
//
//	go test ./runner/ -run '^$' -bench SessionMemory -benchtime 3x
//
// MB-pss-blank, -bench and -iframes are the sums (MB = 2^20 bytes); MB-uss-*
// sum private memory only, what ending the session frees whoever else maps
// the same binaries (other browsers on the machine lower the PSS of
// Chromium's shared pages, not its USS); MB-bench-* split the bench PSS by
// process type (runner, browser, renderer, gpu, network and other
// utilities, zygote). The runner is built as the image builds it
// (-trimpath, -ldflags=-s -w).
//
// With $BENCH_RUNNER_BINARY naming a runner binary (another commit's, built
// with go build -o), that binary is measured instead, with its defaults
// only: figures before and after a change come from one run.
func BenchmarkSessionMemory(b *testing.B) {
	variants := memoryVariants
	bin := os.Getenv("BENCH_RUNNER_BINARY")
	if bin != "" {
		variants = variants[:1]
	} else {
		bin = filepath.Join(b.TempDir(), "runner")
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "../cmd/runner")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("building the runner: %v\n%s", err, out)
		}
	}
	page, err := benchpage.HTML()
	if err != nil {
		b.Fatalf("reading the bench page: %v", err)
	}
	site := runnertest.NewPageServer(b, runnertest.HTMLHandler(string(page)))
	// A page that embeds three other sites, which site isolation puts in
	// three more renderers.
	framed := `<!doctype html><title>framed</title>`
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		other := runnertest.NewPageServerOn(b, ip, runnertest.HTMLHandler(`<!doctype html><title>embedded</title><p>embedded page`))
		framed += `<iframe src="` + other.URL + `/"></iframe>`
	}
	framedSite := runnertest.NewPageServer(b, runnertest.HTMLHandler(framed))

	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			var blank, bench, iframes procs.Memory
			var alone [3]int64
			byType := map[string]int64{}
			for b.Loop() {
				r := startRunnerProcess(b, bin, v.args)
				blank = blank.Add(r.settled(b, nil))
				alone[0] += r.alone
				r.navigate(b, site.URL)
				bench = bench.Add(r.settled(b, byType))
				alone[1] += r.alone
				r.navigate(b, framedSite.URL)
				iframes = iframes.Add(r.settled(b, nil))
				alone[2] += r.alone
				r.stop(b)
			}
			n := float64(b.N) // b.Loop sets it once the loop is done
			if alone[0] >= 0 {
				for i, what := range []string{"blank", "bench", "iframes"} {
					b.ReportMetric(mb(alone[i])/n, "MB-alone-"+what)
				}
			}
			b.ReportMetric(mb(blank.PSS)/n, "MB-pss-blank")
			b.ReportMetric(mb(bench.PSS)/n, "MB-pss-bench")
			b.ReportMetric(mb(iframes.PSS)/n, "MB-pss-iframes")
			b.ReportMetric(mb(blank.USS)/n, "MB-uss-blank")
			b.ReportMetric(mb(bench.USS)/n, "MB-uss-bench")
			b.ReportMetric(mb(iframes.USS)/n, "MB-uss-iframes")
			for k, v := range byType {
				b.ReportMetric(mb(v)/n, "MB-bench-"+k)
			}
		})
	}
}

// memoryVariants are the runner configurations BenchmarkSessionMemory
// measures, by the runner's flags: its defaults (the headless shell where
// it is installed), Chromium with the same switches, and the headless
// shell without site isolation.
var memoryVariants = []struct {
	name string
	args []string
}{
	{"default", nil},
	{"chromium", []string{"--headless-shell="}},
	{"no-site-isolation", []string{"--site-isolation=false"}},
	{"no-webgl", []string{"--webgl=false"}},
}

// Settling: a figure is taken once settleSamples samples in a row, each
// settleEvery apart, stay within settleBand of the previous one, or after
// settleMax.
const (
	settleEvery   = 500 * time.Millisecond
	settleSamples = 4
	settleBand    = 2 << 20
	settleMax     = 30 * time.Second
)

type runnerProcess struct {
	cmd    *exec.Cmd
	client runnertest.Client
	done   chan error
	// alone is aloneMemory at the last settled figure.
	alone int64
}

// startRunnerProcess starts the runner binary bin with args for a headless
// session of the default spec, as the manager configures a runner pod, and
// waits for its /healthz to say the browser is ready.
func startRunnerProcess(b *testing.B, bin string, args []string) *runnerProcess {
	b.Helper()
	dir := b.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, rpc.FileToken), []byte(runnertest.Token), 0o400); err != nil {
		b.Fatal(err)
	}
	spec, err := json.Marshal(runnertest.Config(nil).Spec)
	if err != nil {
		b.Fatal(err)
	}
	addr := freeLoopbackAddr(b)
	cmd := exec.Command(bin, append([]string{
		"--listen-address=" + addr,
		"--data-dir=" + filepath.Join(dir, "data"),
		"--" + rpc.FlagEgressAllowCIDR + "=127.0.0.0/8",
		"--log-level=warn",
		"--log-format=text",
	}, args...)...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOMEMLIMIT=") || strings.HasPrefix(kv, "GOGC=")
	}),
		rpc.EnvSession+"="+string(spec),
		rpc.EnvSessionName+"=bench",
		rpc.EnvNamespace+"=default",
		rpc.EnvSecretsDir+"="+secrets,
		"HOME="+dir,
		"TMPDIR="+dir,
	)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting the runner: %v", err)
	}
	r := &runnerProcess{cmd: cmd, client: runnertest.Client{Base: "http://" + addr, Token: runnertest.Token}, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	b.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(r.client.Base + rpc.HealthPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		select {
		case err := <-r.done:
			b.Fatalf("the runner exited before it was ready: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatal("the runner was not ready within two minutes")
		}
	}
}

// navigate loads url through the runner's navigate.
func (r *runnerProcess) navigate(b *testing.B, url string) {
	b.Helper()
	status, body, err := r.client.Call(b.Context(), rpc.NavigatePath, rpc.NavigateRequest{URL: url})
	if err != nil || status != http.StatusOK {
		b.Fatalf("navigating to %s: %d %s %v", url, status, body, err)
	}
}

// stop ends the runner as the kubelet does, with SIGTERM, and waits for it.
func (r *runnerProcess) stop(b *testing.B) {
	b.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.done:
		if err != nil {
			// A runner killed by its stop's SIGTERM exits 0; say so
			// when one did not, without failing the figures.
			b.Logf("the runner exited: %v", err)
		}
	case <-time.After(time.Minute):
		b.Fatal("the runner did not stop within a minute of SIGTERM")
	}
	// Helpers Chromium orphaned may outlive it for a moment; the next
	// iteration must not count them.
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
}

// settled is what the runner's session holds once its PSS settled;
// byType, when not nil, receives its PSS split by process type.
func (r *runnerProcess) settled(b *testing.B, byType map[string]int64) procs.Memory {
	b.Helper()
	var last procs.Memory
	var types map[string]int64
	stable := 0
	for i, deadline := 0, time.Now().Add(settleMax); ; i++ {
		m, t := sessionMemory(r.cmd.Process.Pid)
		if i > 0 && abs(m.PSS-last.PSS) <= settleBand {
			stable++
		} else {
			stable = 0
		}
		last, types = m, t
		if stable >= settleSamples || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-r.done:
			b.Fatalf("the runner exited: %v", err)
		case <-time.After(settleEvery):
		}
	}
	for k, v := range types {
		if byType != nil {
			byType[k] += v
		}
	}
	r.alone = aloneMemory(r.cmd.Process.Pid)
	return last
}

// sessionMemory sums the memory of the members of session sid, and splits
// their PSS by process type. A process that ended between the listing and
// the reading counts nothing.
func sessionMemory(sid int) (procs.Memory, map[string]int64) {
	var total procs.Memory
	types := map[string]int64{}
	for _, pid := range procs.SessionMembers(sid) {
		m, err := procs.ReadMemory(pid)
		if err != nil {
			continue
		}
		total = total.Add(m)
		types[processType(pid == sid, procs.Cmdline(pid))] += m.PSS
	}
	return total, types
}

// aloneMemory is what session sid would hold if nothing outside it mapped
// its files: its PSS without the file part, plus each file page any of its
// processes maps, once. Other browsers running the same binaries (other
// tests, other sessions of a node) lower PSS and USS, not this. -1 when
// the kernel hides page frames (not root).
func aloneMemory(sid int) int64 {
	var anon int64
	pages := map[uint64]struct{}{}
	for _, pid := range procs.SessionMembers(sid) {
		m, err := procs.ReadMemory(pid)
		if err != nil {
			continue
		}
		if err := procs.FilePages(pid, pages); errors.Is(err, procs.ErrNoFrames) {
			return -1
		} else if err != nil {
			continue
		}
		anon += m.PSS - m.PSSFile
	}
	return anon + int64(len(pages))*4096
}

// processType names a process of a runner's session by its command line:
// Chromium's --type and --utility-sub-type. Chromium rewrites the command
// line of its helpers into one string (their process title), so it is split
// at spaces again.
func processType(runner bool, cmdline []string) string {
	if runner {
		return "runner"
	}
	var typ, sub string
	for _, a := range strings.Fields(strings.Join(cmdline, " ")) {
		if v, ok := strings.CutPrefix(a, "--type="); ok {
			typ = v
		}
		if v, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
			sub = v
		}
	}
	switch {
	case typ == "":
		return "browser"
	case typ == "gpu-process":
		return "gpu"
	case typ == "utility" && strings.HasPrefix(sub, "network."):
		return "network"
	case typ == "utility" && strings.HasPrefix(sub, "storage."):
		return "storage"
	case typ == "utility":
		return "utility"
	default:
		return typ // renderer, zygote, crashpad-handler
	}
}

func freeLoopbackAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
