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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// defaultFileMode is the mode of a Secret's or ConfigMap's files when the
// volume names none, as the kubelet's.
const defaultFileMode int32 = 0o644

// mount is one of a container's volume mounts that the Kubelet
// materialised: the in-container path and the local one that stands for it.
type mount struct {
	path, local string
}

// errMount is a volume that cannot be set up yet (a missing Secret or
// ConfigMap): the container waits, ContainerCreating, and is retried, as
// with the kubelet's FailedMount.
type errMount struct{ err error }

func (e errMount) Error() string { return e.err.Error() }
func (e errMount) Unwrap() error { return e.err }

// mountVolumes writes the Secret, ConfigMap and projected volumes the
// container mounts into the pod directory (volumes/<name>), with the file
// modes the pod asks for (item mode, else defaultMode, else 0644), owned by
// owner when set, and returns the in-container mount paths with the local
// directories (or files, with subPath) that stand for them, longest path
// first. Other volume types are not materialised (see the package
// documentation). Each start writes the volumes afresh from the API
// server, as a container restart on a kubelet sees the current data.
func (ps *podState) mountVolumes(ctx context.Context, c *corev1.Container, owner *syscall.Credential) ([]mount, error) {
	volumes := map[string]*corev1.Volume{}
	for i := range ps.pod.Spec.Volumes {
		volumes[ps.pod.Spec.Volumes[i].Name] = &ps.pod.Spec.Volumes[i]
	}
	var mounts []mount
	written := map[string]string{}
	for _, vm := range c.VolumeMounts {
		v := volumes[vm.Name]
		if v == nil {
			return nil, fmt.Errorf("volume mount %q names no volume of the pod", vm.Name)
		}
		if v.Secret == nil && v.ConfigMap == nil && v.Projected == nil {
			continue
		}
		local, ok := written[v.Name]
		if !ok {
			var err error
			if local, err = ps.writeVolume(ctx, v, owner); err != nil {
				return nil, err
			}
			written[v.Name] = local
		}
		if vm.SubPath != "" {
			local = filepath.Join(local, vm.SubPath)
		}
		mounts = append(mounts, mount{path: filepath.Clean(vm.MountPath), local: local})
	}
	sort.SliceStable(mounts, func(i, j int) bool { return len(mounts[i].path) > len(mounts[j].path) })
	return mounts, nil
}

// volumeFile is one file of a volume: its path in the volume, its content
// and its mode.
type volumeFile struct {
	path string
	data []byte
	mode int32
}

// writeVolume writes one volume and returns its directory.
func (ps *podState) writeVolume(ctx context.Context, v *corev1.Volume, owner *syscall.Credential) (string, error) {
	files, err := ps.volumeFiles(ctx, v)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(ps.dir, "volumes", v.Name)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clearing volume %q: %w", v.Name, err)
	}
	if err := ownedDirAll(dir, ps.dir, owner); err != nil {
		return "", fmt.Errorf("creating volume %q: %w", v.Name, err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.path)
		if err := ownedDirAll(filepath.Dir(path), dir, owner); err != nil {
			return "", fmt.Errorf("creating volume %q: %w", v.Name, err)
		}
		if err := writeOwnedFile(path, f.data, os.FileMode(f.mode), owner); err != nil {
			return "", fmt.Errorf("writing volume %q: %w", v.Name, err)
		}
	}
	return dir, nil
}

// volumeFiles reads what a volume holds from the API server.
func (ps *podState) volumeFiles(ctx context.Context, v *corev1.Volume) ([]volumeFile, error) {
	switch {
	case v.Secret != nil:
		s := v.Secret
		return ps.sourceFiles(ctx, v.Name, "secret", s.SecretName, s.Items, s.Optional, modeOr(s.DefaultMode))
	case v.ConfigMap != nil:
		cm := v.ConfigMap
		return ps.sourceFiles(ctx, v.Name, "configmap", cm.Name, cm.Items, cm.Optional, modeOr(cm.DefaultMode))
	}
	mode := modeOr(v.Projected.DefaultMode)
	var files []volumeFile
	for _, src := range v.Projected.Sources {
		var more []volumeFile
		var err error
		switch {
		case src.Secret != nil:
			more, err = ps.sourceFiles(ctx, v.Name, "secret", src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode)
		case src.ConfigMap != nil:
			more, err = ps.sourceFiles(ctx, v.Name, "configmap", src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode)
		default:
			return nil, fmt.Errorf("volume %q: the local kubelet projects Secrets and ConfigMaps only", v.Name)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	return files, nil
}

// sourceFiles are the files of one Secret or ConfigMap: the items asked
// for, or every key.
func (ps *podState) sourceFiles(ctx context.Context, volume, kind, name string, items []corev1.KeyToPath, optional *bool, mode int32) ([]volumeFile, error) {
	var data map[string][]byte
	var err error
	if kind == "secret" {
		s := &corev1.Secret{}
		if err = (&podEnv{reader: ps.k.reader}).get(ctx, ps.pod.Namespace, name, s); err == nil {
			data = s.Data
		}
	} else {
		cm := &corev1.ConfigMap{}
		if err = (&podEnv{reader: ps.k.reader}).get(ctx, ps.pod.Namespace, name, cm); err == nil {
			data = map[string][]byte{}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			for k, v := range cm.BinaryData {
				data[k] = v
			}
		}
	}
	if apierrors.IsNotFound(err) && isTrue(optional) {
		return nil, nil
	}
	if err != nil {
		// The kubelet's words, as a FailedMount event says them.
		return nil, errMount{fmt.Errorf("MountVolume.SetUp failed for volume %q : %w", volume, err)}
	}
	var files []volumeFile
	if len(items) == 0 {
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			files = append(files, volumeFile{path: k, data: data[k], mode: mode})
		}
		return files, nil
	}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			if isTrue(optional) {
				continue
			}
			if kind == "secret" {
				return nil, errMount{fmt.Errorf("MountVolume.SetUp failed for volume %q : couldn't find key %s in Secret %s/%s", volume, it.Key, ps.pod.Namespace, name)}
			}
			return nil, errMount{fmt.Errorf("MountVolume.SetUp failed for volume %q : configmap references non-existent config key: %s", volume, it.Key)}
		}
		if !localPath(it.Path) {
			return nil, fmt.Errorf("volume %q: item path %q is not a relative path inside the volume", volume, it.Path)
		}
		m := mode
		if it.Mode != nil {
			m = *it.Mode
		}
		files = append(files, volumeFile{path: it.Path, data: b, mode: m})
	}
	return files, nil
}

func modeOr(m *int32) int32 {
	if m != nil {
		return *m
	}
	return defaultFileMode
}

// localPath says whether p stays inside the directory it is joined to.
func localPath(p string) bool {
	return p != "" && filepath.IsLocal(p)
}

// ownedDirAll makes dir and its parents up to (not including) base, mode
// 0700, belonging to owner when set.
func ownedDirAll(dir, base string, owner *syscall.Credential) error {
	if dir == base {
		return nil
	}
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := ownedDirAll(filepath.Dir(dir), base, owner); err != nil {
		return err
	}
	if err := ownedDir(dir, owner); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// writeOwnedFile writes a file with exactly mode (the umask does not
// apply), belonging to owner when set.
func writeOwnedFile(path string, data []byte, mode os.FileMode, owner *syscall.Credential) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Close())
	if err == nil && owner != nil {
		err = os.Chown(path, int(owner.Uid), int(owner.Gid))
	}
	if err == nil {
		err = os.Chmod(path, mode.Perm())
	}
	return err
}

// rewriteArg rewrites an argument that is an in-container path under one
// of mounts, or a --flag=path.
func rewriteArg(s string, mounts []mount) string {
	if flag, value, ok := strings.Cut(s, "="); ok && strings.HasPrefix(flag, "-") {
		return flag + "=" + rewritePath(value, mounts)
	}
	return rewritePath(s, mounts)
}

// rewritePath replaces an in-container path under one of mounts with the
// local path that stands for it; anything else stays as it is.
func rewritePath(s string, mounts []mount) string {
	for _, m := range mounts {
		if s == m.path {
			return m.local
		}
		if rest, ok := strings.CutPrefix(s, m.path+"/"); ok {
			return filepath.Join(m.local, rest)
		}
	}
	return s
}
