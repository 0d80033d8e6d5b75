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

package chart_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/runner/config"
)

// dockerfile is the little of a Dockerfile these tests read: its global
// ARG defaults and its stages' instructions, continuation lines joined.
type dockerfile struct {
	args   map[string]string
	stages []*stage
}

type stage struct {
	name, from string
	// instructions are "INSTRUCTION rest", in order.
	instructions []string
}

func (s *stage) all(instruction string) []string {
	var out []string
	for _, in := range s.instructions {
		if rest, ok := strings.CutPrefix(in, instruction+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

func (d *dockerfile) stage(name string) *stage {
	for _, s := range d.stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

func parseDockerfile(file string) *dockerfile {
	GinkgoHelper()
	b, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	d := &dockerfile{args: map[string]string{}}
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(strings.TrimSpace(cont) + " ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	Expect(cur.Len()).To(BeZero(), "a continuation line ends the file")
	var s *stage
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		instr = strings.ToUpper(instr)
		switch {
		case instr == "FROM":
			f := strings.Fields(rest)
			Expect(f).To(HaveLen(3), "FROM %s: name every stage", rest)
			Expect(strings.ToUpper(f[1])).To(Equal("AS"))
			s = &stage{name: f[2], from: f[0]}
			d.stages = append(d.stages, s)
		case s == nil && instr == "ARG":
			k, v, _ := strings.Cut(rest, "=")
			d.args[k] = v
		case s == nil:
			Fail("instruction before the first FROM: " + l)
		default:
			s.instructions = append(s.instructions, instr+" "+rest)
		}
	}
	return d
}

// expand replaces ${NAME} by the global ARG defaults.
func (d *dockerfile) expand(s string) string {
	return os.Expand(s, func(k string) string { return d.args[k] })
}

// copySources returns the sources and destination of a COPY and its --from.
func copySources(rest string) (from string, srcs []string, dst string) {
	f := strings.Fields(rest)
	for len(f) > 0 && strings.HasPrefix(f[0], "--") {
		if v, ok := strings.CutPrefix(f[0], "--from="); ok {
			from = v
		}
		f = f[1:]
	}
	return from, f[:len(f)-1], f[len(f)-1]
}

var _ = Describe("the Dockerfile", func() {
	root := framework.RepoRoot()
	var d *dockerfile
	BeforeEach(func() { d = parseDockerfile(filepath.Join(root, "Dockerfile")) })

	It("has a builder, a runner and a controller stage on pinned images", func() {
		Expect(d.stage("builder")).NotTo(BeNil())
		Expect(d.stage("runner")).NotTo(BeNil())
		Expect(d.stage("controller")).NotTo(BeNil())
		for _, arg := range []string{"GO_VERSION", "DEBIAN_RELEASE", "DISTROLESS_IMAGE"} {
			Expect(d.args).To(HaveKey(arg), "a build argument for the version of what the images are built from")
		}
		Expect(d.expand(d.stage("builder").from)).To(Equal("golang:1.26"))
		Expect(d.expand(d.stage("runner").from)).To(MatchRegexp(`^debian:[a-z]+-slim$`))
		Expect(d.expand(d.stage("controller").from)).To(Equal("gcr.io/distroless/static-debian12:nonroot"))
		for _, s := range d.stages {
			img := d.expand(s.from)
			Expect(img).To(MatchRegexp(`^[^:@]+(:[0-9]+)?(/[^:@]+)*:[A-Za-z0-9_][A-Za-z0-9_.-]*$`), "stage %s: pin %q by tag", s.name, img)
			Expect(img).NotTo(HaveSuffix(":latest"))
		}
	})

	It("copies only what exists and what .dockerignore lets through", func() {
		ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
		Expect(err).NotTo(HaveOccurred())
		allowed := map[string]bool{}
		for l := range strings.SplitSeq(string(ignore), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "!"); ok {
				allowed[strings.TrimSuffix(v, "/")] = true
			}
		}
		Expect(string(ignore)).To(HavePrefix("#"))
		Expect(strings.Contains(string(ignore), "\n*\n")).To(BeTrue(), ".dockerignore starts from nothing")
		n := 0
		for _, s := range d.stages {
			for _, c := range s.all("COPY") {
				from, srcs, _ := copySources(c)
				if from != "" {
					continue
				}
				for _, src := range srcs {
					src = strings.TrimSuffix(strings.TrimPrefix(src, "./"), "/")
					_, err := os.Stat(filepath.Join(root, src))
					Expect(err).NotTo(HaveOccurred(), "COPY %s", src)
					Expect(allowed).To(HaveKey(src), ".dockerignore leaves out %s", src)
					n++
				}
			}
		}
		Expect(n).To(BeNumerically(">", 2))
	})

	It("builds every binary from packages whose sources it copies", func() {
		b := d.stage("builder")
		var builds []string
		for _, r := range b.all("RUN") {
			if strings.Contains(r, "go build") {
				builds = append(builds, r)
			}
		}
		Expect(builds).To(HaveLen(1))
		Expect(builds[0]).To(ContainSubstring("CGO_ENABLED=0"))
		Expect(builds[0]).To(ContainSubstring("-o /out/ "))
		pkgs := regexp.MustCompile(`\./cmd/[a-z]+`).FindAllString(builds[0], -1)
		Expect(pkgs).To(ConsistOf("./cmd/manager", "./cmd/api", "./cmd/runner", "./cmd/bfkeys"))

		var copied []string
		for _, c := range b.all("COPY") {
			_, srcs, _ := copySources(c)
			for _, s := range srcs {
				copied = append(copied, strings.TrimSuffix(s, "/"))
			}
		}
		// Every package of the module the binaries import, and every file
		// they embed, is in a directory the builder copies.
		cmd := exec.Command("go", append([]string{"list", "-deps", "-json=Name,ImportPath,Dir,EmbedFiles,Standard,Module"}, pkgs...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "go list")
		dec := json.NewDecoder(bytes.NewReader(out))
		mains := 0
		for dec.More() {
			var p struct {
				Name, ImportPath, Dir string
				EmbedFiles            []string
				Standard              bool
				Module                *struct{ Main bool }
			}
			Expect(dec.Decode(&p)).To(Succeed())
			if p.Standard || p.Module == nil || !p.Module.Main {
				continue
			}
			rel, err := filepath.Rel(root, p.Dir)
			Expect(err).NotTo(HaveOccurred())
			top := strings.Split(filepath.ToSlash(rel), "/")[0]
			Expect(copied).To(ContainElement(top), "%s is in %s, which the builder does not copy", p.ImportPath, top)
			for _, e := range p.EmbedFiles {
				Expect(e).NotTo(ContainSubstring("testdata"), "%s embeds %s, which .dockerignore leaves out", p.ImportPath, e)
			}
			if p.Name == "main" {
				mains++
			}
		}
		Expect(mains).To(Equal(len(pkgs)))
	})

	// built are the binaries the builder makes.
	built := func() map[string]bool {
		out := map[string]bool{}
		for _, r := range d.stage("builder").all("RUN") {
			for _, p := range regexp.MustCompile(`\./cmd/([a-z]+)`).FindAllStringSubmatch(r, -1) {
				out["/out/"+p[1]] = true
			}
		}
		return out
	}
	// provided are the files a final stage has: copied from the builder,
	// or installed with its Debian packages.
	provided := func(s *stage) map[string]bool {
		GinkgoHelper()
		out := map[string]bool{}
		bins := built()
		for _, c := range s.all("COPY") {
			from, srcs, dst := copySources(c)
			Expect(from).To(Equal("builder"), "COPY %s", c)
			for _, src := range srcs {
				Expect(bins).To(HaveKey(src), "COPY %s: the builder does not build it", src)
				if strings.HasSuffix(dst, "/") || len(srcs) > 1 {
					out[path.Join(dst, path.Base(src))] = true
				} else {
					out[dst] = true
				}
			}
		}
		packageFiles := map[string]string{"tini": "/usr/bin/tini", "chromium": "/usr/bin/chromium", "chromium-headless-shell": "/usr/lib/chromium/chromium-headless-shell"}
		for _, r := range s.all("RUN") {
			if _, pkgs, ok := strings.Cut(r, "apt-get install"); ok {
				for _, f := range strings.Fields(pkgs) {
					name, _, _ := strings.Cut(f, "$")
					if file, ok := packageFiles[name]; ok {
						out[file] = true
					}
				}
			}
		}
		return out
	}
	entrypoint := func(s *stage) []string {
		GinkgoHelper()
		e := s.all("ENTRYPOINT")
		Expect(e).To(HaveLen(1))
		var argv []string
		Expect(json.Unmarshal([]byte(e[0]), &argv)).To(Succeed(), "ENTRYPOINT in exec form")
		return argv
	}

	It("makes a controller image with the manager, the API and bfkeys, non-root", func() {
		s := d.stage("controller")
		files := provided(s)
		Expect(files).To(Equal(map[string]bool{"/manager": true, "/api": true, "/bfkeys": true}))
		Expect(files).To(HaveKey(entrypoint(s)[0]))
		// The chart's and config/'s commands.
		for _, f := range []string{"templates/manager-deployment.yaml", "templates/api-deployment.yaml"} {
			b, err := os.ReadFile(filepath.Join(ChartDir(), f))
			Expect(err).NotTo(HaveOccurred())
			cmd := regexp.MustCompile(`command: \["([^"]+)"\]`).FindSubmatch(b)
			Expect(cmd).NotTo(BeNil(), f)
			Expect(files).To(HaveKey(string(cmd[1])), f)
		}
		Expect(s.all("USER")).To(Equal([]string{"65532:65532"}))
	})

	It("makes a runner image with Debian's Chromium, fonts and the runner, non-root, with a writable /tmp", func() {
		s := d.stage("runner")
		files := provided(s)
		for _, f := range entrypoint(s) {
			if strings.HasPrefix(f, "/") {
				Expect(files).To(HaveKey(f), "ENTRYPOINT names %s", f)
			}
		}
		Expect(entrypoint(s)).To(ContainElement("/usr/local/bin/runner"))
		Expect(files).To(HaveKey(config.DefaultChromiumPath), "the runner's default --chromium")
		Expect(files).To(HaveKey(config.DefaultHeadlessShellPath), "the runner's default --headless-shell")
		install := strings.Join(s.all("RUN"), " ")
		for _, pkg := range []string{"chromium", "chromium-headless-shell", "fonts-liberation", "fonts-noto-cjk", "fonts-noto-color-emoji", "ca-certificates"} {
			Expect(install).To(MatchRegexp(`\s`+regexp.QuoteMeta(pkg)+`(\s|\$)`), "installs %s", pkg)
		}
		Expect(install).To(ContainSubstring("--no-install-recommends"))
		Expect(s.all("USER")).To(Equal([]string{"65532:65532"}))
		Expect(s.all("ENV")).To(ContainElement("HOME=/tmp"), "the runner pod's HOME")
		Expect(s.all("VOLUME")).To(ContainElement(`["/tmp"]`))
	})
})
