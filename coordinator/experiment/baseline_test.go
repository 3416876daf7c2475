package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
)

// The baseline is persistence on each run's own test windows, and the
// relative errors are the per-run ratios, summarised.
func TestBaselineAndRelativeErrors(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Split = series.Random // the test set changes per run
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := rep.Baseline
	if b == nil || b.Name != "persistence" || len(b.PerRun) != cfg.Runs {
		t.Fatalf("baseline = %+v", b)
	}
	// Recompute run 1's baseline independently from its split.
	areas, err := series.MakeWindows(cfg.Data, series.WindowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rd := recomputeSplit(t, cfg, areas, 0)
	var y, p []float64
	for _, a := range rd {
		for _, w := range a.Windows {
			y, p = append(y, w.Y), append(p, w.X[len(w.X)-1])
		}
	}
	want := metrics.Compute(y, p)
	if math.Abs(b.PerRun[0].MAE-want.MAE) > 1e-12 || math.Abs(b.PerRun[0].R2-want.R2) > 1e-12 {
		t.Errorf("run 1 baseline MAE %v R² %v, want %v %v", b.PerRun[0].MAE, b.PerRun[0].R2, want.MAE, want.R2)
	}
	if b.PerRun[0].MAE == b.PerRun[1].MAE {
		t.Error("random split: the baseline should differ between runs")
	}
	for _, r := range rep.Results {
		var ratios []float64
		for k, pr := range r.PerRun {
			ratios = append(ratios, pr.MAE/b.PerRun[k].MAE)
		}
		s := metrics.Summarize(ratios)
		if r.RelativeMAE == nil || math.Abs(r.RelativeMAE.Mean-s.Mean) > 1e-12 || math.Abs(r.RelativeMAE.SD-s.SD) > 1e-12 {
			t.Errorf("ε=%v: relative MAE %+v, want %+v", r.Epsilon, r.RelativeMAE, s)
		}
		if r.RelativeMAPE == nil || !(r.RelativeMAPE.Mean > 0) {
			t.Errorf("ε=%v: relative MAPE %+v", r.Epsilon, r.RelativeMAPE)
		}
	}
	// The JSON carries exactly the fields.
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Baseline struct {
			Name    string `json:"name"`
			Metrics map[string]struct {
				Mean *float64 `json:"mean"`
				SD   *float64 `json:"sd"`
			} `json:"metrics"`
		} `json:"baseline"`
		Results []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Baseline.Name != "persistence" {
		t.Errorf("baseline name %q", raw.Baseline.Name)
	}
	for _, k := range []string{"mae", "mape", "r2"} {
		if m, ok := raw.Baseline.Metrics[k]; !ok || m.Mean == nil || m.SD == nil {
			t.Errorf("baseline.metrics.%s missing or without mean/sd", k)
		}
	}
	for _, k := range []string{"relative_mae", "relative_mape", "metrics"} {
		if _, ok := raw.Results[0][k]; !ok {
			t.Errorf("results[0].%s missing", k)
		}
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "persistence") || !strings.Contains(table.String(), ratio(rep.Results[0].RelativeMAE)) {
		t.Errorf("table lacks the baseline or the relative MAE:\n%s", table.String())
	}
}

// recomputeSplit returns the test areas of run `run`, as Run splits them.
func recomputeSplit(t *testing.T, cfg Config, areas []series.Area, run int) []series.Area {
	t.Helper()
	_, test := series.SplitAreas(areas, cfg.Split, trainFraction, fl.NewRand(fl.RunSeed(cfg.Seed, run), fl.StreamSplit))
	return test
}

// An anchored design that is (almost) not trained — one round, one local
// step of a negligible learning rate — forecasts persistence from the
// random start (RandomInit) and the pretrained model's forecast from the
// default start, which beats persistence on this synthetic wave; and the
// default design beats persistence on it without privacy.
func TestAnchoredDesign(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Features, cfg.Hidden = model.LogChange, []int{}
	cfg.Epsilons = []float64{math.Inf(1)}
	cfg.Runs, cfg.Rounds, cfg.LocalEpochs, cfg.LearningRate = 1, 1, 1, 1e-12
	cfg.RandomInit = true
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Results[0].RelativeMAE.Mean; math.Abs(got-1) > 1e-6 {
		t.Errorf("untrained anchored model: relative MAE %v, want 1 (it is persistence)", got)
	}
	cfg.RandomInit = false
	if rep, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if got := rep.Results[0].RelativeMAE.Mean; !(got < 0.9) {
		t.Errorf("untrained model from the pretrained start: relative MAE %v, want below 0.9", got)
	}
	cfg = synthConfig(t)
	cfg.Features, cfg.Hidden = model.LogChange, []int{16}
	cfg.Epsilons = []float64{math.Inf(1)}
	cfg.ClientsPerRound, cfg.Rounds, cfg.LearningRate, cfg.LocalEpochs = 16, 10, 0.01, 30
	rep, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Results[0].RelativeMAE.Mean; !(got < 1) {
		t.Errorf("default design without noise: relative MAE %v, want < 1 on a synthetic wave", got)
	}
}

// WriteComparison groups by window and split, lists each design's rows,
// borrows the baseline for a report written before it existed, and
// refuses a report it cannot relate to any baseline.
func TestWriteComparison(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs, cfg.Rounds = 2, 2
	cfg.Preset = "paper"
	paper, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Features, cfg.Hidden, cfg.Preset = model.LogChange, []int{4}, "default"
	def, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantRel := ratio(paper.Results[0].RelativeMAE)
	old := *paper
	old.Baseline = nil
	old.Results = append([]Result(nil), paper.Results...)
	for i := range old.Results {
		old.Results[i].RelativeMAE, old.Results[i].RelativeMAPE = nil, nil
	}
	var md bytes.Buffer
	if err := WriteComparison(&md, []string{"old.json", "def.json"}, []*Report{&old, def}, nil); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"| paper |", "| default |", "| T | lr |", "no change (persistence)", wantRel, "relative errors use the per-run baseline of `def.json`"} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	// Two files of one design that differ only in ε form one block; a
	// design that differs in the learning rate alone gets its own rows.
	more := *def
	more.Results = append([]Result(nil), def.Results...)
	for i := range more.Results {
		more.Results[i].Epsilon += 10
	}
	slow := *def
	slow.Setting.LearningRate = def.Setting.LearningRate / 10
	md.Reset()
	if err := WriteComparison(&md, []string{"def.json", "slow.json", "more.json"}, []*Report{def, &slow, &more}, nil); err != nil {
		t.Fatal(err)
	}
	var lrs []string
	for _, line := range strings.Split(md.String(), "\n") {
		if f := strings.Split(line, " | "); len(f) > 4 && strings.HasPrefix(line, "| default |") {
			lrs = append(lrs, f[3])
		}
	}
	n := len(def.Results)
	if len(lrs) != 3*n || lrs[2*n-1] != lrs[0] || lrs[2*n] == lrs[0] {
		t.Errorf("rows by design: learning rates %v, want %d rows of one design, then %d of the other", lrs, 2*n, n)
	}
	if err := WriteComparison(&md, []string{"old.json"}, []*Report{&old}, nil); err == nil {
		t.Error("a report without any baseline was accepted")
	}
	md.Reset()
	if err := WriteComparison(&md, []string{"old.json", "def.json"}, []*Report{&old, def}, []float64{math.Inf(1)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "| 2 | rdp |") || !strings.Contains(md.String(), "| inf | rdp |") {
		t.Errorf("--epsilon inf kept other rows or lost the non-DP one:\n%s", md.String())
	}
}

// The averager releases the mean of the global models after the last k
// rounds, and the last model when k ≤ 1.
func TestAverager(t *testing.T) {
	a := newAverager(2, 4)
	for r := 1; r <= 4; r++ {
		g := []float64{float64(r), 10 * float64(r)}
		a.add(r, g)
		got := a.current(g)
		switch r {
		case 1, 2:
			if got[0] != float64(r) {
				t.Errorf("round %d: %v, want the model itself", r, got)
			}
		case 3:
			if got[0] != 3 || got[1] != 30 {
				t.Errorf("round 3: %v, want [3 30]", got)
			}
		case 4:
			if got[0] != 3.5 || got[1] != 35 {
				t.Errorf("round 4: %v, want the mean of rounds 3 and 4, [3.5 35]", got)
			}
		}
	}
	none := newAverager(0, 4)
	none.add(4, []float64{7})
	if got := none.current([]float64{7}); got[0] != 7 {
		t.Errorf("no averaging: %v", got)
	}
}
