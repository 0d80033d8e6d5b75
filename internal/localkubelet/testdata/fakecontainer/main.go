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

// Command fakecontainer is the container the localkubelet tests run. It
// serves HTTP on $POD_IP:$PORT (default 127.0.0.1:8080):
//
//   - /healthz answers 503 until $READY_AFTER (a duration) passed, then 200;
//   - /env answers its environment as a JSON object;
//   - /args answers its arguments as a JSON array;
//   - /file?path=P answers the content of file P as the process reads it
//     (403 when it may not);
//   - /exit?code=N answers, then exits with code N.
//
// With $EXIT_CODE set it prints a few lines and exits with that code at once.
// On SIGTERM it prints "got SIGTERM" and exits 0 after $TERM_DELAY (a
// duration, default 0); with TERM_DELAY=never it ignores SIGTERM. Before it
// exits either way, it writes $TERMINATION_MESSAGE, repeated
// $TERMINATION_MESSAGE_REPEAT times (default 1), to the file
// $TERMINATION_MESSAGE_PATH when that is set.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if code := os.Getenv("EXIT_CODE"); code != "" {
		n, err := strconv.Atoi(code)
		if err != nil {
			fail("bad EXIT_CODE: %v", err)
		}
		for i := 1; i <= 20; i++ {
			fmt.Printf("working, step %d\n", i)
		}
		fmt.Fprintf(os.Stderr, "fatal: giving up with code %d\n", n)
		writeTerminationMessage()
		os.Exit(n)
	}

	readyAfter, err := duration("READY_AFTER")
	if err != nil {
		fail("%v", err)
	}
	start := time.Now()
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go onTerm(terms)

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if time.Since(start) < readyAfter {
			http.Error(w, "not ready yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, _ *http.Request) {
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		writeJSON(w, env)
	})
	mux.HandleFunc("/args", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, os.Args[1:])
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(r.URL.Query().Get("path"))
		switch {
		case errors.Is(err, fs.ErrPermission):
			http.Error(w, err.Error(), http.StatusForbidden)
		case err != nil:
			http.Error(w, err.Error(), http.StatusNotFound)
		default:
			_, _ = w.Write(b)
		}
	})
	mux.HandleFunc("/exit", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.URL.Query().Get("code"))
		if err != nil {
			http.Error(w, "bad code", http.StatusBadRequest)
			return
		}
		_, _ = fmt.Fprintln(w, "bye")
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		fmt.Fprintf(os.Stderr, "exit requested with code %d\n", code)
		go func() {
			time.Sleep(50 * time.Millisecond)
			os.Exit(code)
		}()
	})

	ip, port := getenv("POD_IP", "127.0.0.1"), getenv("PORT", "8080")
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, port))
	if err != nil {
		fail("listening: %v", err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	fail("serving: %v", http.Serve(ln, mux)) //nolint:gosec // a test program
}

func onTerm(terms <-chan os.Signal) {
	<-terms
	fmt.Println("got SIGTERM")
	if os.Getenv("TERM_DELAY") == "never" {
		for range terms {
			fmt.Println("got SIGTERM again")
		}
	}
	delay, err := duration("TERM_DELAY")
	if err != nil {
		fail("%v", err)
	}
	time.Sleep(delay)
	fmt.Println("exiting after SIGTERM")
	writeTerminationMessage()
	os.Exit(0)
}

func writeTerminationMessage() {
	path := os.Getenv("TERMINATION_MESSAGE_PATH")
	if path == "" {
		return
	}
	n, err := strconv.Atoi(getenv("TERMINATION_MESSAGE_REPEAT", "1"))
	if err != nil {
		fail("bad TERMINATION_MESSAGE_REPEAT: %v", err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat(os.Getenv("TERMINATION_MESSAGE"), n)), 0o600); err != nil {
		fail("writing the termination message: %v", err)
	}
}

func duration(name string) (time.Duration, error) {
	s := os.Getenv(name)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad %s: %w", name, err)
	}
	return d, nil
}

func getenv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fakecontainer: "+format+"\n", args...)
	os.Exit(1)
}
