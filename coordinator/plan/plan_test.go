package plan

import (
	"math"
	"strings"
	"testing"
)

// TestWarningsMatchExpectation: over a grid of LHAs and budgets, a warning
// with "no change" appears exactly when the expected relative WIS is not
// below 1, once, and the expectation lies in its range.
func TestWarningsMatchExpectation(t *testing.T) {
	tab, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	seenWarn, seenFine := false, false
	for _, n := range []int{1, 2, 5, 20, 50, 100, 400, 2000} {
		for _, eps := range []float64{0.5, 1, 2, 8, math.Inf(1)} {
			for _, months := range []float64{1, 12} {
				p, err := tab.Make(Request{LHAs: n, Epsilon: eps, Delta: 1e-5, Months: months})
				if err != nil {
					t.Fatal(err)
				}
				k := 0
				for _, w := range p.Warnings {
					k += strings.Count(w, "no change")
				}
				if (k == 1) != (p.Expected >= 1) || k > 1 {
					t.Errorf("%d LHAs, ε %v, %v months: expected %v, warnings %q", n, eps, months, p.Expected, p.Warnings)
				}
				if p.Range[0] > p.Expected+1e-9 || p.Expected > p.Range[1]+1e-9 {
					t.Errorf("%d LHAs, ε %v: expected %v outside %v", n, eps, p.Expected, p.Range)
				}
				seenWarn = seenWarn || k == 1
				seenFine = seenFine || k == 0
			}
		}
	}
	if !seenWarn || !seenFine {
		t.Error("the grid never (or always) warns: the table cannot tell small studies from large ones")
	}
}

// TestMoreLHAsNeverWorse: at a fixed budget, more LHAs mean less noise per
// LHA, so the plan's noise per LHA falls.
func TestMoreLHAsNeverWorse(t *testing.T) {
	tab, _ := Embedded()
	prev := math.Inf(1)
	for _, n := range []int{2, 10, 40, 400} {
		p, err := tab.Make(Request{LHAs: n, Epsilon: 2, Delta: 1e-5, Months: 12})
		if err != nil {
			t.Fatal(err)
		}
		if p.Parameters.NoisePerLHA >= prev {
			t.Errorf("%d LHAs: noise per LHA %v, not below %v", n, p.Parameters.NoisePerLHA, prev)
		}
		prev = p.Parameters.NoisePerLHA
	}
}

func TestMakeRejects(t *testing.T) {
	tab, _ := Embedded()
	for _, r := range []Request{{LHAs: 0, Epsilon: 1, Delta: 1e-5, Months: 12}, {LHAs: 5, Epsilon: -1, Delta: 1e-5, Months: 12},
		{LHAs: 5, Epsilon: 1, Delta: 1e-5, Months: 0}, {LHAs: 5, Epsilon: 1, Delta: 2, Months: 12}} {
		if _, err := tab.Make(r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}
