package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
)

// TestDefaultDesignRealMonths is the check of the default design on the
// real study months, which it was NOT tuned on (TestTuneDesign, synthetic
// outbreaks only, chose it): temporal split, 5 runs, seed 1, ε = 1 and 2,
// the settings of `fedcast simulate` with no flags, and the same with
// --embargo (no training window whose target comes after the area's first
// forecast date: what a live LHA forecasting that day would have).
//
// It asserts what the design delivers: never worse than the free
// no-change forecast (mean relative MAE ≤ 1) on both months, at both ε,
// with and without the embargo, and on the plain temporal split 95 %
// ranges that hold between 85 % and 99 % of the time with a relative WIS
// below the hub-style baseline's, and at ε = 1 50 % ranges that hold
// between 40 % and 60 % of the time (issue 9's targets). It logs the rest
// (the relative-WIS target of 0.9, the coverage with the embargo), whose
// misses docs/results.md reports. The runs are seeded, so the figures are
// the same on every machine. Measured once with the fourth round's
// default (learning rate 0.001, ranges centred on the forecast): relative
// MAE November 2020 0.979 and 0.983, March 2022 0.753 and 0.770 at ε = 1
// and 2, with the embargo 0.978, 0.983, 0.868, 0.895; at ε = 1 coverage
// 50 % 0.516 and 0.405 (March's margin is thin: 324 of 800), 95 % 0.935
// and 0.950, relative WIS 0.967 and 0.723.
func TestDefaultDesignRealMonths(t *testing.T) {
	dir := testkit.DataDir(t)
	d, err := series.ReadFile(filepath.Join(dir, "county_cases_daily.csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "counties.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pop, err := series.ParsePopulations(f, "counties.csv")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	des := model.Default
	for _, embargo := range []bool{false, true} {
		for _, m := range []struct{ from, to string }{{"2020-11-01", "2020-12-01"}, {"2022-03-01", "2022-04-01"}} {
			rep, err := Run(context.Background(), Config{
				Data: d, Populations: pop, From: day(m.from), To: day(m.to), Epsilons: []float64{1, 2}, Runs: 5, Seed: 1,
				History: des.History, Rounds: des.Rounds, ClientsPerRound: des.ExpectedClients(400), LocalEpochs: des.LocalEpochs, Clip: des.Clip,
				LearningRate: des.LearningRate, Hidden: des.Hidden, Features: des.Features, Damping: des.Damping, Preset: des.Name,
				StrategyOptions: StrategyOptions{Embargo: embargo},
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Setting.Areas != 400 || rep.Setting.SampleRate != 1 {
				t.Fatalf("%s: %d areas, q = %v", m.from, rep.Setting.Areas, rep.Setting.SampleRate)
			}
			for _, r := range rep.Results {
				det := r.Intervals
				name := fmt.Sprintf("%s ε=%v embargo=%v", m.from, r.Epsilon, embargo)
				t.Logf("%s: relative MAE %.3f ± %.3f; coverage 50 %% %.3f (%d/%d), 95 %% %.3f (%d/%d); relative WIS %.3f ± %.3f",
					name, r.RelativeMAE.Mean, r.RelativeMAE.SD,
					r.Coverage50.Mean, det.Coverage50Pooled.Covered, det.Coverage50Pooled.N,
					r.Coverage95.Mean, det.Coverage95Pooled.Covered, det.Coverage95Pooled.N,
					r.RelativeWIS.Mean, r.RelativeWIS.SD)
				if r.RelativeMAE.Mean > 1 {
					t.Errorf("%s: relative MAE %.3f: worse than no change", name, r.RelativeMAE.Mean)
				}
				if embargo {
					continue
				}
				if c := r.Coverage95.Mean; c < 0.85 || c > 0.99 {
					t.Errorf("%s: 95 %% coverage %.3f outside [0.85, 0.99]", name, c)
				}
				if r.RelativeWIS.Mean >= 1 {
					t.Errorf("%s: relative WIS %.3f: not better than the hub-style baseline", name, r.RelativeWIS.Mean)
				}
				if c := r.Coverage50.Mean; r.Epsilon == 1 && (c < 0.40 || c > 0.60) {
					t.Errorf("%s: 50 %% coverage %.3f outside [0.40, 0.60]", name, c)
				}
			}
		}
	}
}
