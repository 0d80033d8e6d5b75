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

package app

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAcceptedRegionFlag: --accepted-region takes regions sessions can
// name, repeated, and refuses anything else naming the flag.
func TestAcceptedRegionFlag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{name: "none: every region"},
		{name: "two regions", args: []string{"--accepted-region=us-east-1", "--accepted-region=eu-central-1"}, want: []string{"us-east-1", "eu-central-1"}},
		{name: "not a region", args: []string{"--accepted-region=mars-1"}, wantErr: `invalid value "mars-1" for flag -accepted-region: "mars-1" is not a region`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			fs := flag.NewFlagSet("api", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			opts.AddFlags(fs)
			err := fs.Parse(tc.args)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("error %q, want one saying %q", got, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, opts.AcceptedRegions); err == nil && diff != "" {
				t.Errorf("accepted regions (-want +got):\n%s", diff)
			}
		})
	}
}
