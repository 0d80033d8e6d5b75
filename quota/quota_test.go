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

package quota

import (
	"flag"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// session is a session created at t0 plus sec seconds; pod says whether it
// has a runner pod, over whether it ended.
func session(name string, sec int, pod, over bool) v1alpha1.BrowserSession {
	s := v1alpha1.BrowserSession{ObjectMeta: metav1.ObjectMeta{
		Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(sec) * time.Second)),
	}}
	if pod {
		s.Status.PodName = v1alpha1.RunnerPodName(name)
	}
	if over {
		s.Status.Conditions = []metav1.Condition{{Type: v1alpha1.BrowserSessionConditionEnded, Status: metav1.ConditionTrue}}
	}
	return s
}

func TestPlace(t *testing.T) {
	limits := Limits{ConcurrentSessions: 2, LiveSessions: 3}
	cases := []struct {
		name     string
		sessions []v1alpha1.BrowserSession
		subject  string
		want     Verdict
	}{
		{"alone", []v1alpha1.BrowserSession{session("a", 0, false, false)}, "a", Admit},
		{"one running", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 1, false, false)}, "b", Admit},
		{"browsers taken", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 1, true, false), session("c", 2, false, false)}, "c", Wait},
		{"ended ones free their browser", []v1alpha1.BrowserSession{session("a", 0, true, true), session("b", 1, true, false), session("c", 2, false, false)}, "c", Admit},
		{"earlier waiter first", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 1, false, false), session("c", 2, false, false)}, "c", Wait},
		{"later waiter does not block", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 1, false, false), session("c", 2, false, false)}, "b", Admit},
		{"same second: name decides", []v1alpha1.BrowserSession{session("a", 0, true, false), session("y", 1, false, false), session("x", 1, false, false)}, "x", Admit},
		{"beyond live sessions", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 1, true, false), session("c", 2, false, false), session("d", 3, false, false)}, "d", Refuse},
		{"a later one beyond live does not fail an earlier one", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 1, true, false), session("c", 2, false, false), session("d", 3, false, false)}, "c", Wait},
		{"lowered limit keeps running ones", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 1, true, false), session("c", 2, true, false), session("d", 3, false, false)}, "d", Refuse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var subject *v1alpha1.BrowserSession
			for i := range tc.sessions {
				if tc.sessions[i].Name == tc.subject {
					subject = &tc.sessions[i]
				}
			}
			got, msg := Place(limits, tc.sessions, subject)
			if got != tc.want {
				t.Errorf("Place(%s) = %v (%q), want %v", tc.subject, got, msg, tc.want)
			}
			if (got == Admit) != (msg == "") {
				t.Errorf("Place(%s) message %q with verdict %v", tc.subject, msg, got)
			}
		})
	}
}

func TestRoom(t *testing.T) {
	limits := Limits{ConcurrentSessions: 2, LiveSessions: 5}
	ended := session("e", 0, false, false)
	ended.Spec.Ended = true
	cases := []struct {
		name     string
		sessions []v1alpha1.BrowserSession
		want     bool
	}{
		{"empty", nil, true},
		{"one live", []v1alpha1.BrowserSession{session("a", 0, true, false)}, true},
		{"waiting ones count", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 0, false, false)}, false},
		{"ended and ending ones do not", []v1alpha1.BrowserSession{session("a", 0, true, false), session("b", 0, true, true), ended}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, msg := Room(limits, tc.sessions); got != tc.want {
				t.Errorf("Room = %v (%q), want %v", got, msg, tc.want)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    map[string]Limits
		wantErr bool
	}{
		{"defaults", nil, map[string]Limits{"any": {10, 50}}, false},
		{"default changed", []string{"--quota-concurrent-sessions=3", "--quota-live-sessions=4"}, map[string]Limits{"any": {3, 4}}, false},
		{"one project, one limit", []string{"--project-quota=team-a=concurrentSessions:20"}, map[string]Limits{"team-a": {20, 50}, "team-b": {10, 50}}, false},
		{"one project, both", []string{"--project-quota=team-a=liveSessions:100,concurrentSessions:30"}, map[string]Limits{"team-a": {30, 100}}, false},
		{"unknown limit", []string{"--project-quota=team-a=pods:3"}, nil, true},
		{"no namespace", []string{"--project-quota==concurrentSessions:3"}, nil, true},
		{"not a number", []string{"--project-quota=a=concurrentSessions:many"}, nil, true},
		{"live below concurrent", []string{"--project-quota=a=concurrentSessions:60"}, nil, true},
		{"zero", []string{"--quota-concurrent-sessions=0"}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			c.AddFlags(fs)
			err := fs.Parse(tc.args)
			if err == nil {
				err = c.Validate()
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			got := map[string]Limits{}
			for ns := range tc.want {
				got[ns] = c.For(ns)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}
