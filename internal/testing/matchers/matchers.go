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

// Package matchers holds Gomega matchers for Kubernetes errors and
// conditions.
package matchers

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BeInvalidError matches an Invalid error from the API server whose message
// names each of the given field paths and contains each fragment.
func BeInvalidError(fieldAndFragments ...string) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(err error) (bool, error) {
		if err == nil || !apierrors.IsInvalid(err) {
			return false, nil
		}
		for _, f := range fieldAndFragments {
			if !strings.Contains(err.Error(), f) {
				return false, nil
			}
		}
		return true, nil
	}).WithTemplate("Expected\n{{.FormattedActual}}\n{{.To}} be an Invalid error naming {{format .Data}}", fieldAndFragments)
}

// BeUnknownFieldError matches the API server's refusal of a field its schema
// does not have, under strict field validation (kubectl's default).
func BeUnknownFieldError(path string) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(err error) (bool, error) {
		return err != nil && apierrors.IsBadRequest(err) && strings.Contains(err.Error(), fmt.Sprintf("unknown field %q", path)), nil
	}).WithTemplate("Expected\n{{.FormattedActual}}\n{{.To}} refuse unknown field {{format .Data}}", path)
}

// HaveCondition matches a list of conditions holding a condition of that
// type with that status and reason. An empty reason matches any.
func HaveCondition(condType string, status metav1.ConditionStatus, reason string) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(conds []metav1.Condition) (bool, error) {
		c := meta.FindStatusCondition(conds, condType)
		if c == nil {
			return false, nil
		}
		return c.Status == status && (reason == "" || c.Reason == reason), nil
	}).WithTemplate("Expected conditions\n{{.FormattedActual}}\n{{.To}} have " + fmt.Sprintf("%s=%s (reason %q)", condType, status, reason))
}
