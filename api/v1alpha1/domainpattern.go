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
	"regexp"
)

// DomainPatternRegexp compiles a proxy's domainPattern: a regular
// expression (Go's RE2 syntax, which runs in time linear in the host's
// length) that must match the whole host name, without its port, ignoring
// case. "(.*\.)?example\.com" matches example.com and its subdomains.
func DomainPatternRegexp(pattern string) (*regexp.Regexp, error) {
	// The pattern alone first, so that an error quotes what was given.
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, fmt.Errorf(`is not a regular expression (RE2 syntax, matched against the whole host name, e.g. "(.*\.)?example\.com"): %w`, err)
	}
	return regexp.Compile(`(?i)^(?:` + pattern + `)$`)
}
