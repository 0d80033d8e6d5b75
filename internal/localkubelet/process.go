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
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds of a termination message taken from the log.
const (
	tailBytes = 512
	tailLines = 10
)

// process is one container's process. Its session and process group have
// its pid as their id, and are the container: everything in them dies with
// it.
type process struct {
	pid       int
	cmd       *exec.Cmd
	startedAt time.Time
	logPath   string
	// logStart is where this run's output starts in the log file, which
	// earlier runs and pods of the same name appended to.
	logStart int64
	// logsDone is closed when the log copier has read everything.
	logsDone  chan struct{}
	logReader *os.File
	// done is closed once every process of the container is gone and
	// exitCode is set; recorded once the pod's state says so.
	done     chan struct{}
	recorded chan struct{}
	exitCode int32

	termOnce sync.Once
	mu       sync.Mutex
	// gone is set once the session is empty: its id may name someone
	// else's processes from then on, so nothing is signalled any more.
	gone   bool
	killAt time.Time
}

// startProcess starts argv in dir with exactly env, as cred when set (else
// as the Kubelet's user), its output appended to logPath and, when out is
// set, to out with each line prefixed.
func startProcess(argv, env []string, dir string, cred *syscall.Credential, logPath string, out io.Writer, prefix string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log: %w", err)
	}
	start, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("opening the log: %w", err)
	}
	// The process writes into a pipe of ours rather than into the file, so
	// that its lines can go to out too; os/exec copies nothing itself, so
	// Wait does not wait for orphans that still hold the pipe.
	r, w, err := os.Pipe()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("creating the log pipe: %w", err)
	}
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: env, Dir: dir, Stdout: w, Stderr: w}
	err = startCmd(cmd, cred)
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		_ = f.Close()
		return nil, err
	}
	p := &process{
		pid:       cmd.Process.Pid,
		cmd:       cmd,
		startedAt: time.Now(),
		logPath:   logPath,
		logStart:  start,
		logsDone:  make(chan struct{}),
		logReader: r,
		done:      make(chan struct{}),
		recorded:  make(chan struct{}),
	}
	go p.copyLogs(r, f, out, prefix)
	return p, nil
}

func (p *process) copyLogs(r io.Reader, f *os.File, out io.Writer, prefix string) {
	defer close(p.logsDone)
	defer func() { _ = f.Close() }()
	var lines *linePrefixer
	if out != nil {
		lines = &linePrefixer{out: out, prefix: prefix}
		defer lines.flush()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			// The file gets the bytes at once, not line by line, so that
			// a prompt without a newline shows up too.
			_, _ = f.Write(buf[:n])
			if lines != nil {
				lines.write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// wait returns once the container is over: its process exited, and the rest
// of its session was killed, as a PID namespace's processes die with its
// first one.
func (p *process) wait() {
	reaped := awaitExit(p.cmd)
	killAll(p.pid, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for alive(p.pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.mu.Lock()
	p.gone = true
	p.mu.Unlock()
	if !reaped {
		_ = p.cmd.Wait()
	}
	// A process that left the session may still hold the pipe; the log
	// stops here.
	select {
	case <-p.logsDone:
	case <-time.After(time.Second):
	}
	_ = p.logReader.Close()
	<-p.logsDone
	p.exitCode = exitCode(p.cmd.ProcessState)
	close(p.done)
}

// exitCode is the container runtime's exit code: the process's, or 128 plus
// the signal that killed it.
func exitCode(st *os.ProcessState) int32 {
	if st == nil {
		return 128 + int32(syscall.SIGKILL)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(st.ExitCode())
}

// terminate sends SIGTERM to the process group, and SIGKILL to the whole
// container when it has not exited grace later. A second call with an
// earlier deadline shortens the grace, as a second delete does; it reports
// whether the call set the deadline.
func (p *process) terminate(grace time.Duration) bool {
	p.termOnce.Do(func() { p.signal(syscall.SIGTERM, false) })
	deadline := time.Now().Add(grace)
	p.mu.Lock()
	if !p.killAt.IsZero() && !deadline.Before(p.killAt) {
		p.mu.Unlock()
		return false
	}
	p.killAt = deadline
	p.mu.Unlock()
	go func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			p.signal(syscall.SIGKILL, true)
		}
	}()
	return true
}

// signal signals the process group, or with all every process of the
// container, unless it is gone.
func (p *process) signal(sig syscall.Signal, all bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone {
		return
	}
	if all {
		killAll(p.pid, sig)
		return
	}
	_ = syscall.Kill(-p.pid, sig)
}

// logTail is the end of this run's log: its last lines, at most tailBytes,
// as the kubelet's FallbackToLogsOnError termination message is.
func (p *process) logTail() string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	from := max(p.logStart, fi.Size()-tailBytes)
	b := make([]byte, fi.Size()-from)
	if _, err := f.ReadAt(b, from); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	b = bytes.TrimRight(b, "\n\r\t ")
	if from > p.logStart {
		// Drop the cut line, unless it is the only one.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.ToValidUTF8(strings.Join(lines, "\n"), "?")
}

// linePrefixer writes whole lines, each prefixed, to out.
type linePrefixer struct {
	out     io.Writer
	prefix  string
	partial []byte
}

func (l *linePrefixer) write(b []byte) {
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return
		}
		_, _ = l.out.Write(append([]byte(l.prefix), l.partial[:i+1]...))
		l.partial = l.partial[i+1:]
	}
}

func (l *linePrefixer) flush() {
	if len(l.partial) > 0 {
		_, _ = l.out.Write(append(append([]byte(l.prefix), l.partial...), '\n'))
		l.partial = nil
	}
}

// executableBy checks that a process running as cred can execute path:
// each directory on the way searchable, and the file executable, by its
// permission bits. A runtime fails such a start with "permission denied";
// this says why.
func executableBy(path string, cred *syscall.Credential) error {
	if cred == nil || cred.Uid == 0 {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if ok, err := permits(dir, cred, 0o1); err != nil || !ok {
			return fmt.Errorf("%s: directory %s is not searchable by uid %d (the pod's runAsUser): put the executable where every user can reach it", path, dir, cred.Uid)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if ok, err := permits(abs, cred, 0o1); err != nil || !ok {
		return fmt.Errorf("%s is not executable by uid %d (the pod's runAsUser)", path, cred.Uid)
	}
	return nil
}

// permits reports whether cred has the permission bit (1 execute or search,
// 4 read) on path, following symbolic links.
func permits(path string, cred *syscall.Credential, bit os.FileMode) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, fmt.Errorf("%s: no owner information", path)
	}
	mode := fi.Mode().Perm()
	switch {
	case st.Uid == cred.Uid:
		return mode>>6&bit != 0, nil
	case st.Gid == cred.Gid || slices.Contains(cred.Groups, st.Gid):
		return mode>>3&bit != 0, nil
	}
	return mode&bit != 0, nil
}

// lookPath finds an executable as a container runtime would, on the PATH of
// the container's environment rather than the Kubelet's.
func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: %w", file, exec.ErrNotFound)
}
