// Command tiny is the one binary of the one-node cluster's own images
// (hack/cluster): the pods' pause container, and the smoke check's server and
// client (test/cluster/node). Static, so that an image of it needs nothing else.
//
//	tiny pause            sleep until SIGTERM or SIGINT
//	tiny serve ADDR       serve HTTP: / says hello, /check reports how the container runs
//	tiny get URL          GET URL (5s), print the body; exit 1 on any failure
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tiny pause | serve ADDR | get URL")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "pause":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
	case "serve":
		err = serve(arg(2))
	case "get":
		err = get(arg(2))
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tiny:", err)
		os.Exit(1)
	}
}

func arg(i int) string {
	if len(os.Args) <= i {
		fmt.Fprintf(os.Stderr, "tiny %s: missing argument\n", os.Args[1])
		os.Exit(2)
	}
	return os.Args[i]
}

// Check is what /check reports: the facts a hardened pod must show.
type Check struct {
	UID          int    `json:"uid"`
	GID          int    `json:"gid"`
	Hostname     string `json:"hostname"`
	RootReadOnly bool   `json:"rootReadOnly"`
	// ShmTmpfs: /dev/shm is a memory-backed file system the user can write.
	ShmTmpfs     bool   `json:"shmTmpfs"`
	ShmWritable  bool   `json:"shmWritable"`
	CapEff       string `json:"capEff"`
	Seccomp      string `json:"seccomp"`
	NoNewPrivs   string `json:"noNewPrivs"`
	ShmSizeBytes uint64 `json:"shmSizeBytes"`
}

func check() Check {
	c := Check{UID: os.Getuid(), GID: os.Getgid()}
	c.Hostname, _ = os.Hostname()
	if f, err := os.Create("/tiny-write-probe"); err == nil {
		_ = f.Close()
		_ = os.Remove("/tiny-write-probe")
	} else {
		c.RootReadOnly = errors.Is(err, syscall.EROFS)
	}
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil {
		const tmpfsMagic = 0x01021994
		c.ShmTmpfs = st.Type == tmpfsMagic
		c.ShmSizeBytes = st.Blocks * uint64(st.Bsize)
	}
	if err := os.WriteFile("/dev/shm/tiny-probe", []byte("x"), 0o600); err == nil {
		c.ShmWritable = true
		_ = os.Remove("/dev/shm/tiny-probe")
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			switch k {
			case "CapEff":
				c.CapEff = v
			case "Seccomp":
				c.Seccomp = v
			case "NoNewPrivs":
				c.NoNewPrivs = v
			}
		}
	}
	return c
}

func serve(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		host, _ := os.Hostname()
		_, _ = fmt.Fprintf(w, "tiny %s\n", host)
	})
	mux.HandleFunc("/check", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(check())
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Println("tiny: serving on", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func get(url string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	_, _ = os.Stdout.Write(body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
