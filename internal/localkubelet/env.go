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
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podEnv is what a container's environment refers to: the pod and its
// address, which the container's process gets before it starts.
type podEnv struct {
	pod   *corev1.Pod
	podIP string
	// reader reads Secrets and ConfigMaps from the API server.
	reader client.Reader
}

// resolveEnv computes a container's environment as the kubelet does: envFrom
// first, in order, then env, in order, later variables overriding earlier
// ones, with $(VAR) in values expanded from the variables before. The error
// is what the kubelet reports with CreateContainerConfigError.
func (e *podEnv) resolveEnv(ctx context.Context, c *corev1.Container) (map[string]string, error) {
	env := map[string]string{}
	ns := e.pod.Namespace
	for _, from := range c.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm := &corev1.ConfigMap{}
			if err := e.get(ctx, ns, from.ConfigMapRef.Name, cm); err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, err
			}
			data = cm.Data
		case from.SecretRef != nil:
			s := &corev1.Secret{}
			if err := e.get(ctx, ns, from.SecretRef.Name, s); err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.SecretRef.Optional) {
					continue
				}
				return nil, err
			}
			data = map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
		}
		for k, v := range data {
			name := from.Prefix + k
			// The kubelet skips keys that cannot be variable names.
			if name == "" || strings.Contains(name, "=") {
				continue
			}
			env[name] = v
		}
	}
	lookup := func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	for _, v := range c.Env {
		if v.ValueFrom == nil {
			env[v.Name] = expand(v.Value, lookup)
			continue
		}
		val, ok, err := e.valueFrom(ctx, c, v.ValueFrom)
		if err != nil {
			return nil, err
		}
		if ok {
			env[v.Name] = val
		}
	}
	return env, nil
}

// valueFrom resolves one valueFrom; ok is false when an optional source is
// missing, and the variable is left out.
func (e *podEnv) valueFrom(ctx context.Context, c *corev1.Container, src *corev1.EnvVarSource) (val string, ok bool, err error) {
	ns := e.pod.Namespace
	switch {
	case src.FieldRef != nil:
		val, err := e.fieldValue(src.FieldRef.FieldPath)
		return val, err == nil, err
	case src.ResourceFieldRef != nil:
		val, err := e.resourceValue(c, src.ResourceFieldRef)
		return val, err == nil, err
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s := &corev1.Secret{}
		if err := e.get(ctx, ns, ref.Name, s); err != nil {
			if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, err
		}
		b, found := s.Data[ref.Key]
		if !found {
			if isTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, ns, ref.Name)
		}
		return string(b), true, nil
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm := &corev1.ConfigMap{}
		if err := e.get(ctx, ns, ref.Name, cm); err != nil {
			if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, err
		}
		v, found := cm.Data[ref.Key]
		if !found {
			if isTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, ns, ref.Name)
		}
		return v, true, nil
	case src.FileKeyRef != nil:
		return "", false, fmt.Errorf("fileKeyRef (variable %s) is not supported by the local kubelet", src.FileKeyRef.Key)
	}
	return "", false, errors.New("valueFrom names no source")
}

// get reads a Secret or ConfigMap. Not found is reported the way the
// kubelet words it: `secret "name" not found`.
func (e *podEnv) get(ctx context.Context, ns, name string, obj client.Object) error {
	err := e.reader.Get(ctx, keyOf(name, ns), obj)
	if apierrors.IsNotFound(err) {
		kind := "configmap"
		if _, ok := obj.(*corev1.Secret); ok {
			kind = "secret"
		}
		return apierrors.NewNotFound(schema.GroupResource{Resource: kind}, name)
	}
	if err != nil {
		return fmt.Errorf("reading %s/%s: %w", ns, name, err)
	}
	return nil
}

// fieldValue resolves a fieldRef's path on the pod, as the downward API
// does.
func (e *podEnv) fieldValue(path string) (string, error) {
	pod := e.pod
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	case "status.podIP", "status.podIPs":
		return e.podIP, nil
	}
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	return "", fmt.Errorf("unsupported fieldRef path %q", path)
}

// subscript returns k of prefix['k'].
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// formatMap renders labels or annotations as the downward API does:
// key="value" lines, sorted.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

// resourceValue resolves a resourceFieldRef as the kubelet does: rounded up
// in units of the divisor, with an unset limit defaulting to the node's
// capacity.
func (e *podEnv) resourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	target := c
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		target = nil
		for i := range e.pod.Spec.Containers {
			if e.pod.Spec.Containers[i].Name == ref.ContainerName {
				target = &e.pod.Spec.Containers[i]
			}
		}
		if target == nil {
			return "", fmt.Errorf("resourceFieldRef names container %q, which the pod does not have", ref.ContainerName)
		}
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	res := corev1.ResourceName(name)
	var q resource.Quantity
	switch kind {
	case "limits":
		var ok bool
		if q, ok = target.Resources.Limits[res]; !ok {
			q = nodeCapacity()[res]
		}
	case "requests":
		q = target.Resources.Requests[res]
	default:
		return "", fmt.Errorf("unsupported resourceFieldRef resource %q", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == corev1.ResourceCPU {
		return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))), nil
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))), nil
}

// expand replaces $(VAR) with VAR's value when lookup knows it, and $$ with
// $, leaving anything else as written; it is the kubelet's expansion
// (third_party/forked/golang/expansion).
func expand(input string, lookup func(string) (string, bool)) string {
	var buf strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(input); cursor++ {
		if input[cursor] != '$' || cursor+1 >= len(input) {
			continue
		}
		buf.WriteString(input[checkpoint:cursor])
		read, isVar, advance := readVariable(input[cursor+1:])
		if isVar {
			if v, ok := lookup(read); ok {
				buf.WriteString(v)
			} else {
				buf.WriteString("$(" + read + ")")
			}
		} else {
			buf.WriteString(read)
		}
		cursor += advance
		checkpoint = cursor + 1
	}
	return buf.String() + input[checkpoint:]
}

// readVariable reads what follows a $: a variable name in parentheses, an
// escaped $, or anything else, which stays as written.
func readVariable(input string) (read string, isVar bool, advance int) {
	switch input[0] {
	case '$':
		return "$", false, 1
	case '(':
		for i := 1; i < len(input); i++ {
			if input[i] == ')' {
				return input[1:i], true, i + 1
			}
		}
		return "$(", false, 1
	default:
		return "$" + input[:1], false, 1
	}
}

// expandAll expands each of args.
func expandAll(args []string, env map[string]string) []string {
	if args == nil {
		return nil
	}
	lookup := func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = expand(a, lookup)
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }
