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
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// RegionConfig places the runner of a session that names a region: on
// nodes whose label NodeLabel has the region's name as its value, unless
// Mappings say another label or value for the region. It comes from the
// manager's runner.regions (NewOptions).
type RegionConfig struct {
	// NodeLabel is the node label whose value is a region's name; empty:
	// topology.kubernetes.io/region.
	NodeLabel string
	// Accepted are the regions sessions may name; empty: every region.
	Accepted []v1alpha1.Region
	// Mappings are the node labels of single regions.
	Mappings map[v1alpha1.Region]RegionMapping
}

// RegionMapping is the node label of one region; an empty field is the
// default's (RegionConfig.NodeLabel, the region's name).
type RegionMapping struct {
	NodeLabel string
	Value     string
}

// accepts reports whether sessions may name the region.
func (c RegionConfig) accepts(region v1alpha1.Region) bool {
	return len(c.Accepted) == 0 || slices.Contains(c.Accepted, region)
}

// nodeLabel is the label key and value of the region's nodes.
func (c RegionConfig) nodeLabel(region v1alpha1.Region) (key, value string) {
	key, value = c.NodeLabel, string(region)
	if key == "" {
		key = corev1.LabelTopologyRegion
	}
	m := c.Mappings[region]
	if m.NodeLabel != "" {
		key = m.NodeLabel
	}
	if m.Value != "" {
		value = m.Value
	}
	return key, value
}

// sessionRegion is the region a spec names, or "".
func sessionRegion(spec *v1alpha1.BrowserSessionSpec) v1alpha1.Region {
	if spec.CloudSessionCreateParams == nil {
		return ""
	}
	return spec.CloudSessionCreateParams.Region
}

// regionAffinity is the node affinity that keeps a runner of the spec's
// region on the region's nodes; nil when the spec names no region.
func regionAffinity(spec *v1alpha1.BrowserSessionSpec, cfg RunnerConfig) *corev1.Affinity {
	region := sessionRegion(spec)
	if region == "" {
		return nil
	}
	key, value := cfg.Regions.nodeLabel(region)
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}},
			}}},
		},
	}}
}

// regionSelector selects the nodes a runner of the region may run on: the
// region's label and the operator's runner.nodeSelector, as the scheduler
// would.
func regionSelector(region v1alpha1.Region, cfg RunnerConfig) (labels.Selector, error) {
	key, value := cfg.Regions.nodeLabel(region)
	sel := labels.NewSelector()
	for _, k := range slices.Sorted(maps.Keys(cfg.NodeSelector)) {
		r, err := labels.NewRequirement(k, selection.Equals, []string{cfg.NodeSelector[k]})
		if err != nil {
			return nil, fmt.Errorf("runner.nodeSelector %s: %w", k, err)
		}
		sel = sel.Add(*r)
	}
	r, err := labels.NewRequirement(key, selection.In, []string{value})
	if err != nil {
		return nil, fmt.Errorf("the node label of region %s: %w", region, err)
	}
	return sel.Add(*r), nil
}

// regionRefusal says why a runner of the spec's region cannot be placed
// (the region is not accepted, or no node has its label), or "" when it
// can, or the spec names no region. Nodes are read from the cache, and a
// miss past it: a node labelled a moment ago counts.
func regionRefusal(ctx context.Context, c, reader client.Reader, spec *v1alpha1.BrowserSessionSpec, cfg RunnerConfig) (reason, msg string, err error) {
	region := sessionRegion(spec)
	if region == "" {
		return "", "", nil
	}
	if !cfg.Regions.accepts(region) {
		accepted := make([]string, 0, len(cfg.Regions.Accepted))
		for _, r := range cfg.Regions.Accepted {
			accepted = append(accepted, string(r))
		}
		return v1alpha1.BrowserSessionReasonRegionNotAllowed, fmt.Sprintf(
			"spec.cloudSessionCreateParams.region %q is not a region this installation accepts (the manager's runner.regions.accepted: %s); no runner pod was created",
			region, strings.Join(accepted, ", ")), nil
	}
	sel, err := regionSelector(region, cfg)
	if err != nil {
		return "", "", err
	}
	for _, r := range []client.Reader{c, reader} {
		nodes := &metav1.PartialObjectMetadataList{}
		nodes.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		if err := r.List(ctx, nodes, client.MatchingLabelsSelector{Selector: sel}, client.Limit(1)); err != nil {
			return "", "", fmt.Errorf("listing the nodes of region %s: %w", region, err)
		}
		if len(nodes.Items) > 0 {
			return "", "", nil
		}
	}
	return v1alpha1.BrowserSessionReasonRegionUnavailable, fmt.Sprintf(
		"no node serves spec.cloudSessionCreateParams.region %q: no node matches the label selector %q (the manager's runner.regions and runner.nodeSelector); no runner pod was created",
		region, sel.String()), nil
}

// nodeMetadata is a Node as the manager watches it: its metadata only,
// labels included, not its status (which every node rewrites often).
func nodeMetadata() *metav1.PartialObjectMetadata {
	n := &metav1.PartialObjectMetadata{}
	n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	return n
}
