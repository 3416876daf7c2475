package forecast

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A FitCache gives exactly Fit's error model for every date, however the
// date is written (any time of day), and BacktestWith with it gives
// Backtest's origins.
func TestFitCacheEqualsFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	day0 := time.Date(2022, 3, 1, 0, 0, 0, 0, time.UTC)
	var pool []DatedError
	for i := 0; i < 400; i++ {
		pool = append(pool, DatedError{Target: day0.AddDate(0, 0, rng.IntN(40)), Err: rng.NormFloat64() * 0.3})
	}
	c := DefaultCalibrator()
	cache := c.NewFitCache(pool)
	for k := 0; k < 40; k++ {
		d := day0.AddDate(0, 0, k)
		want := c.Fit(pool, d)
		for _, at := range []time.Time{d, d.Add(13 * time.Hour), d} {
			if got := cache.Fit(at); got != want {
				t.Fatalf("%s: cached %+v, Fit %+v", at, got, want)
			}
		}
	}
	s := Series{Area: "a", Start: day0.AddDate(0, 0, -20), Smoothed: make([]float64, 80)}
	for i := range s.Smoothed {
		s.Smoothed[i] = 50 + 10*rng.Float64()
	}
	point := func(x []float64) float64 { return x[len(x)-1] }
	ends := []time.Time{day0.AddDate(0, 0, 10), day0.AddDate(0, 0, 20), day0.AddDate(0, 0, 30)}
	a, b := c.Backtest(s, 10, 7, point, pool, ends), c.BacktestWith(s, 10, 7, point, cache.Fit, ends)
	if len(a) != 3 || len(a) != len(b) {
		t.Fatalf("%d and %d origins", len(a), len(b))
	}
	for i := range a {
		if a[i].Quantiles != b[i].Quantiles || a[i].Errors != b[i].Errors {
			t.Errorf("origin %d: %+v vs %+v", i, a[i], b[i])
		}
	}
}
