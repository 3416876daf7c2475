package experiment

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
)

// A noise schedule is calibrated per ε, recorded in the result, and its
// exact composition is the ε reported as spent.
func TestRunNoiseSchedule(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs, cfg.Epsilons, cfg.NoiseSchedule = 1, []float64{1, math.Inf(1)}, "linear:0.5"
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Setting.NoiseSchedule != "linear:0.5" {
		t.Errorf("setting records schedule %q", rep.Setting.NoiseSchedule)
	}
	dp := rep.Results[0]
	if len(dp.NoiseSchedule) != 6 || dp.NoiseSchedule[5] != dp.NoiseMultiplier || math.Abs(dp.NoiseSchedule[0]-2*dp.NoiseMultiplier) > 1e-9 {
		t.Fatalf("schedule %v, c %v", dp.NoiseSchedule, dp.NoiseMultiplier)
	}
	want, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, 0.5, dp.NoiseSchedule, 1e-5)
	if float64(dp.EpsilonSpent) != want || !(want <= 1) {
		t.Errorf("spent %v, schedule composes to %v (target 1)", dp.EpsilonSpent, want)
	}
	if rep.Results[1].NoiseSchedule != nil {
		t.Errorf("non-DP result has a schedule %v", rep.Results[1].NoiseSchedule)
	}
}

// Cyclic FL: q = 1 (every area every round), the multiplier is the one of
// T unsampled Gaussian releases per client, and non-DP cyclic learns.
func TestRunCyclic(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs, cfg.Strategy = 1, fl.Cyclic
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Setting.SampleRate != 1 || rep.Setting.ClientsPerRound != 16 {
		t.Errorf("cyclic: q=%v, m=%d; want 1 and every area", rep.Setting.SampleRate, rep.Setting.ClientsPerRound)
	}
	wantC, _ := privacy.NoiseMultiplier(2, 1e-5, 1, 6)
	if c := rep.Results[0].NoiseMultiplier; c != wantC {
		t.Errorf("cyclic ε=2: c=%v, want %v (q = 1)", c, wantC)
	}
	if r2 := rep.Results[1].Metrics.R2.Mean; !(r2 > 0.5) {
		t.Errorf("non-DP cyclic R² %v", r2)
	}
	cfg.Strategy = "ring"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "ring") {
		t.Errorf("unknown strategy: %v", err)
	}
	cfg.Strategy, cfg.NoiseSchedule = fl.FedAvg, "step:9,0.5"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "noise-schedule") {
		t.Errorf("step after the last round: %v", err)
	}
}

// Cyclic FL with local DP-SGD: under privacy "example" the hand-offs carry
// no noise and every area's own accountant spent exactly its budget's
// planned E·T steps; under "both" the hand-offs are noised for the
// client-level ε at q = 1 as well.
func TestRunCyclicExample(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs, cfg.Strategy, cfg.Privacy, cfg.Epsilons = 1, fl.Cyclic, fl.ExampleLevel, []float64{2}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Guarantee != fl.ExampleLevel || !math.IsInf(float64(r.Epsilon), 1) || r.NoiseMultiplier != 0 || r.Example == nil {
		t.Fatalf("cyclic example: %+v", r)
	}
	e := r.Example
	want, _ := privacy.EpsilonFor(privacy.AccountantRDP, []privacy.Event{{SampleRate: e.SampleRate, NoiseMultiplier: e.NoiseMultiplier, Rounds: cfg.Rounds * cfg.LocalEpochs}}, e.Delta)
	if e.Steps != cfg.Rounds*cfg.LocalEpochs || e.LHAs != 16 || float64(e.SpentMax) != want || float64(e.SpentMin) != want || !(want <= 2) {
		t.Errorf("example accounts: steps %d, %d LHAs, spent %v…%v, want %v for every LHA", e.Steps, e.LHAs, e.SpentMin, e.SpentMax, want)
	}
	if m := r.Metrics.MAE.Mean; !(m > 0) || math.IsInf(m, 0) {
		t.Errorf("MAE %v", m)
	}

	cfg.Privacy, cfg.ExampleEpsilon = fl.BothLevels, 3
	rep, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r = rep.Results[0]
	wantC, _ := privacy.NoiseMultiplier(2, 1e-5, 1, cfg.Rounds)
	if r.Guarantee != fl.BothLevels || float64(r.Epsilon) != 2 || r.NoiseMultiplier != wantC || r.Example == nil || r.Example.Epsilon != 3 {
		t.Errorf("cyclic both: %+v, want client ε 2 at c %v (q = 1) and LHA ε 3", r, wantC)
	}
}
