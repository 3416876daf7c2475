package model

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

// Weekly.Median: a trend median carries half the last weekly log-change
// on (the area's own, or its state total's, the national's where the
// state has none), the mix is the mean on the log scale with the
// network's, and nothing after the origin is read.
func TestWeeklyMedianRules(t *testing.T) {
	// The area's weekly totals double (7·2^week), the state's triple.
	area := region("A", "2020-03-01", 200, func(i int) float64 { return math.Pow(2, float64(i/7)) })
	state := region("S", "2020-03-01", 200, func(i int) float64 { return 10 * math.Pow(3, float64(i/7)) })
	nat := region("N", "2020-03-01", 200, func(i int) float64 { return 100 })
	pub := Public{National: nat, State: state, Population: 1e5}
	origin := date("2020-03-01").AddDate(0, 0, 7*10-1) // the last day of week 9
	s, _ := Total7(area, origin)
	gOwn := math.Log1p(7*math.Pow(2, 9)) - math.Log1p(7*math.Pow(2, 8))
	gState := math.Log1p(70*math.Pow(3, 9)) - math.Log1p(70*math.Pow(3, 8))
	d := WeeklyDesign.clone()
	m := d.Network()
	params := make([]float64, m.NumParams())
	d.Init(m, params, rand.New(rand.NewPCG(7, 8)))
	params[len(params)-1] = 0.3 // the network forecasts a change of 0.3 (damped to 0.15)
	nn := d.Weekly.PredictTotals(m, params, area, pub, []time.Time{origin}, d.Damping)[0]
	trend := func(g float64) float64 { return math.Expm1(math.Log1p(s) + 0.5*g) }
	for _, tc := range []struct {
		median string
		pub    Public
		want   float64
	}{
		{"", pub, nn},
		{"own-trend", pub, trend(gOwn)},
		{"state-trend", pub, trend(gState)},
		{"state-trend", Public{National: state}, trend(gState)}, // no state series: the national
		{"state-trend", Public{}, s},                            // no public totals: no change
		{"network+state-trend", pub, math.Expm1((math.Log1p(nn) + math.Log1p(trend(gState))) / 2)},
	} {
		w := *d.Weekly
		w.Median = tc.median
		if err := w.Validate(); err != nil {
			t.Fatal(err)
		}
		p := params
		if tc.median != "" && tc.median != "network+state-trend" {
			p = make([]float64, len(params)) // the network does not matter
		}
		got := w.PredictTotals(m, p, area, tc.pub, []time.Time{origin}, d.Damping)[0]
		if math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("median %q: %v, want %v", tc.median, got, tc.want)
		}
		// A jump after the origin in every series changes nothing.
		jump := func(r *series.Region) *series.Region {
			c := *r
			c.Cases = append([]float64(nil), r.Cases...)
			for i := 10 * 7; i < len(c.Cases); i++ {
				c.Cases[i] *= 50
			}
			return &c
		}
		later := tc.pub
		if later.State != nil {
			later.State = jump(later.State)
		}
		if later.National != nil {
			later.National = jump(later.National)
		}
		if again := w.PredictTotals(m, p, jump(area), later, []time.Time{origin}, d.Damping)[0]; again != got {
			t.Errorf("median %q: a jump after the origin moved the forecast %v → %v", tc.median, got, again)
		}
	}
	// Off holidays: with a holiday in either compared week the mix is the
	// network's median and a trend alone no change; a week later, with
	// no holiday in either week, the trend is back.
	for _, tc := range []struct {
		median string
		want   func(nn, s float64) float64
	}{
		{"network+state-trend", func(nn, _ float64) float64 { return nn }},
		{"state-trend", func(_, s float64) float64 { return s }},
	} {
		w := *d.Weekly
		w.Median, w.TrendOffHolidays = tc.median, true
		// 2020-05-01 (Labour Day) lies in the week ending 2020-05-03.
		hol := Public{National: nat, State: state, Holidays: NewHolidays("Bayern"), Population: 1e5}
		for _, o := range []time.Time{date("2020-05-03"), date("2020-05-10")} {
			got := w.PredictTotals(m, params, area, hol, []time.Time{o}, d.Damping)[0]
			nnO := d.Weekly.PredictTotals(m, params, area, hol, []time.Time{o}, d.Damping)[0]
			sO, _ := Total7(area, o)
			if math.Abs(got-tc.want(nnO, sO)) > 1e-9*got {
				t.Errorf("%s off holidays, origin %s: %v, want %v", tc.median, o.Format("2006-01-02"), got, tc.want(nnO, sO))
			}
		}
		o := date("2020-05-17")
		w.TrendOffHolidays = false
		want := w.PredictTotals(m, params, area, hol, []time.Time{o}, d.Damping)[0]
		w.TrendOffHolidays = true
		if got := w.PredictTotals(m, params, area, hol, []time.Time{o}, d.Damping)[0]; got != want {
			t.Errorf("%s off holidays, a week without holidays: %v, want the trend's %v", tc.median, got, want)
		}
	}
	bad := *d.Weekly
	bad.Median = "trend"
	if bad.Validate() == nil {
		t.Error("median \"trend\" accepted")
	}
	bad.Median, bad.Quantiles = "own-trend", "head"
	if bad.Validate() == nil {
		t.Error("a trend median with a quantile head accepted")
	}
}
