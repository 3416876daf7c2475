package session

import (
	"math"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
)

// A weekly study's median rule (model.Weekly.Median) reaches the LHA's
// forecasts: with a growing state total the state-trend median lies
// above the network's no-change median by half the state's last weekly
// change on the log scale.
func TestWeeklyForecastsMedianRule(t *testing.T) {
	st := weeklyStudy()
	d, pub := weeklyData(t)
	params := make([]float64, nn.NewMLP(st.Layers...).NumParams()) // no change
	base, err := WeeklyForecasts(st, d, pub, params)
	if err != nil {
		t.Fatal(err)
	}
	w := *st.Weekly
	w.Median = "state-trend"
	st.Weekly = &w
	trend, err := WeeklyForecasts(st, d, pub, params)
	if err != nil || len(trend) != len(base) {
		t.Fatalf("%v, %v", trend, err)
	}
	// The state total is a + b: the last two 7-day totals of the file.
	week := func(end int) float64 {
		s := 0.0
		for _, r := range d.Regions {
			for _, v := range r.Cases[end-6 : end+1] {
				s += v
			}
		}
		return s
	}
	n := len(d.Regions[0].Cases) - 1
	want := 0.5 * (math.Log1p(week(n)) - math.Log1p(week(n-7)))
	for i := range base {
		up := math.Log1p(7*trend[i].Point) - math.Log1p(7*base[i].Point)
		if want <= 0 || math.Abs(up-want) > 1e-9 {
			t.Errorf("%s: the state trend moved the median by %v on the log scale (%v → %v), want %v", base[i].Area, up, base[i].Point, trend[i].Point, want)
		}
	}
}
