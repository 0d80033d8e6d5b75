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

package chromium

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
)

func TestCaptchaSettings(t *testing.T) {
	type want struct {
		Image, Input string
		Solve        bool
		Notes        []string
		Err          string
	}
	tests := []struct {
		name string
		bs   *v1alpha1.BrowserSettings
		want want
	}{
		{name: "none", bs: &v1alpha1.BrowserSettings{}, want: want{}},
		{
			name: "both selectors: solveCaptchas defaults to true",
			bs:   &v1alpha1.BrowserSettings{CaptchaImageSelector: "#captcha", CaptchaInputSelector: "xpath=//input[@name='answer']"},
			want: want{Image: "#captcha", Input: "xpath=//input[@name='answer']", Solve: true},
		},
		{
			name: "both selectors and solveCaptchas",
			bs:   &v1alpha1.BrowserSettings{SolveCaptchas: ptr.To(true), CaptchaImageSelector: "img.captcha >> nth=1", CaptchaInputSelector: "#answer"},
			want: want{Image: "img.captcha >> nth=1", Input: "#answer", Solve: true},
		},
		{
			name: "solveCaptchas false turns the selectors off, visibly",
			bs:   &v1alpha1.BrowserSettings{SolveCaptchas: ptr.To(false), CaptchaImageSelector: "#captcha", CaptchaInputSelector: "#answer"},
			want: want{Notes: []string{"browserSettings.captchaImageSelector and captchaInputSelector: solveCaptchas is false, so captchas are not solved"}},
		},
		{
			name: "solveCaptchas without selectors is noted: no built-in detection",
			bs:   &v1alpha1.BrowserSettings{SolveCaptchas: ptr.To(true)},
			want: want{Notes: []string{"cloudSessionCreateParams.browserSettings.solveCaptchas: there is no built-in captcha detection: set captchaImageSelector and captchaInputSelector to solve a text captcha"}},
		},
		{
			name: "an image without its answer field",
			bs:   &v1alpha1.BrowserSettings{SolveCaptchas: ptr.To(true), CaptchaImageSelector: "#captcha"},
			want: want{Err: "cloudSessionCreateParams.browserSettings.captchaInputSelector is required with captchaImageSelector"},
		},
		{
			name: "an answer field without its image",
			bs:   &v1alpha1.BrowserSettings{CaptchaInputSelector: "#answer"},
			want: want{Err: "cloudSessionCreateParams.browserSettings.captchaImageSelector is required with captchaInputSelector"},
		},
		{
			name: "a selector the runner cannot resolve",
			bs:   &v1alpha1.BrowserSettings{CaptchaImageSelector: "text=Captcha", CaptchaInputSelector: "#answer >> nth=x"},
			want: want{Err: "cloudSessionCreateParams.browserSettings.captchaImageSelector: text= locators are not supported for snapshot scoping; use a CSS selector or xpath=\n" +
				"cloudSessionCreateParams.browserSettings.captchaInputSelector: malformed selector: nth=x: want a whole number from 0 to 1048576"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got want
			s, err := newSettings(runnertest.Config(runnertest.CloudSettings(tt.bs)))
			if err != nil {
				got.Err = err.Error()
			} else {
				for _, n := range s.notes {
					if strings.Contains(n, "captcha") {
						got.Notes = append(got.Notes, n)
					}
				}
				got.Image, got.Input = s.captchaImage, s.captchaInput
				got.Solve = s.captchaImage != ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("captcha settings (-want +got):\n%s", diff)
			}
		})
	}
}
