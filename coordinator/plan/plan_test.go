package plan

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
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
				if n == 1 && k == 1 && !strings.HasPrefix(p.Warnings[0], "with 1 LHA at") {
					t.Errorf("1 LHA, ε %v: warning %q does not start \"with 1 LHA at\"", eps, p.Warnings[0])
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
// LHA, so the plan's noise per LHA falls, and the skill it promises never
// gets worse (a table measured with one seed per level once expected 0.87
// from 50 LHAs at ε = 2 and 0.98 from 60).
func TestMoreLHAsNeverWorse(t *testing.T) {
	tab, _ := Embedded()
	for _, eps := range []float64{0.5, 1, 2, 8} {
		for _, months := range []float64{1, 12, 24} {
			prevNoise, prevExp := math.Inf(1), math.Inf(1)
			for n := 2; n <= 2000; n += 1 + n/20 {
				p, err := tab.Make(Request{LHAs: n, Epsilon: eps, Delta: 1e-5, Months: months})
				if err != nil {
					t.Fatal(err)
				}
				if p.Parameters.EveryDays == 28 && p.Parameters.NoisePerLHA >= prevNoise {
					t.Errorf("ε %v, %v months, %d LHAs: noise per LHA %v, not below %v", eps, months, n, p.Parameters.NoisePerLHA, prevNoise)
				}
				if p.Expected > prevExp+1e-9 {
					t.Errorf("ε %v, %v months, %d LHAs: expected relative WIS %.3f, worse than %.3f with fewer LHAs", eps, months, n, p.Expected, prevExp)
				}
				if p.Parameters.EveryDays == 28 {
					prevNoise = p.Parameters.NoisePerLHA
				}
				prevExp = p.Expected
			}
		}
	}
}

// TestTableMonotone: in the embedded table, more noise never means better
// expected skill, nor a better best or worst outbreak.
func TestTableMonotone(t *testing.T) {
	tab, _ := Embedded()
	if len(tab.Seeds) < 2 {
		t.Errorf("the table was measured with seeds %v: one seed per level is one draw of the noise", tab.Seeds)
	}
	for _, every := range tab.schedules() {
		var prev *Row
		for _, r := range tab.Rows {
			if r.Every != every {
				continue
			}
			if prev != nil {
				if r.Z <= prev.Z {
					t.Errorf("every %d: z %v after %v", every, r.Z, prev.Z)
				}
				if r.Expected < prev.Expected || r.Low < prev.Low || r.High < prev.High {
					t.Errorf("every %d: z = %v measures %v (%v … %v), better than z = %v's %v (%v … %v)",
						every, r.Z, r.Expected, r.Low, r.High, prev.Z, prev.Expected, prev.Low, prev.High)
				}
			}
			prev = &r
		}
	}
}

func TestNonDecreasing(t *testing.T) {
	for _, c := range []struct{ in, want []float64 }{
		{[]float64{1, 2, 3}, []float64{1, 2, 3}},
		{[]float64{2, 2, 1, 4}, []float64{math.Cbrt(4), math.Cbrt(4), math.Cbrt(4), 4}},
		{[]float64{1, 4, 1, 8}, []float64{1, 2, 2, 8}},
		{[]float64{8, 2, 0.5}, []float64{2, 2, 2}},
		{[]float64{0.7, 10, 0.9, 10}, []float64{0.7, 3, 3, 10}},
		{[]float64{5}, []float64{5}},
		{nil, nil},
	} {
		got := NonDecreasing(c.in)
		if len(got) != len(c.want) {
			t.Fatalf("%v: got %v", c.in, got)
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("%v: got %v, want %v", c.in, got, c.want)
				break
			}
		}
	}
}

// ExampleNonDecreasing: a noise level that measured better than a smaller
// one is pooled with it.
func ExampleNonDecreasing() {
	fmt.Printf("%.2f\n", NonDecreasing([]float64{0.8, 1.25, 0.8, 4}))
	// Output: [0.80 1.00 1.00 4.00]
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

// TestPlanByOutbreak: a plan lists what its expectation rests on, every
// outbreak of the table at the plan's noise, each inside the range, their
// geometric mean the expectation (up to the interpolation between levels).
func TestPlanByOutbreak(t *testing.T) {
	tab, _ := Embedded()
	for _, n := range []int{20, 60, 150, 400} {
		p, err := tab.Make(Request{LHAs: n, Epsilon: 2, Delta: 1e-5, Months: 12})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.ByOutbreak) != len(tab.Outbreaks) || len(tab.Outbreaks) == 0 {
			t.Fatalf("%d LHAs: %d outbreaks measured, the table has %d", n, len(p.ByOutbreak), len(tab.Outbreaks))
		}
		logSum := 0.0
		for i, m := range p.ByOutbreak {
			if m.Outbreak != tab.Outbreaks[i] || m.RelativeWIS < p.Range[0]-1e-9 || m.RelativeWIS > p.Range[1]+1e-9 {
				t.Errorf("%d LHAs: %+v (range %v)", n, m, p.Range)
			}
			logSum += math.Log(m.RelativeWIS)
		}
		if g := math.Exp(logSum / float64(len(p.ByOutbreak))); math.Abs(g-p.Expected) > 0.03*p.Expected {
			t.Errorf("%d LHAs: expected %v, geometric mean of the outbreaks %v", n, p.Expected, g)
		}
	}
}

// TestAssess: reading the table at a schedule a study fixed. At the
// planner's own schedule it gives the planner's expectation; the same
// budget spread over more rounds expects no better skill; a schedule is
// read at the table's nearest.
func TestAssess(t *testing.T) {
	tab, _ := Embedded()
	for _, n := range []int{40, 400} {
		r := Request{LHAs: n, Epsilon: 2, Delta: 1e-5, Months: 12}
		p, err := tab.Make(r)
		if err != nil {
			t.Fatal(err)
		}
		a, err := tab.Assess(r, p.Parameters.EveryDays, p.Parameters.NoiseMultiplier, p.Parameters.ExpectedClients)
		if err != nil {
			t.Fatal(err)
		}
		if a.Expected != p.Expected || a.Range != p.Range || len(a.Warnings) != len(p.Warnings) {
			t.Errorf("%d LHAs: assessed %v %v %q, planned %v %v %q", n, a.Expected, a.Range, a.Warnings, p.Expected, p.Range, p.Warnings)
		}
		more, _ := tab.Assess(r, p.Parameters.EveryDays, 2*p.Parameters.NoiseMultiplier, p.Parameters.ExpectedClients)
		if more.Expected < a.Expected {
			t.Errorf("%d LHAs: twice the noise expects %v, better than %v", n, more.Expected, a.Expected)
		}
	}
	for _, months := range []float64{1, 12} {
		// A one-month plan is one campaign: assessed as one (every 0), it
		// reads what the planner read.
		r := Request{LHAs: 12, Epsilon: 2, Delta: 1e-5, Months: months}
		p, _ := tab.Make(r)
		every := p.Parameters.EveryDays
		if p.Parameters.Campaigns == 1 {
			every = 0
		}
		a, err := tab.Assess(r, every, p.Parameters.NoiseMultiplier, p.Parameters.ExpectedClients)
		if err != nil || a.Expected != p.Expected || a.Parameters.EveryDays != p.Parameters.EveryDays {
			t.Errorf("%v months: assessed %v at every %d (%v), planned %v at every %d", months, a.Expected, a.Parameters.EveryDays, err, p.Expected, p.Parameters.EveryDays)
		}
	}
	for every, want := range map[int]int{1: 28, 7: 28, 30: 28, 40: 56, 56: 56, 365: 56} {
		a, err := tab.Assess(Request{LHAs: 400, Epsilon: 2, Delta: 1e-5}, every, 17, 400)
		if err != nil || a.Parameters.EveryDays != want {
			t.Errorf("every %d days: read at %d (%v), want %d", every, a.Parameters.EveryDays, err, want)
		}
	}
	st := protocol.Settings{Epsilon: 2, Delta: 1e-5, Rounds: 65, Campaigns: 13, Every: protocol.Duration(28 * 24 * time.Hour), ExpectedClients: 40}
	a, err := tab.AssessStudy(st, 40, 2, 17.3)
	if err != nil || a.Parameters.Campaigns != 13 || a.Parameters.Rounds != 5 || a.Parameters.EveryDays != 28 || !(a.Expected > 1) || math.Abs(a.Parameters.NoisePerLHA-17.3/40) > 1e-12 {
		t.Errorf("a continuing study of 40 LHAs, 13 campaigns at c = 17.3: %+v, expected %v (%v)", a.Parameters, a.Expected, err)
	}
	for _, bad := range []struct {
		c float64
		m int
	}{{-1, 10}, {math.NaN(), 10}, {math.Inf(1), 10}, {1, 0}, {1, 401}} {
		if _, err := tab.Assess(Request{LHAs: 400, Epsilon: 2, Delta: 1e-5}, 28, bad.c, bad.m); err == nil {
			t.Errorf("c %v, m %d accepted", bad.c, bad.m)
		}
	}
}

// TestToBeat: when a plan is expected to lose to no change, each hint is
// the edge of what beats it, one change at a time: the hinted LHAs beat
// it and one fewer does not; the hinted budget beats it and one a tenth
// smaller does not; the hinted months beat it and one month more does
// not. A plan that beats no change has no hint.
func TestToBeat(t *testing.T) {
	tab, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	beats := func(r Request) bool {
		p, err := tab.Make(r)
		if err != nil {
			t.Fatal(err)
		}
		return p.Expected < 1
	}
	for _, r := range []Request{
		{LHAs: 40, Epsilon: 2, Delta: 1e-5, Months: 12},
		{LHAs: 40, Epsilon: 1, Delta: 1e-5, Months: 24},
		{LHAs: 2, Epsilon: 2, Delta: 1e-5, Months: 12},
		{LHAs: 20, Epsilon: 0.5, Delta: 1e-6, Months: 6},
		{LHAs: 400, Epsilon: 2, Delta: 1e-5, Months: 12},
	} {
		p, err := tab.Make(r)
		if err != nil {
			t.Fatal(err)
		}
		if p.Expected < 1 {
			if p.ToBeat != nil {
				t.Errorf("%+v beats no change (%.3f) and has a hint %+v", r, p.Expected, p.ToBeat)
			}
			continue
		}
		tb := p.ToBeat
		if tb == nil || tb.LHAs == 0 {
			t.Fatalf("%+v: expected %.3f, hint %+v: want at least a number of LHAs", r, p.Expected, tb)
		}
		x := r
		if x.LHAs = tb.LHAs; !beats(x) {
			t.Errorf("%+v: %d LHAs do not beat no change", r, tb.LHAs)
		}
		if x.LHAs = tb.LHAs - 1; beats(x) {
			t.Errorf("%+v: %d LHAs beat no change too", r, tb.LHAs-1)
		}
		if tb.Epsilon > 0 {
			x = r
			if x.Epsilon = tb.Epsilon; !beats(x) || tb.Epsilon <= r.Epsilon {
				t.Errorf("%+v: ε = %v does not beat no change", r, tb.Epsilon)
			}
			if x.Epsilon = tb.Epsilon / 1.12; beats(x) {
				t.Errorf("%+v: ε = %v, below the hint %v, beats no change too", r, x.Epsilon, tb.Epsilon)
			}
		}
		if tb.Months > 0 {
			x = r
			if x.Months = float64(tb.Months); !beats(x) || x.Months >= r.Months {
				t.Errorf("%+v: %d months do not beat no change", r, tb.Months)
			}
			if x.Months = float64(tb.Months + 1); x.Months < r.Months && beats(x) {
				t.Errorf("%+v: %v months beat no change too", r, x.Months)
			}
		}
		if w := strings.Join(p.Warnings, " "); !strings.Contains(w, "it is expected to beat it with") {
			t.Errorf("%+v: warnings %q do not say what would beat no change", r, w)
		}
	}
}

// TestAssessToBeat: at a study's own schedule with every LHA in every
// round, the hint is the fewest LHAs whose noise per LHA c/N the table
// expects to beat no change; with fewer LHAs per round than enrolled
// there is no hint (c would change with them).
func TestAssessToBeat(t *testing.T) {
	tab, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	const c = 17.3 // 13 campaigns of 5 rounds at ε = 2, q = 1
	p, err := tab.Assess(Request{LHAs: 40, Epsilon: 2, Delta: 1e-5}, 28, c, 40)
	if err != nil {
		t.Fatal(err)
	}
	if p.Expected < 1 || p.ToBeat == nil || p.ToBeat.LHAs <= 40 {
		t.Fatalf("40 LHAs at c = %v: expected %.3f, hint %+v", c, p.Expected, p.ToBeat)
	}
	n := p.ToBeat.LHAs
	if tab.at(28, c/float64(n)).Expected >= 1 || tab.at(28, c/float64(n-1)).Expected < 1 {
		t.Errorf("hint %d LHAs is not the edge: %.3f with %d, %.3f with %d", n, tab.at(28, c/float64(n)).Expected, n, tab.at(28, c/float64(n-1)).Expected, n-1)
	}
	if w := strings.Join(p.Warnings, " "); !strings.Contains(w, fmt.Sprintf("with %d LHAs or more, or with a larger budget or fewer campaigns", n)) {
		t.Errorf("warnings %q", w)
	}
	if p, err := tab.Assess(Request{LHAs: 400, Epsilon: 2, Delta: 1e-5}, 28, c, 40); err != nil || p.Expected < 1 || p.ToBeat != nil {
		t.Errorf("40 of 400 LHAs per round: expected %.3f, hint %+v (%v), want none", p.Expected, p.ToBeat, err)
	}
}
