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

// Package v1alpha1 holds the config.browserfleet.io/v1alpha1 API: the
// Configuration file of the manager (cmd/manager --config), its defaults,
// its validation and its loader. It is no resource of the cluster: the
// package is skipped by the CRD generator.
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=config.browserfleet.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the Configuration.
	GroupVersion = schema.GroupVersion{Group: "config.browserfleet.io", Version: "v1alpha1"}

	// SchemeBuilder adds the Configuration and its defaults to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes, addDefaultingFuncs)

	// AddToScheme adds the Configuration and its defaults to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Configuration{})
	return nil
}

// addDefaultingFuncs registers SetDefaults, so that the
// scheme's decoders default what they decode.
func addDefaultingFuncs(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&Configuration{}, func(obj any) { SetDefaults(obj.(*Configuration)) })
	return nil
}
