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

package v1alpha1

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/provider"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Validate checks a defaulted Configuration; each error names the field's
// path in the file, e.g. runner.egress.allowCIDRs[0].
func Validate(cfg *Configuration) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateRunner(&cfg.Runner, field.NewPath("runner"))...)
	errs = append(errs, validateSessions(&cfg.Sessions, field.NewPath("sessions"))...)
	errs = append(errs, validateQuota(&cfg.Quota, field.NewPath("quota"))...)
	errs = append(errs, validateTasks(&cfg.Tasks, field.NewPath("tasks"))...)
	return errs
}

func validateTasks(t *TasksConfiguration, p *field.Path) field.ErrorList {
	errs := validateNonNegative(t.SessionWait, p.Child("sessionWait"))
	if d := t.DefaultActiveDeadline; d != nil && (d.Duration <= 0 || d.Duration > MaxTaskActiveDeadline) {
		errs = append(errs, field.Invalid(p.Child("defaultActiveDeadline"), d.Duration.String(),
			fmt.Sprintf("must be greater than 0 and at most %s", MaxTaskActiveDeadline)))
	}
	if n := t.MaxRunning; n != nil && *n < 1 {
		errs = append(errs, field.Invalid(p.Child("maxRunning"), *n, "must be at least 1"))
	}
	return errs
}

func validateRunner(r *RunnerConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	policies := []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}
	if !slices.Contains(policies, r.ImagePullPolicy) {
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), r.ImagePullPolicy, policies))
	}
	errs = append(errs, validateResources(&r.Resources, p.Child("resources"))...)
	for _, size := range []struct {
		name string
		q    *resource.Quantity
	}{{"shmSize", r.ShmSize}, {"tmpSize", r.TmpSize}} {
		if size.q != nil && size.q.Sign() <= 0 {
			errs = append(errs, field.Invalid(p.Child(size.name), size.q.String(), "must be greater than 0"))
		}
	}
	if u := ptr.Deref(r.RunAsUser, 0); u < 1 || u > math.MaxInt32 {
		errs = append(errs, field.Invalid(p.Child("runAsUser"), u, "must be a user id from 1 to 2147483647: runners never run as root"))
	}
	if s := ptr.Deref(r.TerminationGracePeriodSeconds, 0); s < 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), s, "must not be negative"))
	}
	errs = append(errs, validateNonNegative(r.ForceDeleteAfter, p.Child("forceDeleteAfter"))...)
	errs = append(errs, validateNodeSelector(r.NodeSelector, p.Child("nodeSelector"))...)
	errs = append(errs, validateTolerations(r.Tolerations, p.Child("tolerations"))...)
	if r.RuntimeClassName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(r.RuntimeClassName) {
			errs = append(errs, field.Invalid(p.Child("runtimeClassName"), r.RuntimeClassName, msg))
		}
	}
	errs = append(errs, validateRegions(&r.Regions, p.Child("regions"))...)
	errs = append(errs, ValidateModelBaseURLs(r.ModelBaseURLs, p.Child("modelBaseURLs"))...)
	errs = append(errs, validateAPIURL(r.ServicesURL, p.Child("servicesURL"))...)
	errs = append(errs, validateAPIURL(r.SearchURL, p.Child("searchURL"))...)
	if r.OTLPEndpoint != "" {
		u, err := url.Parse(r.OTLPEndpoint)
		switch {
		case err == nil && u.User != nil:
			// Not echoed: it holds a password.
			errs = append(errs, field.Invalid(p.Child("otlpEndpoint"), field.OmitValueType{}, "must not carry credentials: runners get it in their environment"))
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "":
			errs = append(errs, field.Invalid(p.Child("otlpEndpoint"), r.OTLPEndpoint, "must be an absolute http or https URL without query, e.g. http://otel-collector.observability:4318"))
		}
	}
	seen := sets.New[string]()
	for i, path := range r.AllowedExecutables {
		fp := p.Child("allowedExecutables").Index(i)
		if rpc.CheckAllowedExecutable(path) != nil {
			errs = append(errs, field.Invalid(fp, path, "must be a clean absolute path"))
		} else if seen.Has(path) {
			errs = append(errs, field.Duplicate(fp, path))
		}
		seen.Insert(path)
	}
	errs = append(errs, validateCIDRs(r.Egress.AllowCIDRs, p.Child("egress", "allowCIDRs"))...)
	errs = append(errs, validateCIDRs(r.Egress.ClusterCIDRs, p.Child("egress", "clusterCIDRs"))...)
	return errs
}

func validateResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for _, name := range slices.Sorted(maps.Keys(list.list)) {
			fp := p.Child(list.name).Key(string(name))
			for _, msg := range validation.IsQualifiedName(string(name)) {
				errs = append(errs, field.Invalid(fp, name, msg))
			}
			if q := list.list[name]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(fp, q.String(), "must not be negative"))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		request := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && request.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), request.String(),
				fmt.Sprintf("must not exceed the limit (%s)", limit.String())))
		}
	}
	if len(r.Claims) != 0 {
		errs = append(errs, field.Forbidden(p.Child("claims"), "runner pods claim no dynamic resources"))
	}
	return errs
}

func validateNodeSelector(sel map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Key(k), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(sel[k]) {
			errs = append(errs, field.Invalid(p.Key(k), sel[k], msg))
		}
	}
	return errs
}

// validateRegions checks the region table: regions a session can name,
// label keys and values the API server would take in a node affinity.
func validateRegions(r *RegionsConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(r.NodeLabel) {
		errs = append(errs, field.Invalid(p.Child("nodeLabel"), r.NodeLabel, msg))
	}
	known := make([]string, 0, len(v1alpha1.Regions))
	for _, region := range v1alpha1.Regions {
		known = append(known, string(region))
	}
	accepted := sets.New[string]()
	for i, region := range r.Accepted {
		fp := p.Child("accepted").Index(i)
		switch {
		case !slices.Contains(known, region):
			errs = append(errs, field.NotSupported(fp, region, known))
		case accepted.Has(region):
			errs = append(errs, field.Duplicate(fp, region))
		}
		accepted.Insert(region)
	}
	for _, region := range slices.Sorted(maps.Keys(r.Mappings)) {
		fp := p.Child("mappings").Key(region)
		m := r.Mappings[region]
		switch {
		case !slices.Contains(known, region):
			errs = append(errs, field.NotSupported(fp, region, known))
			continue
		case len(r.Accepted) > 0 && !accepted.Has(region):
			errs = append(errs, field.Invalid(fp, region, "maps a region that regions.accepted does not accept"))
		case m.NodeLabel == "" && m.Value == "":
			errs = append(errs, field.Required(fp, "set nodeLabel, value or both"))
		}
		if m.NodeLabel != "" {
			for _, msg := range validation.IsQualifiedName(m.NodeLabel) {
				errs = append(errs, field.Invalid(fp.Child("nodeLabel"), m.NodeLabel, msg))
			}
		}
		for _, msg := range validation.IsValidLabelValue(m.Value) {
			errs = append(errs, field.Invalid(fp.Child("value"), m.Value, msg))
		}
	}
	return errs
}

// validateTolerations checks what the API server would refuse at the
// first runner pod.
func validateTolerations(tolerations []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	for i, t := range tolerations {
		fp := p.Index(i)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(fp.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				errs = append(errs, field.Invalid(fp.Child("operator"), t.Operator, "must be Exists when key is empty"))
			}
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(fp.Child("value"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(fp.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(fp.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" && !slices.Contains(effects, t.Effect) {
			errs = append(errs, field.NotSupported(fp.Child("effect"), t.Effect, effects))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(fp.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
		}
	}
	return errs
}

// ValidateModelBaseURLs checks endpoints by provider, as
// runner.modelBaseURLs holds them: known providers, absolute http or https
// URLs.
func ValidateModelBaseURLs(urls map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(urls)) {
		fp := p.Key(name)
		if !provider.Known(name) {
			errs = append(errs, field.NotSupported(fp, name, provider.Names))
			continue
		}
		raw := urls[name]
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, field.Invalid(fp, raw, "must be an absolute http or https URL"))
		}
	}
	return errs
}

func validateCIDRs(cidrs []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range cidrs {
		if _, err := rpc.ParseCIDR(s); err != nil {
			errs = append(errs, field.Invalid(p.Index(i), s, err.Error()))
		}
	}
	return errs
}

func validateSessions(s *SessionsConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := s.DefaultTimeout; d != nil && d.Duration <= 0 {
		errs = append(errs, field.Invalid(p.Child("defaultTimeout"), d.Duration.String(), "must be greater than 0"))
	}
	errs = append(errs, validateNonNegative(s.MaxTimeout, p.Child("maxTimeout"))...)
	if s.DefaultTimeout != nil && s.MaxTimeout != nil && s.MaxTimeout.Duration > 0 && s.DefaultTimeout.Duration > s.MaxTimeout.Duration {
		errs = append(errs, field.Invalid(p.Child("defaultTimeout"), s.DefaultTimeout.Duration.String(),
			fmt.Sprintf("must not exceed maxTimeout (%s)", s.MaxTimeout.Duration)))
	}
	errs = append(errs, validateNonNegative(s.TTLAfterEnded, p.Child("ttlAfterEnded"))...)
	errs = append(errs, validateNonNegative(s.StartupTimeout, p.Child("startupTimeout"))...)
	errs = append(errs, validateNonNegative(s.SecretWait, p.Child("secretWait"))...)
	return errs
}

func validateNonNegative(d *metav1.Duration, p *field.Path) field.ErrorList {
	if d != nil && d.Duration < 0 {
		return field.ErrorList{field.Invalid(p, d.Duration.String(), "must not be negative")}
	}
	return nil
}

// validateQuota checks the limits as quota.Config.Validate does, but
// names each field. A project's limit left out is the default's.
func validateQuota(q *QuotaConfiguration, p *field.Path) field.ErrorList {
	concurrent, live := ptr.Deref(q.ConcurrentSessions, 0), ptr.Deref(q.LiveSessions, 0)
	var errs field.ErrorList
	if concurrent < 1 {
		errs = append(errs, field.Invalid(p.Child("concurrentSessions"), concurrent, "must be at least 1"))
	} else if live < concurrent {
		errs = append(errs, field.Invalid(p.Child("liveSessions"), live, fmt.Sprintf("must be at least concurrentSessions (%d)", concurrent)))
	}
	defaultsValid := len(errs) == 0
	namespaces := sets.New[string]()
	for i, o := range q.Projects {
		fp := p.Child("projects").Index(i)
		switch {
		case o.Namespace == "":
			errs = append(errs, field.Required(fp.Child("namespace"), ""))
		case namespaces.Has(o.Namespace):
			errs = append(errs, field.Duplicate(fp.Child("namespace"), o.Namespace))
		default:
			for _, msg := range validation.IsDNS1123Label(o.Namespace) {
				errs = append(errs, field.Invalid(fp.Child("namespace"), o.Namespace, msg))
			}
		}
		namespaces.Insert(o.Namespace)
		if o.ConcurrentSessions == nil && o.LiveSessions == nil {
			errs = append(errs, field.Required(fp, "set concurrentSessions, liveSessions or both"))
			continue
		}
		valid := true
		for _, limit := range []struct {
			name string
			n    *int32
		}{{"concurrentSessions", o.ConcurrentSessions}, {"liveSessions", o.LiveSessions}} {
			if limit.n != nil && *limit.n < 1 {
				errs = append(errs, field.Invalid(fp.Child(limit.name), *limit.n, "must be at least 1"))
				valid = false
			}
		}
		pc, pl := ptr.Deref(o.ConcurrentSessions, concurrent), ptr.Deref(o.LiveSessions, live)
		if !valid || !defaultsValid || pl >= pc {
			continue
		}
		switch {
		case o.LiveSessions == nil:
			errs = append(errs, field.Invalid(fp.Child("concurrentSessions"), pc, fmt.Sprintf("must not exceed quota.liveSessions (%d) unless liveSessions is set too", live)))
		case o.ConcurrentSessions == nil:
			errs = append(errs, field.Invalid(fp.Child("liveSessions"), pl, fmt.Sprintf("must be at least quota.concurrentSessions (%d) unless concurrentSessions is set too", concurrent)))
		default:
			errs = append(errs, field.Invalid(fp.Child("liveSessions"), pl, fmt.Sprintf("must be at least concurrentSessions (%d)", pc)))
		}
	}
	return errs
}

// validateAPIURL checks a URL of the API's runner listener, when set.
func validateAPIURL(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return nil
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return field.ErrorList{field.Invalid(p, v, "must be an absolute http or https URL without credentials")}
	}
	return nil
}
