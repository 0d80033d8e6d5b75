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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
)

// TestRegionPlacement: a session's region becomes the runner pod's
// required node affinity, and the node selector the manager checks, by
// the operator's table.
func TestRegionPlacement(t *testing.T) {
	// The table of a Configuration file, converted as the manager does.
	table := func(r configv1alpha1.RegionsConfiguration) RunnerConfig {
		cfg := configv1alpha1.Default()
		cfg.Runner.Regions = r
		configv1alpha1.SetDefaults(cfg)
		opts, err := NewOptions(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return opts.Runner
	}
	mapped := table(configv1alpha1.RegionsConfiguration{
		NodeLabel: "example.com/region",
		Mappings: map[string]configv1alpha1.RegionMapping{
			"us-west-2":    {NodeLabel: "example.com/zone-group", Value: "west"},
			"eu-central-1": {Value: "frankfurt"},
			"us-east-1":    {NodeLabel: "example.com/site"},
		},
	})
	withSelector := DefaultOptions().Runner
	withSelector.NodeSelector = map[string]string{"browserfleet.io/pool": "browsers"}
	cases := []struct {
		name   string
		region v1alpha1.Region
		cfg    RunnerConfig
		// key and value of the affinity's one requirement; "": none.
		wantKey, wantValue string
		wantSelector       string
	}{
		{name: "no region: no affinity", cfg: DefaultOptions().Runner},
		{name: "the default label, the region's name", region: "us-west-2", cfg: DefaultOptions().Runner,
			wantKey: "topology.kubernetes.io/region", wantValue: "us-west-2", wantSelector: "topology.kubernetes.io/region in (us-west-2)"},
		{name: "a zero table is the default", region: "us-east-1", cfg: RunnerConfig{},
			wantKey: "topology.kubernetes.io/region", wantValue: "us-east-1", wantSelector: "topology.kubernetes.io/region in (us-east-1)"},
		{name: "another key and value", region: "us-west-2", cfg: mapped,
			wantKey: "example.com/zone-group", wantValue: "west", wantSelector: "example.com/zone-group in (west)"},
		{name: "another value on the table's key", region: "eu-central-1", cfg: mapped,
			wantKey: "example.com/region", wantValue: "frankfurt", wantSelector: "example.com/region in (frankfurt)"},
		{name: "another key with the region's name", region: "us-east-1", cfg: mapped,
			wantKey: "example.com/site", wantValue: "us-east-1", wantSelector: "example.com/site in (us-east-1)"},
		{name: "an unmapped region on the table's key", region: "ap-southeast-1", cfg: mapped,
			wantKey: "example.com/region", wantValue: "ap-southeast-1", wantSelector: "example.com/region in (ap-southeast-1)"},
		{name: "the nodes checked also match runner.nodeSelector", region: "us-west-2", cfg: withSelector,
			wantKey: "topology.kubernetes.io/region", wantValue: "us-west-2", wantSelector: "browserfleet.io/pool=browsers,topology.kubernetes.io/region in (us-west-2)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := wrappers.MakeBrowserSession("s", "ns").Obj()
			if tc.region != "" {
				s.Spec.CloudSessionCreateParams = &v1alpha1.CloudSessionCreateParams{Region: tc.region}
			}
			pod, err := constructRunnerPod(s, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var want *corev1.Affinity
			if tc.wantKey != "" {
				want = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: tc.wantKey, Operator: corev1.NodeSelectorOpIn, Values: []string{tc.wantValue}},
					}}},
				}}}
			}
			if diff := cmp.Diff(want, pod.Spec.Affinity); diff != "" {
				t.Errorf("affinity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.cfg.NodeSelector, pod.Spec.NodeSelector); diff != "" {
				t.Errorf("the operator's node selector changed (-want +got):\n%s", diff)
			}
			if tc.region == "" {
				return
			}
			sel, err := regionSelector(tc.region, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantSelector, sel.String()); diff != "" {
				t.Errorf("node selector (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRegionAccepted: an empty list accepts every region.
func TestRegionAccepted(t *testing.T) {
	cases := []struct {
		name     string
		accepted []v1alpha1.Region
		region   v1alpha1.Region
		want     bool
	}{
		{"no list", nil, v1alpha1.RegionAPSoutheast1, true},
		{"on the list", []v1alpha1.Region{v1alpha1.RegionUSEast1, v1alpha1.RegionEUCentral1}, v1alpha1.RegionEUCentral1, true},
		{"off the list", []v1alpha1.Region{v1alpha1.RegionUSEast1}, v1alpha1.RegionUSWest2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := (RegionConfig{Accepted: tc.accepted}).accepts(tc.region); got != tc.want {
				t.Errorf("accepts(%s) = %v, want %v", tc.region, got, tc.want)
			}
		})
	}
}
