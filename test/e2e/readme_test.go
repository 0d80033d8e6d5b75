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

package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
)

// readmeCommands are the shell commands of the README's quick start, each
// with its continuation lines joined, in order.
func readmeCommands() []string {
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "README.md"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	section, _, _ := strings.Cut(strings.SplitN(string(raw), "\n## Quick start\n", 2)[1], "\n## ")
	var commands []string
	var cur strings.Builder
	inBlock := false
	sc := bufio.NewScanner(strings.NewReader(section))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			inBlock = true
			continue
		case strings.HasPrefix(line, "```"):
			inBlock = false
			continue
		case !inBlock, strings.TrimSpace(line) == "", strings.HasPrefix(strings.TrimSpace(line), "#"):
			continue
		}
		if body, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(body)
			continue
		}
		cur.WriteString(line)
		commands = append(commands, cur.String())
		cur.Reset()
	}
	return commands
}

// actAnswer is a model's answer to act: use this element this way.
func actAnswer(id, method string, args ...string) llmtest.Reply {
	if args == nil {
		args = []string{}
	}
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": method, "arguments": args, "description": method + " " + id, "twoStep": false})
	return llmtest.JSON(string(b))
}

// elementID finds the id of the snapshot line "role: name", as a model
// would read it.
func elementID(pageText, line string) string {
	m := regexp.MustCompile(`\[(\d+-\d+)\] ` + regexp.QuoteMeta(line)).FindStringSubmatch(pageText)
	ExpectWithOffset(1, m).NotTo(BeNil(), "no %q in the snapshot:\n%s", line, pageText)
	return m[1]
}

// pageText is the session's page snapshot.
func pageText(id string) string {
	r := call(http.MethodPost, "/v1/sessions/"+id+"/extract", `{}`, nil)
	ExpectWithOffset(1, r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	return r.Data()["result"].(map[string]any)["pageText"].(string)
}

var _ = Describe("the README's quick start", func() {
	It("runs as written against the stack make dev runs", func() {
		commands := readmeCommands()
		Expect(commands).To(ContainElement("make dev"))
		// One shell for all of them, as in the terminal the README talks
		// to: what one command sets, the next one sees.
		sh := newShell("OPENAI_API_KEY=sk-readme")
		defer sh.close()
		var session string
		ran := 0
		for _, c := range commands {
			// The set-up line installed what the machine lacks (.ci/run
			// does it); the suite started the stack make dev runs.
			if strings.HasPrefix(c, "sudo apt-get") || c == "make dev" {
				continue
			}
			// The page the README loads is on the screen now: script the
			// model's answers to the calls that ask it.
			switch {
			case strings.Contains(c, `"input": "click the Sign up button"`):
				model.Enqueue(actAnswer(elementID(pageText(session), "button: Sign up"), "click"))
			case strings.Contains(c, "/observe"):
				id := elementID(pageText(session), "textbox: Email")
				model.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements": [{"elementId": %q, "description": "the email field", "method": "fill", "arguments": []}]}`, id)))
			case strings.Contains(c, "/extract"):
				// The act by instruction clicked the button, whose
				// handler showed what the action object filled.
				Expect(pageText(session)).To(ContainSubstring("button: ada@example.com"))
				model.Enqueue(llmtest.JSON(`{"extraction": "ada@example.com"}`))
			}
			if strings.Contains(c, "/agentExecute") {
				// The agent reads the page, then says what the
				// button shows.
				Expect(pageText(session)).To(ContainSubstring("button: ada@example.com"))
				model.Enqueue(llmtest.ToolCalls(llmtest.Call("ariaTree", `{}`)),
					llmtest.ToolCalls(llmtest.Call("done", `{"reasoning": "The button shows ada@example.com.", "taskComplete": true}`)))
			}
			out, status := sh.run(c)
			Expect(status).To(Equal("0"), "README command %q failed: %s", c, out)
			ran++
			session = sh.get("SESSION")
			switch {
			case strings.HasPrefix(c, "SESSION="):
				Expect(session).To(MatchRegexp(`^[0-9a-f-]{36}$`), "the start command set no session id")
			case strings.HasPrefix(c, "curl"):
				var reply map[string]any
				Expect(json.Unmarshal([]byte(out), &reply)).To(Succeed(), "%q answered %q", c, out)
				Expect(reply).To(HaveKeyWithValue("success", true), "%q answered %q", c, out)
				if strings.Contains(c, "/agentExecute") {
					res := reply["data"].(map[string]any)["result"].(map[string]any)
					Expect(res).To(HaveKeyWithValue("success", true))
					Expect(res["message"]).To(ContainSubstring("ada@example.com"))
					Expect(res["actions"]).To(HaveLen(2))
				}
				if strings.Contains(c, "/extract") {
					Expect(reply["data"].(map[string]any)["result"]).To(Equal(map[string]any{"extraction": "ada@example.com"}))
				}
			case strings.HasPrefix(c, "kubectl get at"):
				// agentExecute answers from the runner; the task's
				// status follows a moment later, as run again shows.
				Eventually(func() string {
					out, _ := sh.run(c)
					return out
				}).Should(MatchRegexp(`\s` + session + `\s+Succeeded\s+2\s`))
			case strings.HasPrefix(c, "kubectl get bs"):
				// end answers at once; the phase follows when the
				// manager has stopped the browser, as run again shows.
				Eventually(func() string {
					out, _ := sh.run(c)
					return out
				}).Should(MatchRegexp(session + `\s+(Ending|Ended)\s`))
			}
		}
		Expect(ran).To(BeNumerically(">=", 10))
		reqs := model.Requests()
		Expect(reqs).NotTo(BeEmpty())
		// The key of x-model-api-key reached the model.
		Expect(reqs[len(reqs)-1].Header.Get("Authorization")).To(Equal("Bearer sk-readme"))
	})
})

// shell is one bash process that runs commands in turn, like a terminal.
type shell struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

const sentinel = "__e2e_done__"

func newShell(env ...string) *shell {
	cmd := exec.Command("bash", "--norc", "--noprofile")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+framework.AssetsDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	in, err := cmd.StdinPipe()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out, err := cmd.StdoutPipe()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	cmd.Stderr = GinkgoWriter
	ExpectWithOffset(1, cmd.Start()).To(Succeed())
	return &shell{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// run runs one command and returns what it printed and its exit status.
func (s *shell) run(command string) (output, status string) {
	_, err := fmt.Fprintf(s.in, "%s\n__rc=$?; printf '\\n%s %%s\\n' \"$__rc\"\n", command, sentinel)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var b strings.Builder
	for {
		line, err := s.out.ReadString('\n')
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "the shell ended; it printed %q", b.String())
		if rest, ok := strings.CutPrefix(line, sentinel+" "); ok {
			return strings.TrimSuffix(b.String(), "\n"), strings.TrimSpace(rest)
		}
		b.WriteString(line)
	}
}

// get is the value of a shell variable.
func (s *shell) get(name string) string {
	out, _ := s.run(`printf '%s' "$` + name + `"`)
	return out
}

func (s *shell) close() {
	_ = s.in.Close()
	_ = s.cmd.Wait()
}
