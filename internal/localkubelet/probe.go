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
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Probe intervals: fast while a container is not ready, so that tests and
// sessions do not wait for a period, and at most maxReadyPeriod once it is.
const (
	unreadyPeriod  = 200 * time.Millisecond
	maxReadyPeriod = 2 * time.Second
)

// probe runs a running process's readiness probe until the process ends or
// the pod terminates. Without a probe, or with an exec probe (which would
// have to run inside the container), the container is ready once started.
func (ps *podState) probe(ctx context.Context, cs *containerState, p *process) {
	pr := cs.spec.ReadinessProbe
	if pr == nil || pr.Exec != nil {
		ps.setReady(cs, p, true)
		return
	}
	transport := &http.Transport{
		// Probes go to the pod, never through a proxy of the environment.
		Proxy:             nil,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet does not verify probes either
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	successThreshold := max(int(pr.SuccessThreshold), 1)
	failureThreshold := max(int(pr.FailureThreshold), 1)
	readyPeriod := min(time.Duration(max(pr.PeriodSeconds, 1))*time.Second, maxReadyPeriod)

	wait := time.Duration(pr.InitialDelaySeconds) * time.Second
	ready, successes, failures := false, 0, 0
	for {
		select {
		case <-p.done:
			return
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		err := ps.probeOnce(ctx, client, cs, pr)
		if err == nil {
			successes, failures = successes+1, 0
			if !ready && successes >= successThreshold {
				ready = true
				ps.setReady(cs, p, true)
			}
		} else {
			successes, failures = 0, failures+1
			if ready && failures >= failureThreshold {
				ready = false
				ps.k.log.Info("readiness probe failed", "pod", ps.log, "container", cs.spec.Name, "err", err.Error())
				ps.setReady(cs, p, false)
			}
		}
		wait = unreadyPeriod
		if ready {
			wait = readyPeriod
		}
	}
}

// probeOnce runs a probe once.
func (ps *podState) probeOnce(ctx context.Context, client *http.Client, cs *containerState, pr *corev1.Probe) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(max(pr.TimeoutSeconds, 1))*time.Second)
	defer cancel()
	switch {
	case pr.HTTPGet != nil:
		g := pr.HTTPGet
		port, err := containerPort(g.Port, &cs.spec)
		if err != nil {
			return err
		}
		host := g.Host
		if host == "" {
			host = ps.ip
		}
		scheme := strings.ToLower(string(g.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		path := g.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(port))+path, nil)
		if err != nil {
			return fmt.Errorf("building the probe request: %w", err)
		}
		req.Header.Set("User-Agent", "kube-probe/localkubelet")
		for _, h := range g.HTTPHeaders {
			req.Header.Add(h.Name, h.Value)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
		_ = resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("HTTP probe failed with status code %d", resp.StatusCode)
		}
		return nil
	case pr.TCPSocket != nil:
		port, err := containerPort(pr.TCPSocket.Port, &cs.spec)
		if err != nil {
			return err
		}
		host := pr.TCPSocket.Host
		if host == "" {
			host = ps.ip
		}
		return dial(ctx, host, port)
	case pr.GRPC != nil:
		// No gRPC health client here: a connection will do.
		return dial(ctx, ps.ip, int(pr.GRPC.Port))
	}
	return nil
}

func dial(ctx context.Context, host string, port int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return conn.Close()
}

// containerPort resolves a probe's port, by number or by the name of one of
// the container's ports.
func containerPort(port intstr.IntOrString, c *corev1.Container) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, port.StrVal)
}
