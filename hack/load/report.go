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

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// report is one run's figures.
type report struct {
	Scenario string      `json:"scenario"`
	Machine  machine     `json:"machine"`
	API      string      `json:"api"`
	Process  processInfo `json:"process"`
	Starts   []startsRun `json:"starts,omitempty"`
	Acts     *actsResult `json:"acts,omitempty"`
	SSE      *sseResult  `json:"sse,omitempty"`
}

// latencies summarises durations: how many, and their p50, p95 and max in
// milliseconds.
type latencies struct {
	N     int     `json:"n"`
	P50ms float64 `json:"p50Ms"`
	P95ms float64 `json:"p95Ms"`
	MaxMs float64 `json:"maxMs"`
}

// summarise computes the latencies of ds, by nearest rank.
func summarise(ds []time.Duration) latencies {
	if len(ds) == 0 {
		return latencies{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return latencies{N: len(s), P50ms: ms(percentile(s, 50)), P95ms: ms(percentile(s, 95)), MaxMs: ms(s[len(s)-1])}
}

// percentile is the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())/10) / 100 }

// mib formats KiB as MiB.
func mib(kib int64) string { return strconv.FormatFloat(float64(kib)/1024, 'f', 1, 64) }

// failed says whether the run missed what it was to show: a call that
// failed, a kind of start that could not run (warm without a pool
// controller), a stream that was not held or did not finish. A warm start
// that went cold is a figure (the warm column), not a failure.
func (r report) failed() bool {
	for _, s := range r.Starts {
		if s.Concurrent.Errors > 0 || s.Sequential.Errors > 0 || s.Skipped != "" {
			return true
		}
	}
	if r.Acts != nil && r.Acts.Errors > 0 {
		return true
	}
	if r.SSE != nil && (r.SSE.Held < r.SSE.Streams || r.SSE.Finished < r.SSE.Streams) {
		return true
	}
	return false
}

// print writes one plain table per scenario part.
func (r report) print(w io.Writer) {
	fmt.Fprintf(w, "load %s: API %s; machine %d CPUs, %s GB, load average %s at %s\n",
		r.Scenario, r.API, r.Machine.CPUs, r.Machine.MemTotalGB, r.Machine.LoadAvg, r.Machine.Time)
	fmt.Fprintf(w, "memory of process %d (%s): %s\n\n", r.Process.PID, r.Process.Command, r.Process.Note)
	for _, s := range r.Starts {
		s.print(w)
	}
	if r.Acts != nil {
		r.Acts.print(w)
	}
	if r.SSE != nil {
		r.SSE.print(w)
	}
}

// table writes a titled table of tab-separated rows.
func table(w io.Writer, title string, rows ...[]string) {
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
