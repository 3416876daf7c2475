package main

import (
	"strings"
	"testing"
)

// TestPlanCounts: the plan counts in words ("over 1 month", "1 campaign
// of 5 rounds"; it said "1 months" and "1 campaigns").
func TestPlanCounts(t *testing.T) {
	code, out, stderr := fedcast(t, "plan", "--lhas", "400", "--epsilon", "2", "--months", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Plan for 400 LHAs over 1 month with", "(1 campaign of 5 rounds)"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
}

// TestPlanUsage: a --delta or --months out of range is a usage error
// naming the flag. --delta 0.5 for 400 LHAs was planned without a word,
// though study new refuses δ ≥ 1/N; --delta 0 said "delta = 0, must be in
// (0, 1)" and --months 601 "want a number of months above 0".
func TestPlanUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--delta", "0.5"}, "--delta 0.5 is not below 1/N = 0.0025 (N = 400 LHAs)"},
		{[]string{"--delta", "0"}, "--delta 0: delta = 0, must be in (0, 1)"},
		{[]string{"--months", "0"}, "--months 0: want a number of months above 0 and at most 600"},
		{[]string{"--months", "601"}, "--months 601: want a number of months above 0 and at most 600"},
	} {
		args := append([]string{"plan", "--lhas", "400", "--epsilon", "2"}, c.args...)
		code, _, stderr := fedcast(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q (want exit 2 and %q)", c.args, code, stderr, c.want)
		}
	}
	// Without noise δ plays no part.
	if code, _, stderr := fedcast(t, "plan", "--lhas", "400", "--epsilon", "inf", "--delta", "0.5"); code != 0 {
		t.Errorf("--epsilon inf --delta 0.5: exit %d %s", code, stderr)
	}
}
