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

package devstack

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func (s *Stack) etcdDir() string { return filepath.Join(s.opts.Dir, "etcd") }

// startControlPlane starts etcd on Dir's data, and kube-apiserver, with
// the CRDs installed (updated when they exist). envtest deletes only the
// data directories it made itself, never one it was given.
func (s *Stack) startControlPlane() error {
	if err := os.MkdirAll(s.etcdDir(), 0o700); err != nil {
		return fmt.Errorf("creating the etcd data directory: %w", err)
	}
	etcdOut, err := s.logFile("etcd.log")
	if err != nil {
		return err
	}
	apiOut, err := s.logFile("kube-apiserver.log")
	if err != nil {
		return err
	}
	etcd := &envtest.Etcd{DataDir: s.etcdDir(), Out: etcdOut, Err: etcdOut}
	// envtest turns fsync off, which suits throwaway data; this data is
	// kept, and a machine crash without fsync can corrupt it.
	etcd.Configure().Set("unsafe-no-fsync", "false")
	s.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{s.opts.CRDDir},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: s.opts.AssetsDir,
		ControlPlane: envtest.ControlPlane{
			Etcd:      etcd,
			APIServer: &envtest.APIServer{Out: apiOut, Err: apiOut},
		},
	}
	s.log.Info("starting the control plane", "etcdData", s.etcdDir())
	cfg, err := s.env.Start()
	if err != nil {
		return fmt.Errorf("starting the control plane (logs in %s): %w", filepath.Join(s.opts.Dir, "logs"), err)
	}
	s.cfg = cfg
	if err := writeFile(s.KubeconfigPath(), s.env.KubeConfig); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	s.log.Info("control plane is up", "host", cfg.Host, "kubeconfig", s.KubeconfigPath())
	return nil
}

// logFile opens Dir/logs/name afresh, also copied to LogOutput when set.
func (s *Stack) logFile(name string) (io.Writer, error) {
	dir := filepath.Join(s.opts.Dir, "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the log directory: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("creating a log file: %w", err)
	}
	s.logFiles = append(s.logFiles, f)
	if s.opts.LogOutput != nil {
		return io.MultiWriter(f, s.opts.LogOutput), nil
	}
	return f, nil
}
