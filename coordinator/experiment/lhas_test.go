package experiment

import (
	"math"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

// TestStudyFileOfRun: for every privacy level, strategy and noise
// schedule, the study file a run is driven with is a valid study file,
// and the coordinator's round setting the engine derives from it (DP, S,
// c and c_t, q, T, E, learning rate, budget) is the one the run's LHAs
// train with: the two sides of the in-process study agree.
func TestStudyFileOfRun(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name     string
		epsilons []float64
		schedule string
		opt      StrategyOptions
	}{
		{"client", []float64{2, inf}, "", StrategyOptions{}},
		{"client, linear schedule", []float64{1}, "linear:0.5", StrategyOptions{}},
		{"example", []float64{3, inf}, "", StrategyOptions{Privacy: fl.ExampleLevel}},
		{"both", []float64{2, inf}, "", StrategyOptions{Privacy: fl.BothLevels, ExampleEpsilon: 4}},
		{"mrmtl", []float64{2}, "", StrategyOptions{Strategy: fl.MRMTL, Lambda: 0.5}},
		{"mrmtl, λ = ∞", []float64{2}, "", StrategyOptions{Strategy: fl.MRMTL, Lambda: fl.JSONFloat(inf)}},
		{"cyclic", []float64{2, inf}, "linear:2", StrategyOptions{Strategy: fl.Cyclic}},
		{"cyclic, example", []float64{3, inf}, "", StrategyOptions{Strategy: fl.Cyclic, Privacy: fl.ExampleLevel}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synthConfig(t)
			cfg.Epsilons, cfg.NoiseSchedule, cfg.StrategyOptions = tc.epsilons, tc.schedule, tc.opt
			sched, err := cfg.check()
			if err != nil {
				t.Fatal(err)
			}
			areas, err := series.MakeWindows(cfg.Data, series.WindowOptions{History: cfg.History, Horizon: cfg.Horizon})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Strategy == fl.Cyclic {
				cfg.ClientsPerRound = len(areas) // as Run: every area takes a turn in every round
			}
			q := float64(cfg.ClientsPerRound) / float64(len(areas))
			st := newSetting(cfg, areas, q)
			results, err := cfg.calibrateAll(&st, sched, q)
			if err != nil {
				t.Fatal(err)
			}
			x := &experiment{cfg: cfg, n: len(areas), results: results, net: nn.NewMLP(st.Model...)}
			rd := &cfg.splitRuns(areas)[0]
			for i := range results {
				res := &results[i]
				f := cfg.studyFile(res, rd.trainNames, 1)
				if err := f.Validate(); err != nil {
					t.Fatalf("ε=%v: the run's study file is not valid: %v", float64(res.Epsilon), err)
				}
				if (f.Strategy == string(fl.Cyclic)) != (cfg.Strategy == fl.Cyclic) {
					t.Fatalf("ε=%v: the run's study file has strategy %q, the run %q", float64(res.Epsilon), f.Strategy, cfg.Strategy)
				}
				l, init, err := x.newRun(job{eps: i}, res, rd)
				if err != nil {
					t.Fatal(err)
				}
				seed := uint64(1)
				e, err := study.OpenResearch(f, init, res.NoiseMultiplier, &seed, runStart)
				if err != nil {
					t.Fatal(err)
				}
				got, want := e.Config, l.cfg
				if got.DP != want.DP || got.SampleRate() != want.SampleRate() || got.Rounds != want.Rounds ||
					got.LocalEpochs != want.LocalEpochs || got.LearningRate != want.LearningRate {
					t.Fatalf("ε=%v: the coordinator runs %+v, the LHAs %+v", float64(res.Epsilon), got, want)
				}
				if want.DP && (got.ClipNorm != want.ClipNorm || got.NoiseMultiplier != want.NoiseMultiplier ||
					!slices.Equal(got.NoiseSchedule, want.NoiseSchedule) || e.Study.Epsilon != float64(res.Epsilon)) {
					t.Fatalf("ε=%v: the coordinator's S, c, schedule, ε %v %v %v %v; the run's %v %v %v %v", float64(res.Epsilon),
						got.ClipNorm, got.NoiseMultiplier, got.NoiseSchedule, e.Study.Epsilon,
						want.ClipNorm, want.NoiseMultiplier, want.NoiseSchedule, float64(res.Epsilon))
				}
				if !want.DP && e.EpsilonSpent() != 0 {
					t.Errorf("ε=%v: a coordinator without noise keeps a client-level ε", float64(res.Epsilon))
				}
				if cfg.Strategy == fl.Cyclic {
					checkCyclicRun(t, e, cfg.studyFile(res, rd.trainNames, 2), init, res.NoiseMultiplier)
				}
				if !slices.Equal(e.Global(), init) {
					t.Errorf("ε=%v: the engine does not start from the run's initial model", float64(res.Epsilon))
				}
			}
		})
	}
}

// checkCyclicRun: the engine of a cyclic run (study file of run seed 1)
// has T·N turns whose order is the live rule's, fl.CyclicOrder of its
// study file's hash, and the study of another run (other, run seed 2) has
// an order of its own.
func checkCyclicRun(t *testing.T, e *study.Engine, other *study.File, init []float64, c float64) {
	t.Helper()
	n := len(e.File.LHAs)
	if e.Turns() != e.File.Rounds*n {
		t.Fatalf("a cyclic run has %d turns, want T·N = %d", e.Turns(), e.File.Rounds*n)
	}
	seed := uint64(1)
	o, err := study.OpenResearch(other, init, c, &seed, runStart)
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for k := 1; k <= n; k++ {
		_, _, lha, _ := e.Turn(k)
		_, _, lha2, _ := o.Turn(k)
		if want := fl.CyclicOrder(e.Study.CyclicSeed, 1, n)[k-1]; lha != want {
			t.Fatalf("turn %d goes to LHA %d, the public order of the study file's hash to %d", k, lha, want)
		}
		same = same && lha == lha2
	}
	if same || e.Study.CyclicSeed == o.Study.CyclicSeed {
		t.Error("two runs of a cyclic experiment have the same turn order")
	}
}
