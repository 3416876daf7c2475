package model

import (
	"math"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/series"
)

// waveArea is a fixture with one wave: 10 cases a day on days 0 … 69 from
// 2020-01-01, 100 a day on days 70 … 104 (7-day totals up to 700), 40 a
// day after (7-day totals of 280).
func waveArea() *series.Region {
	return region("A", "2020-01-01", 500, func(i int) float64 {
		switch {
		case i < 70:
			return 10
		case i < 105:
			return 100
		}
		return 40
	})
}

// waveInputs returns the wave inputs (cumulative incidence, area and state
// peak distance) of the window ending on day i of waveArea's series.
func waveInputs(t *testing.T, r *series.Region, pub Public, i int) []float64 {
	t.Helper()
	w := Weekly{Weeks: 2, HistoryWeeks: 52, Stride: 1, CumIncidence: true, PeakDistance: true}
	in := make([]float64, w.Inputs())
	if !w.Input(in, r, pub, r.Date(i)) {
		t.Fatalf("day %d: Input refused a covered window", i)
	}
	return in[len(in)-3:]
}

// The cumulative incidence sums the area's last 26 weeks of cases (as far
// as its series goes) per 100,000; the peak distance compares the last
// 7-day total with the highest of the last 52 weeks, for the area and the
// state total.
func TestWeeklyWaveInputs(t *testing.T) {
	a := waveArea()
	rising := region("S", "2020-03-01", 440, func(i int) float64 { return float64(i) })
	pub := Public{State: rising, Population: 2e5}
	peak, after := math.Log1p(700), math.Log1p(280)
	for _, tc := range []struct {
		day                 int
		cum, area, stateGap float64
	}{
		// Day 139: the series holds 140 days, 70·10 + 35·100 + 35·40 =
		// 5,600 cases, 2,800 per 100,000; the wave peaked at 700 a week.
		{139, math.Log1p(2800) / 10, after - peak, 0},
		// Day 90: the wave's top (7 days of 100), its peak so far.
		{90, math.Log1p(1e5*(70*10+21*100)/2e5) / 10, 0, 0},
		// Day 300: 182 days of 40 (7,280 cases, 3,640 per 100,000); the
		// peak 196 days back still counts.
		{300, math.Log1p(3640) / 10, after - peak, 0},
		// Day 474: the 52 weeks start on day 110, whose 7-day total holds
		// one day of the wave (100 + 6·40 = 340).
		{474, math.Log1p(3640) / 10, after - math.Log1p(340), 0},
		// Day 480: the wave is more than 52 weeks back: at the peak again.
		{480, math.Log1p(3640) / 10, 0, 0},
	} {
		got := waveInputs(t, a, pub, tc.day)
		want := []float64{tc.cum, tc.area, tc.stateGap}
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-12 {
				t.Errorf("day %d: wave input %d = %v, want %v", tc.day, k, got[k], want[k])
			}
		}
	}
	// A state total that fell from its peak: 7-day totals of 7·200 before
	// day 200 of the state's series, 7·50 after.
	falling := region("S", "2020-01-01", 500, func(i int) float64 { return map[bool]float64{true: 200, false: 50}[i < 200] })
	if got := waveInputs(t, a, Public{State: falling}, 300); math.Abs(got[2]-(math.Log1p(350)-math.Log1p(1400))) > 1e-12 || got[0] != 0 {
		t.Errorf("falling state total, no population: %v, want cumulative incidence 0 and state gap ℓ(350) − ℓ(1400)", got)
	}
	// No state total, or one that does not reach the origin: 0.
	short := region("S", "2020-01-01", 200, func(int) float64 { return 5 })
	for _, st := range []*series.Region{nil, short} {
		if got := waveInputs(t, a, Public{State: st}, 300); got[2] != 0 {
			t.Errorf("state gap %v without a state total at the origin, want 0", got[2])
		}
	}
	// The new inputs come after the current ones, which do not move.
	base := Weekly{Weeks: 2, Totals: true, Holidays: true, HistoryWeeks: 52, Stride: 1}
	both := base
	both.CumIncidence, both.PeakDistance = true, true
	if both.Inputs() != base.Inputs()+3 {
		t.Fatalf("%d inputs with both wave inputs, want %d", both.Inputs(), base.Inputs()+3)
	}
	checkAppended(t, "the wave inputs", base, both, a, pub, 300)
}

// checkAppended checks that the inputs more adds to base come after
// base's, which keep their values, on the window ending on day i of a.
func checkAppended(t *testing.T, what string, base, more Weekly, a *series.Region, pub Public, i int) {
	t.Helper()
	x0, x1 := make([]float64, base.Inputs()), make([]float64, more.Inputs())
	base.Input(x0, a, pub, a.Date(i))
	more.Input(x1, a, pub, a.Date(i))
	if !slices.Equal(x0, x1[:len(x0)]) {
		t.Errorf("%s moved the other inputs: %v, then %v", what, x0, x1)
	}
}

// spiked returns a copy of r with 100,000 cases added on days from … to.
func spiked(r *series.Region, from, to int) *series.Region {
	c := &series.Region{Name: r.Name, Start: r.Start, Cases: slices.Clone(r.Cases)}
	for i := from; i <= to && i < len(c.Cases); i++ {
		c.Cases[i] += 1e5
	}
	return c
}

// No look-ahead: a spike after the origin, in the area or in the state
// total, changes no wave input; a spike on the origin changes them (the
// test can fail); so does one inside the spans, and none before them.
func TestWeeklyWaveNoLookAhead(t *testing.T) {
	const origin = 300
	a := waveArea()
	st := region("S", "2020-01-01", 500, func(i int) float64 { return 30 + float64(i%11) })
	pub := Public{State: st, Population: 2e5}
	want := waveInputs(t, a, pub, origin)
	for _, tc := range []struct {
		name     string
		area, s  *series.Region
		sameArea bool // the area's two inputs unchanged
		sameSt   bool // the state's input unchanged
	}{
		{"area spike after the origin", spiked(a, origin+1, 499), st, true, true},
		{"state spike after the origin", a, spiked(st, origin+1, 499), true, true},
		{"area spike on the origin", spiked(a, origin, origin), st, false, true},
		{"state spike on the origin", a, spiked(st, origin, origin), true, false},
	} {
		p := pub
		p.State = tc.s
		got := waveInputs(t, tc.area, p, origin)
		if (got[0] == want[0] && got[1] == want[1]) != tc.sameArea {
			t.Errorf("%s: area inputs %v, before %v (unchanged: want %v)", tc.name, got[:2], want[:2], tc.sameArea)
		}
		if (got[2] == want[2]) != tc.sameSt {
			t.Errorf("%s: state input %v, before %v (unchanged: want %v)", tc.name, got[2], want[2], tc.sameSt)
		}
	}
	// The spans: a spike 182 days back is outside the 26 weeks of cases
	// but inside the 52 weeks of the peak; one 371 days back (its 7-day
	// totals end by origin−365) is outside both.
	got := waveInputs(t, spiked(a, origin-182, origin-182), pub, origin)
	if got[0] != want[0] || got[1] == want[1] {
		t.Errorf("spike 182 days back: %v, before %v (want the incidence unchanged, the peak moved)", got, want)
	}
	b := waveArea()
	got, want = waveInputs(t, spiked(b, 480-371, 480-371), Public{}, 480), waveInputs(t, b, Public{}, 480)
	if !slices.Equal(got, want) {
		t.Errorf("spike 371 days back: %v, before %v (want no change)", got, want)
	}
}

// No read of another area: the wave inputs of an area come from its own
// series and the public state total only (Input is handed nothing else).
// Another area's counts reach it only through that total: changing them
// moves the state's input and leaves the area's own two as they were.
func TestWeeklyWaveOwnAreaOnly(t *testing.T) {
	a := waveArea()
	total := func(b func(int) float64) *series.Region {
		return region("S", "2020-01-01", 500, func(i int) float64 { return a.Cases[i] + b(i) })
	}
	w := *WeeklyDesign.Weekly
	w.CumIncidence, w.PeakDistance = true, true
	in := func(st *series.Region) []float64 {
		x := make([]float64, w.Inputs())
		if !w.Input(x, a, Public{State: st, Population: 2e5}, a.Date(300)) {
			t.Fatal("Input refused a covered window")
		}
		return x
	}
	before := in(total(func(i int) float64 { return float64(20 + i%5) }))
	after := in(total(func(i int) float64 { return float64(900 + i) }))
	n := len(after)
	if n != WeeklyDesign.Weekly.Inputs()+3 {
		t.Fatalf("%d inputs, want the design's %d and 3", n, WeeklyDesign.Weekly.Inputs())
	}
	if !slices.Equal(before[n-3:n-1], after[n-3:n-1]) {
		t.Errorf("the area's own wave inputs moved with another area's counts: %v, then %v", before[n-3:], after[n-3:])
	}
	if before[n-1] == after[n-1] {
		t.Error("the state total's peak input ignores the state total: the test checks nothing")
	}
}
