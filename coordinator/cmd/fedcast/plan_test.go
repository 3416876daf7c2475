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
