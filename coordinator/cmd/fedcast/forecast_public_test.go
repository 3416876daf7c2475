package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
)

// TestPublicBehind: fedcast forecast says when the study's public totals
// file ends before the last day of the LHA's file (a later week's file
// with the file declared at the study's start), and only then.
func TestPublicBehind(t *testing.T) {
	_, d := writePublishCases(t, t.TempDir(), 21, func(int) int { return 5 }) // March 1 … 21, 2021
	day := func(s string) time.Time { v, _ := time.Parse(time.DateOnly, s); return v }
	for _, tc := range []struct {
		known string
		want  string // "": no note
	}{
		{"2021-03-21", ""},
		{"2021-03-28", ""},
		{"2021-03-20", "public.csv ends on 2021-03-20, 1 day before the last day of your file (2021-03-21)"},
		{"2021-03-14", "ends on 2021-03-14, 7 days before the last day of your file (2021-03-21): the forecast reads the national and state totals of those days as no change"},
	} {
		got := publicBehind(&forecast.PublicInputs{Known: day(tc.known)}, d, "public.csv")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("totals to %s: %q, want %q", tc.known, got, tc.want)
		}
	}
	if got := publicBehind(nil, d, ""); got != "" {
		t.Errorf("no public file: %q", got)
	}
}
