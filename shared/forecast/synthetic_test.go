package forecast

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// tuneScenarios are the synthetic outbreaks the constants are tuned on:
// the default wave, a sharp early turn, fast growth, and no intervention.
var tuneScenarios = []synth.Options{
	{},
	{InterventionDay: 35, InterventionEffect: 0.55, InterventionRamp: 4},
	{R0: 1.8, InterventionDay: 50, InterventionEffect: 0.6},
	{NoIntervention: true, R0: 1.2},
}

type tuneScore struct {
	cov50, cov95, relWIS float64
	n                    int
}

// scoreSynthetic scores c with persistence on rolling origins over
// November and early December of each scenario and seed.
func scoreSynthetic(t testing.TB, c Calibrator, opts []synth.Options, seeds []uint64) []tuneScore {
	var out []tuneScore
	for _, o := range opts {
		var in50, in95, n int
		var wis, base float64
		for _, seed := range seeds {
			o.Seed = seed
			d, _, err := synth.Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			first, last := time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 12, 19, 0, 0, 0, 0, time.UTC)
			var ends []time.Time
			for e := first; !e.After(last); e = e.AddDate(0, 0, 1) {
				ends = append(ends, e)
			}
			for _, r := range d.Regions {
				s := Smooth(r, series.Centered)
				pool := Errors(s, 10, 7, Persistence, first.AddDate(0, 0, -c.Lookback), last)
				for _, o := range c.Backtest(s, 10, 7, Persistence, pool, ends) {
					n++
					if Covered(o.Quantiles, 0.5, o.Y) {
						in50++
					}
					if Covered(o.Quantiles, 0.95, o.Y) {
						in95++
					}
					wis += WIS(o.Quantiles, o.Y)
					base += WIS(o.Baseline, o.Y)
				}
			}
		}
		out = append(out, tuneScore{float64(in50) / float64(n), float64(in95) / float64(n), wis / base, n})
	}
	return out
}
