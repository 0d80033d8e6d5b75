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

// Package redistest runs a real redis-server (Debian's package) for a
// test: on a free loopback port, in the test's temporary directory, with
// nothing saved to disk, stopped when the test ends.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Binary is the redis-server run; REDIS_SERVER overrides it.
func Binary() string {
	if b := os.Getenv("REDIS_SERVER"); b != "" {
		return b
	}
	return "redis-server"
}

// TB is what Start needs of a test: testing.TB or Ginkgo's GinkgoT().
type TB interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Fatalf(format string, args ...any)
}

// Options configure the server.
type Options struct {
	// Password, when set, is the server's requirepass. It goes into the
	// server's configuration file, never its command line.
	Password string
}

// Server is a running redis-server.
type Server struct {
	// Address is its host:port on 127.0.0.1.
	Address string
	// Password is its requirepass, or empty.
	Password string

	args []string
	dir  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// attempts bounds the tries at a free port: another process may take the
// port between our probe and the server's bind.
const attempts = 5

// readyTimeout bounds a server's start: it is ready in milliseconds, but
// a machine busy with other tests may be slow.
const readyTimeout = time.Minute

// Start starts a redis-server and returns once it accepts connections. It
// stops when the test ends.
func Start(t TB, opts Options) *Server {
	t.Helper()
	dir := t.TempDir()
	var lastErr error
	for range attempts {
		s, err := start(dir, opts)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("redistest: starting %s: %v", Binary(), lastErr)
	return nil
}

func start(dir string, opts Options) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "redis.conf")
	lines := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(port),
		"protected-mode yes",
		`save ""`,
		"appendonly no",
		"dir " + dir,
		`logfile ""`,
		"daemonize no",
	}
	if opts.Password != "" {
		lines = append(lines, "requirepass "+opts.Password)
	}
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", conf, err)
	}
	s := &Server{Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Password: opts.Password, args: []string{conf}, dir: dir}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s, nil
}

// run starts the process and waits until it is ready.
func (s *Server) run() error {
	cmd := exec.Command(Binary(), s.args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = sysProcAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	// The server says when it is ready; its log is kept for an error.
	ready := make(chan error, 1)
	go func() {
		var log strings.Builder
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			line := sc.Text()
			if !said {
				log.WriteString(line + "\n")
				if strings.Contains(line, "Ready to accept connections") {
					said = true
					ready <- nil
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		if !said {
			ready <- fmt.Errorf("redis-server exited before it was ready:\n%s", log.String())
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case err := <-ready:
		if err != nil {
			return err
		}
	case <-time.After(readyTimeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("redis-server was not ready within %s", readyTimeout)
	}
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return nil
}

// StartArgs runs redis-server with args, as a manifest gives them, in dir,
// and returns once it accepts connections at address (which args must
// make it listen on, on loopback). It stops when the test ends.
func StartArgs(t TB, dir, address, password string, args ...string) *Server {
	t.Helper()
	s := &Server{Address: address, Password: password, args: args, dir: dir}
	if err := s.run(); err != nil {
		t.Fatalf("redistest: starting %s %q: %v", Binary(), args, err)
	}
	t.Cleanup(s.Stop)
	return s
}

// FreePort returns a loopback port nobody listens on right now.
func FreePort(t TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return p
}

// Restart starts a stopped server again, on the same address, with the
// same configuration and no data: a Redis that came back.
func (s *Server) Restart(t TB) {
	t.Helper()
	s.Stop()
	if err := s.run(); err != nil {
		t.Fatalf("redistest: restarting %s on %s: %v", Binary(), s.Address, err)
	}
}

// Stop stops the server and waits for it to exit; a second Stop does
// nothing. A test of a Redis that went away calls it early.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = s.cmd.Process.Kill()
	}
	<-s.done
	s.cmd = nil
}

// freePort returns a loopback port nobody listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
