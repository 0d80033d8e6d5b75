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

// Package chart_test tests what ships: the Helm chart (charts/browserfleet), the
// kustomize configuration (config/) and the Dockerfile. Rendered objects are
// applied with server-side dry run to a real kube-apiserver (envtest), flags
// the chart renders are parsed with the binaries' own flag sets, the
// manager's Configuration file is loaded with the manager's loader, and the
// keys it generates are checked with the code that reads them.
package chart_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
)

// ChartDir is the chart's directory.
func ChartDir() string { return filepath.Join(framework.RepoRoot(), "charts", "browserfleet") }

// LoadChart loads the chart from its directory.
func LoadChart() (*chartv2.Chart, error) { return loader.Load(ChartDir()) }

// Rendered is what `helm template` makes of the chart.
type Rendered struct {
	// Manifest is the rendered YAML, CRDs excluded.
	Manifest string
	// Notes is NOTES.txt.
	Notes string
	// Objects are the manifest's documents.
	Objects []*unstructured.Unstructured
}

// Render renders the chart as `helm template <release> -n <namespace>` does
// (client only: lookup finds nothing), with values merged over the chart's.
// Values are checked against values.schema.json.
func Render(release, namespace string, values map[string]any) (*Rendered, error) {
	ch, err := LoadChart()
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = release
	install.Namespace = namespace
	install.Replace = true
	// A test binary has no client-go version for Helm to default to.
	install.KubeVersion, err = common.ParseKubeVersion("v" + framework.K8sVersion)
	if err != nil {
		return nil, err
	}
	rel, err := install.Run(ch, values)
	if err != nil {
		return nil, err
	}
	r, ok := rel.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("release is a %T", rel)
	}
	objs, err := Decode([]byte(r.Manifest))
	if err != nil {
		return nil, err
	}
	return &Rendered{Manifest: r.Manifest, Notes: r.Info.Notes, Objects: objs}, nil
}

// RenderUpgrade renders the chart as `helm upgrade` does against the
// cluster of cfg: lookup sees what is there.
func RenderUpgrade(cfg *rest.Config, release, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	ch, err := LoadChart()
	if err != nil {
		return nil, err
	}
	caps := common.DefaultCapabilities.Copy()
	kv, err := common.ParseKubeVersion("v" + framework.K8sVersion)
	if err != nil {
		return nil, err
	}
	caps.KubeVersion = *kv
	vals, err := util.ToRenderValues(ch, values, common.ReleaseOptions{Name: release, Namespace: namespace, Revision: 2, IsUpgrade: true}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.New(cfg).RenderWithContext(context.Background(), ch, vals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var manifest bytes.Buffer
	for _, name := range names {
		fmt.Fprintf(&manifest, "---\n%s\n", files[name])
	}
	return Decode(manifest.Bytes())
}

// ValuesFile reads a values file of testdata.
func ValuesFile(name string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		return nil, err
	}
	v := map[string]any{}
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// Decode splits multi-document YAML into objects, skipping empty documents.
func Decode(manifest []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
}

// Find returns the object of that kind and name, or nil.
func Find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// Kinds lists kind/name of every object, sorted, for messages.
func Kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(out)
	return out
}

// ContainerArgs returns the args of the named container of a Deployment.
func ContainerArgs(deploy *unstructured.Unstructured, container string) ([]string, error) {
	if deploy == nil {
		return nil, errors.New("no such Deployment")
	}
	cs, _, err := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m["name"] != container {
			continue
		}
		args, _, err := unstructured.NestedStringSlice(m, "args")
		return args, err
	}
	return nil, fmt.Errorf("Deployment %s has no container %s", deploy.GetName(), container)
}
