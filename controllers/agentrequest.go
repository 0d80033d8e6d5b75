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

package controllers

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// secretProblem is a Secret reference of a task that cannot be used: its
// message names the field, never a value.
type secretProblem struct{ message string }

func (p *secretProblem) Error() string { return p.message }

// agentRequest builds the runner's request for task: its spec, with the
// values of the Secrets it references read past the cache (the manager's
// cache holds Secrets' metadata only, and the values must not linger in
// memory beyond the call). A reference that cannot be used is a
// *secretProblem; deadlineSeconds is the run's remaining deadline.
func agentRequest(ctx context.Context, reader client.Reader, task *v1alpha1.AgentTask, session *v1alpha1.BrowserSession, deadlineSeconds int) (*rpc.AgentTaskRequest, error) {
	secrets, err := readTaskSecrets(ctx, reader, task)
	if err != nil {
		return nil, err
	}
	spec := &task.Spec
	req := &rpc.AgentTaskRequest{
		UID:             string(task.UID),
		Name:            task.Name,
		Mode:            string(spec.AgentConfig.Mode),
		SystemPrompt:    spec.AgentConfig.SystemPrompt,
		Instruction:     spec.ExecuteOptions.Instruction,
		MaxSteps:        int(spec.ExecuteOptions.MaxSteps),
		ToolTimeoutMs:   int(ptr.Deref(spec.ExecuteOptions.ToolTimeoutMs, 0)),
		HighlightCursor: ptr.Deref(spec.ExecuteOptions.HighlightCursor, false),
		UseSearch:       ptr.Deref(spec.ExecuteOptions.UseSearch, false),
		FrameID:         spec.FrameID,
		ShouldCache:     ptr.Deref(spec.ShouldCache, false),
		Cache:           agentCacheSetting(spec.Cache, session.Spec.Cache),
		DeadlineSeconds: deadlineSeconds,
	}
	if req.Mode == "" {
		req.Mode = rpc.AgentModeDOM
	}
	if req.Model, err = modelConfig("spec.agentConfig.model", spec.AgentConfig.Model, secrets); err != nil {
		return nil, err
	}
	// agentConfig.provider overrides the provider of the agent's model,
	// the session's when the task names none.
	if p := spec.AgentConfig.Provider; p != "" {
		if req.Model == nil {
			req.Model = &rpc.ModelConfig{}
		}
		req.Model.Provider = p
	}
	if req.ExecutionModel, err = modelConfig("spec.agentConfig.executionModel", spec.AgentConfig.ExecutionModel, secrets); err != nil {
		return nil, err
	}
	req.VariableDescriptions = maps.Clone(spec.ExecuteOptions.VariableDescriptions)
	if len(spec.ExecuteOptions.Variables) > 0 {
		req.Variables = maps.Clone(spec.ExecuteOptions.Variables)
	}
	if ref := spec.ExecuteOptions.VariablesSecretRef; ref != nil {
		if req.Variables == nil {
			req.Variables = map[string]string{}
		}
		// The Secret's values win over plain variables of the same name:
		// they are the ones meant to stay secret.
		for k, v := range secrets[ref.Name].Data {
			req.Variables[k] = secretValue(v)
		}
	}
	return req, nil
}

// agentCacheSetting is the server-side cache setting of a task: each field
// of the task's spec.cache, else of its session's. Enabled must be true:
// unset is off here, as the manager cannot see the project default the
// API resolves for /v1 calls (agentExecute writes its resolved setting
// into the task, enabled explicit). The threshold defaults to
// cache.DefaultThreshold.
func agentCacheSetting(task, session *v1alpha1.CacheSpec) *cache.Setting {
	var enabled *bool
	var threshold int32
	for _, c := range []*v1alpha1.CacheSpec{task, session} {
		if c == nil {
			continue
		}
		if enabled == nil {
			enabled = c.Enabled
		}
		if threshold == 0 {
			threshold = c.Threshold
		}
	}
	if !ptr.Deref(enabled, false) {
		return nil
	}
	t := int64(cmp.Or(threshold, cache.DefaultThreshold))
	// The CRD bounds it; an object written before that bound stays served.
	t = min(max(t, 1), cache.MaxThreshold)
	return &cache.Setting{Threshold: t}
}

// readTaskSecrets reads every Secret the task references, checking again
// that each opted in to it (secretrefs.go): the cache the controller
// checked may lag behind a Secret's deletion or relabelling.
func readTaskSecrets(ctx context.Context, reader client.Reader, task *v1alpha1.AgentTask) (map[string]*corev1.Secret, error) {
	return readSecrets(ctx, reader, task, taskSecretRefs(&task.Spec))
}

// readSecrets reads the Secrets of refs, of obj's namespace, checking that
// each opted in to obj. A refusal is a *secretProblem naming the fields.
func readSecrets(ctx context.Context, reader client.Reader, obj client.Object, refs []secretRef) (map[string]*corev1.Secret, error) {
	secrets := map[string]*corev1.Secret{}
	var refused []string
	for _, name := range secretNames(refs) {
		s := &corev1.Secret{}
		err := reader.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, s)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading Secret %s: %w", name, err)
		case secretOptsIn(&metav1.PartialObjectMetadata{ObjectMeta: s.ObjectMeta}, obj):
			secrets[name] = s
		}
	}
	for _, ref := range refs {
		s, ok := secrets[ref.name]
		switch {
		case !ok:
			refused = append(refused, fmt.Sprintf("%s: Secret %q does not exist or is not labelled %s=%s (or =%s)",
				ref.field, ref.name, v1alpha1.LabelSessionSecret, v1alpha1.SessionSecretAny, obj.GetName()))
		case ref.key != "":
			if _, has := s.Data[ref.key]; !has {
				refused = append(refused, fmt.Sprintf("%s: Secret %q has no key %q", ref.field, ref.name, ref.key))
			}
		}
	}
	if len(refused) > 0 {
		return nil, &secretProblem{message: refusalMessage(refused)}
	}
	return secrets, nil
}

// modelConfig is a task's model with its Secrets' values filled in, as the
// runner fills in the session's (runner/config DefaultModel); nil stays
// nil, for the runner's default. The references were checked by
// readTaskSecrets.
func modelConfig(field string, m *v1alpha1.ModelSpec, secrets map[string]*corev1.Secret) (*rpc.ModelConfig, error) {
	if m == nil {
		return nil, nil
	}
	out := &rpc.ModelConfig{ModelName: m.Name, Provider: m.Provider, BaseURL: m.BaseURL}
	if r := m.APIKeySecretRef; r != nil {
		out.APIKey = secretValue(secrets[r.Name].Data[r.Key])
	}
	if len(m.Headers) > 0 || m.HeadersSecretRef != nil {
		out.Headers = maps.Clone(m.Headers)
		if out.Headers == nil {
			out.Headers = map[string]string{}
		}
		if r := m.HeadersSecretRef; r != nil {
			// Secret headers win over plain ones of the same name: they
			// are the ones that carry credentials.
			for k, v := range secrets[r.Name].Data {
				out.Headers[k] = secretValue(v)
			}
		}
	}
	if a := m.Auth; a != nil {
		out.Auth = &rpc.ModelAuth{Type: a.Type, Scopes: a.Scopes, ProjectID: a.ProjectID, UniverseDomain: a.UniverseDomain}
		if r := a.CredentialsSecretRef; r != nil {
			// Service-account JSON, string fields only, as the runner reads
			// the session's.
			var creds map[string]any
			if err := json.Unmarshal(secrets[r.Name].Data[r.Key], &creds); err != nil {
				// json's errors may quote the value.
				return nil, &secretProblem{message: fmt.Sprintf("%s.auth.credentialsSecretRef: the value of Secret %q key %q is not a JSON object", field, r.Name, r.Key)}
			}
			out.Auth.Credentials = map[string]string{}
			for k, v := range creds {
				if s, ok := v.(string); ok {
					out.Auth.Credentials[k] = s
				}
			}
		}
	}
	if p := m.ProviderOptions; p != nil {
		out.ProviderOptions = map[string]rpc.ProviderOptions{p.Variant: {
			Project: p.Project, Location: p.Location, BaseURL: p.BaseURL, Headers: maps.Clone(p.Headers),
		}}
	}
	return out, nil
}

// secretValue is a Secret's value as the runner reads its own secret files:
// one trailing newline dropped, which `kubectl create secret --from-file`
// keeps from an editor.
func secretValue(b []byte) string {
	v := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(v, "\r")
}
