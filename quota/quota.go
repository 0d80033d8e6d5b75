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

// Package quota holds the per-project session limits and the one rule that
// applies them, for the API (which refuses a start beyond them) and the
// manager (which holds back or fails a session created another way). A
// project is a namespace.
package quota

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// Limits bound one project's sessions.
type Limits struct {
	// ConcurrentSessions is how many sessions may have a browser (a
	// runner pod) at once.
	ConcurrentSessions int
	// LiveSessions is how many sessions may exist that have not ended or
	// failed, those waiting for a browser included. At least
	// ConcurrentSessions.
	LiveSessions int
}

// Config is the limits of every project: Default, unless Projects names
// the namespace.
type Config struct {
	Default  Limits
	Projects map[string]Limits
}

// Defaults of the API's flags, the manager's Configuration and the chart.
const (
	DefaultConcurrentSessions = configv1alpha1.DefaultConcurrentSessions
	DefaultLiveSessions       = configv1alpha1.DefaultLiveSessions
)

// DefaultConfig is the configuration the flags default to.
func DefaultConfig() Config {
	return Config{Default: Limits{ConcurrentSessions: DefaultConcurrentSessions, LiveSessions: DefaultLiveSessions}}
}

// AddFlags binds the configuration to the API's command-line flags; the
// manager reads the same limits from its Configuration file (quota), and
// the chart gives both the same values.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.Default.ConcurrentSessions, "quota-concurrent-sessions", c.Default.ConcurrentSessions,
		"sessions of one project that may have a browser at once; beyond it the API answers 429 QUOTA_EXCEEDED and other sessions wait")
	fs.IntVar(&c.Default.LiveSessions, "quota-live-sessions", c.Default.LiveSessions,
		"sessions of one project that may exist unended, waiting ones included; beyond it a session fails QuotaExceeded")
	fs.Func("project-quota", "limits of one project, overriding the defaults: namespace=concurrentSessions:N,liveSessions:M (either may be left out); repeatable", func(v string) error {
		ns, l, err := c.parseProject(v)
		if err != nil {
			return err
		}
		if c.Projects == nil {
			c.Projects = map[string]Limits{}
		}
		c.Projects[ns] = l
		return nil
	})
}

// parseProject reads one --project-quota value. A limit it leaves out is
// the default's at the time of parsing; Validate checks the result.
func (c *Config) parseProject(v string) (string, Limits, error) {
	ns, spec, ok := strings.Cut(v, "=")
	if !ok || ns == "" || spec == "" {
		return "", Limits{}, fmt.Errorf("want namespace=concurrentSessions:N,liveSessions:M, got %q", v)
	}
	l := Limits{}
	for field := range strings.SplitSeq(spec, ",") {
		name, num, ok := strings.Cut(field, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			return "", Limits{}, fmt.Errorf("%s: want name:number, got %q", ns, field)
		}
		switch name {
		case "concurrentSessions":
			l.ConcurrentSessions = n
		case "liveSessions":
			l.LiveSessions = n
		default:
			return "", Limits{}, fmt.Errorf("%s: unknown limit %q; want concurrentSessions or liveSessions", ns, name)
		}
	}
	return ns, l, nil
}

// For is the limits of the project namespace: an override's limits, the
// default's where it leaves one out.
func (c Config) For(namespace string) Limits {
	l := c.Default
	if o, ok := c.Projects[namespace]; ok {
		if o.ConcurrentSessions > 0 {
			l.ConcurrentSessions = o.ConcurrentSessions
		}
		if o.LiveSessions > 0 {
			l.LiveSessions = o.LiveSessions
		}
	}
	return l
}

// Validate checks every project's limits.
func (c Config) Validate() error {
	check := func(what string, l Limits) error {
		if l.ConcurrentSessions < 1 {
			return fmt.Errorf("%s: concurrentSessions is %d, want at least 1", what, l.ConcurrentSessions)
		}
		if l.LiveSessions < l.ConcurrentSessions {
			return fmt.Errorf("%s: liveSessions is %d, want at least concurrentSessions (%d)", what, l.LiveSessions, l.ConcurrentSessions)
		}
		return nil
	}
	if err := check("default quota", c.Default); err != nil {
		return err
	}
	for _, ns := range slices.Sorted(maps.Keys(c.Projects)) {
		if err := check("quota of project "+ns, c.For(ns)); err != nil {
			return err
		}
	}
	return nil
}

// Verdict is what becomes of a session that has no browser yet.
type Verdict int

const (
	// Admit means it may have its browser now.
	Admit Verdict = iota
	// Wait means the project's browsers are all taken; it waits its turn.
	Wait
	// Refuse means the project has too many live sessions; it fails.
	Refuse
)

// Place decides for session s, which has no runner pod yet, given all the
// sessions of its project (s among them or not). Sessions take turns in
// the order they were created (name breaking ties), so that every manager
// pass and every replica, whatever order it sees them in, decides alike.
// A session that has a pod keeps it: a lowered limit holds back only the
// waiting ones.
func Place(l Limits, sessions []v1alpha1.BrowserSession, s *v1alpha1.BrowserSession) (Verdict, string) {
	running, ahead, liveAhead := 0, 0, 0
	for i := range sessions {
		o := &sessions[i]
		if o.UID == s.UID || o.Status.Finished() {
			continue
		}
		if o.Status.PodName != "" {
			running++
			liveAhead++
			continue
		}
		if before(o, s) {
			ahead++
			liveAhead++
		}
	}
	if liveAhead >= l.LiveSessions {
		return Refuse, fmt.Sprintf("the project has %d live sessions created before this one, its limit is %d (liveSessions)", liveAhead, l.LiveSessions)
	}
	if running+ahead >= l.ConcurrentSessions {
		return Wait, fmt.Sprintf("waiting for a browser: the project has %d sessions running and %d waiting ahead of this one, its limit is %d (concurrentSessions)", running, ahead, l.ConcurrentSessions)
	}
	return Admit, ""
}

// Room says whether the project may start one more session at once, as the
// API's start needs: the API never queues, so every session that has not
// ended, waiting or running, counts against ConcurrentSessions.
func Room(l Limits, sessions []v1alpha1.BrowserSession) (bool, string) {
	live := Live(sessions)
	if live >= l.ConcurrentSessions {
		return false, fmt.Sprintf("the project has %d sessions that have not ended; its limit is %d (concurrentSessions): end one, or retry later", live, l.ConcurrentSessions)
	}
	return true, ""
}

// Live counts the sessions that have not ended, waiting or running: what
// counts against ConcurrentSessions for a start (Room) and for a warm pool
// (the manager keeps no more warm runners than starts the quota allows).
func Live(sessions []v1alpha1.BrowserSession) int {
	live := 0
	for i := range sessions {
		if !sessions[i].Status.Finished() && !sessions[i].Spec.Ended {
			live++
		}
	}
	return live
}

// before reports whether a was created before b: by creation time, then by
// name, then by UID.
func before(a, b *v1alpha1.BrowserSession) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}
