package forecast

import (
	"math"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
)

// WidenPublic adds κ_p·|g| to both sides, or with PublicSide to the side
// g points to only; the median never moves, and no change (or an unknown
// one) widens nothing.
func TestWidenPublic(t *testing.T) {
	m := ErrorModel{Center: 0.05, Scale: 0.3, Tail: 1, N: 4}
	w := math.Hypot(0.3, 0.4) // κ_p = 1, |g| = 0.4
	for _, tc := range []struct {
		name                string
		c                   Calibrator
		g                   float64
		scale, upper, lower float64
	}{
		{"off", Calibrator{}, 0.4, 0.3, 0, 0},
		{"no change", Calibrator{Public: 1}, 0, 0.3, 0, 0},
		{"unknown change", Calibrator{Public: 1}, math.NaN(), 0.3, 0, 0},
		{"both sides, rise", Calibrator{Public: 1}, 0.4, w, 0, 0},
		{"both sides, fall", Calibrator{Public: 1}, -0.4, w, 0, 0},
		{"half, both sides", Calibrator{Public: 0.5}, 0.8, w, 0, 0},
		{"side, rise", Calibrator{Public: 1, PublicSide: true}, 0.4, 0.3, 0.4, 0},
		{"side, fall", Calibrator{Public: 1, PublicSide: true}, -0.4, 0.3, 0, 0.4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.c.WidenPublic(m, tc.g)
			if math.Abs(got.Scale-tc.scale) > 1e-12 || math.Abs(got.Upper-tc.upper) > 1e-12 || math.Abs(got.Lower-tc.lower) > 1e-12 ||
				got.Center != m.Center || got.N != m.N || got.Tail != m.Tail {
				t.Fatalf("got %+v, want scale %v, upper %v, lower %v", got, tc.scale, tc.upper, tc.lower)
			}
			q, q0 := got.Quantiles(100), m.Quantiles(100)
			if !q.Valid() || q.Median() != q0.Median() {
				t.Fatalf("quantiles %v (median %v, before %v)", q, q.Median(), q0.Median())
			}
			// Each side is exactly the symmetric model's with that side's
			// scale.
			up := ErrorModel{Center: m.Center, Scale: math.Hypot(got.Scale, got.Upper), Tail: 1}.Quantiles(100)
			down := ErrorModel{Center: m.Center, Scale: math.Hypot(got.Scale, got.Lower), Tail: 1}.Quantiles(100)
			for i := range q {
				want := up[i]
				if i < 3 {
					want = down[i]
				}
				if math.Abs(q[i]-want) > 1e-9*want {
					t.Errorf("level %v: %v, want %v", Levels[i], q[i], want)
				}
			}
		})
	}
}

// With Calibrator.Public the weekly forecaster widens an area's ranges by
// its state total's last weekly change, read from days up to the origin
// (the national total's where the state's is missing); the median stays
// the model's, and with PublicSide a rise widens only the upper side.
func TestWeeklyForecasterPublicWidening(t *testing.T) {
	des := model.WeeklyDesign
	m := des.Network()
	params := make([]float64, m.NumParams()) // the no-change model
	start, r, _ := weeklyFixture()
	origin := start.AddDate(0, 0, 200)
	// A state total that doubled in the last week (g = ln 2 on the log
	// scale, up to the +1), flat before.
	rising := func(jump time.Time) *series.Region {
		s := &series.Region{Name: "state", Start: start, Cases: make([]float64, 300)}
		for i := range s.Cases {
			s.Cases[i] = 1000
			if !start.AddDate(0, 0, i).Before(jump) {
				s.Cases[i] = 2000
			}
		}
		return s
	}
	flat := rising(start.AddDate(1, 0, 0))
	up := rising(origin.AddDate(0, 0, -6))
	hol := model.NewHolidays("Bayern")
	base := WeeklyForecaster{Design: des, Model: m, Params: params, Calib: WeeklyCalibrator()}
	side := base
	side.Calib.Public, side.Calib.PublicSide = 1, true
	both := base
	both.Calib.Public = 1

	pub := model.Public{National: flat, State: up, Holidays: hol, Population: 1e5}
	q0 := base.Forecast(r, pub, origin)
	qs := side.Forecast(r, pub, origin)
	qb := both.Forecast(r, pub, origin)
	if qs.Median() != q0.Median() || qb.Median() != q0.Median() {
		t.Fatalf("median moved: %v, %v against %v", qs.Median(), qb.Median(), q0.Median())
	}
	for i := range q0 {
		switch {
		case i < 3 && qs[i] != q0[i]:
			t.Errorf("side: level %v moved in a rise: %v → %v", Levels[i], q0[i], qs[i])
		case i > 3 && !(qs[i] > q0[i]):
			t.Errorf("side: level %v not widened in a rise: %v → %v", Levels[i], q0[i], qs[i])
		case i < 3 && !(qb[i] < q0[i]) && q0[i] > 0, i > 3 && !(qb[i] > q0[i]):
			t.Errorf("both: level %v not widened: %v → %v", Levels[i], q0[i], qb[i])
		}
	}
	// A flat state total widens nothing, whatever the national does.
	if q := side.Forecast(r, model.Public{National: up, State: flat, Holidays: hol, Population: 1e5}, origin); q != q0 {
		t.Errorf("flat state, rising nation: %v, want %v", q, q0)
	}
	// Without a state series the national total is read.
	if q := side.Forecast(r, model.Public{National: up, Holidays: hol, Population: 1e5}, origin); q == q0 ||
		q != side.Forecast(r, model.Public{National: up, State: &series.Region{Start: start}, Holidays: hol, Population: 1e5}, origin) {
		t.Errorf("no state series: %v, want the national total's widening", q)
	}
	// A jump in the state total after the origin changes nothing.
	later := model.Public{National: flat, State: rising(origin.AddDate(0, 0, 1)), Holidays: hol, Population: 1e5}
	flatPub := model.Public{National: flat, State: flat, Holidays: hol, Population: 1e5}
	if q, want := side.Forecast(r, later, origin), side.Forecast(r, flatPub, origin); q != want {
		t.Errorf("a rise after the origin changed the forecast: %v, want %v", q, want)
	}
}
