package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func synthConfig(t *testing.T) Config {
	t.Helper()
	d, areas, err := synth.Generate(synth.Options{Areas: 16, Days: 70, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	pop := map[string]float64{}
	for _, a := range areas {
		pop[a.ID] = a.Population
	}
	return Config{
		Data: d, Populations: pop, Epsilons: []float64{2, math.Inf(1)}, Runs: 3, Rounds: 6,
		ClientsPerRound: 8, LocalEpochs: 4, Hidden: []int{16, 8}, Seed: 7, EvalEvery: 2,
	}
}

func TestRunReport(t *testing.T) {
	cfg := synthConfig(t)
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	dp, non := rep.Results[0], rep.Results[1]
	q := 8.0 / 16
	wantC, err := privacy.NoiseMultiplier(2, 1e-5, q, 6)
	if err != nil {
		t.Fatal(err)
	}
	if dp.NoiseMultiplier != wantC || float64(dp.EpsilonSpent) > 2 {
		t.Errorf("ε=2: c=%v (want %v), spent %v", dp.NoiseMultiplier, wantC, dp.EpsilonSpent)
	}
	if non.NoiseMultiplier != 0 || !math.IsInf(float64(non.Epsilon), 1) {
		t.Errorf("non-DP result: %+v", non)
	}
	for _, r := range rep.Results {
		if r.Runs != 3 || len(r.PerRun) != 3 {
			t.Errorf("ε=%v: %d runs recorded", r.Epsilon, len(r.PerRun))
		}
		if got := len(r.Convergence); got != 3 || r.Convergence[0].Round != 2 || r.Convergence[2].Round != 6 {
			t.Errorf("convergence points: %+v", r.Convergence)
		}
		areas := 0
		for _, s := range r.ByPopulation {
			areas += s.Areas
		}
		if areas != 16 {
			t.Errorf("strata cover %d areas, want 16", areas)
		}
		if len(r.PairsTrue) != r.TestWindows || r.TestWindows == 0 {
			t.Errorf("pairs %d, test windows %d", len(r.PairsTrue), r.TestWindows)
		}
	}
	// Runs differ (different seeds) but summaries are their mean.
	var sum float64
	for _, r := range non.PerRun {
		sum += r.MAE
	}
	if math.Abs(sum/3-non.Metrics.MAE.Mean) > 1e-9 || non.Metrics.MAE.SD == 0 {
		t.Errorf("MAE summary %+v from runs %+v", non.Metrics.MAE, non.PerRun)
	}

	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Config  map[string]any   `json:"config"`
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seed", "runs", "rounds", "clients_per_round", "local_epochs", "clip", "delta", "split", "from", "to", "epsilons"} {
		if _, ok := v.Config[k]; !ok {
			t.Errorf("config lacks %q: %s", k, buf.String()[:300])
		}
	}
	if v.Results[1]["epsilon"] != "inf" || v.Results[0]["epsilon"] != 2.0 {
		t.Errorf("epsilon fields: %v, %v", v.Results[0]["epsilon"], v.Results[1]["epsilon"])
	}
	for _, k := range []string{"noise_multiplier", "runs", "metrics", "zero_targets_dropped", "by_population", "convergence"} {
		if _, ok := v.Results[0][k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	m := v.Results[0]["metrics"].(map[string]any)
	for _, k := range []string{"mse", "mae", "mape", "mdape", "r2"} {
		if s, ok := m[k].(map[string]any); !ok || s["mean"] == nil {
			t.Errorf("metrics.%s = %v", k, m[k])
		}
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "inf") || !strings.Contains(table.String(), "±") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestRunIndependentOfWorkers(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs, cfg.Rounds = 2, 3
	cfg.Split = series.Random
	cfg.Workers = 1
	a, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 3 workers: runs in parallel, helpers only at the tail; 16: more slots
	// than runs, so every run trains its clients on helpers from the start.
	for _, w := range []int{3, 16} {
		cfg.Workers = w
		b, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Results {
			for r := range a.Results[i].PerRun {
				if a.Results[i].PerRun[r] != b.Results[i].PerRun[r] {
					t.Errorf("ε %v run %d: %+v with 1 worker, %+v with %d", a.Results[i].Epsilon, r, a.Results[i].PerRun[r], b.Results[i].PerRun[r], w)
				}
			}
			if !reflect.DeepEqual(a.Results[i].Convergence, b.Results[i].Convergence) {
				t.Errorf("ε %v: convergence differs between 1 and %d workers", a.Results[i].Epsilon, w)
			}
		}
	}
}

func TestFigures(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs, cfg.Rounds = 2, 4
	cfg.Epsilons = []float64{1, 2, math.Inf(1)}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := rep.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"report.json", "scatter_eps_1.png", "scatter_eps_2.svg", "scatter_eps_inf.png", "mape_boxplot.png",
		"privacy_utility_mae.png", "privacy_utility_mape.svg", "convergence.png"}
	for _, w := range want {
		st, err := os.Stat(filepath.Join(dir, w))
		if err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v (files: %v)", w, err, files)
		}
	}
}

// TestRealDataSmoke runs a tiny study on the real county data to check the
// wiring (400 areas, 14 windows each) end to end; accuracy runs are
// `fedcast simulate` (docs/results.md), not tests.
func TestRealDataSmoke(t *testing.T) {
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
	rep, err := Run(context.Background(), Config{
		Data: d, Populations: pop, From: day("2020-11-01"), To: day("2020-12-01"),
		Epsilons: []float64{math.Inf(1)}, Rounds: 2, LocalEpochs: 2, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Setting
	if s.Areas != 400 || s.WindowsPerArea != [2]int{14, 14} || s.SampleRate != 0.25 {
		t.Errorf("areas %d, windows %v, q %v", s.Areas, s.WindowsPerArea, s.SampleRate)
	}
	if r := rep.Results[0]; r.TestWindows != 800 {
		t.Errorf("test windows %d, want 400 × 2", r.TestWindows)
	}
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestMarkdownFromJSON(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs, cfg.Rounds = 2, 2
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	f, _ := os.Create(path)
	if err := rep.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	back, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Results[0].Metrics != rep.Results[0].Metrics || !math.IsInf(float64(back.Results[1].Epsilon), 1) || back.Setting.Areas != 16 {
		t.Errorf("JSON round trip lost results: %+v", back.Results[0].Metrics)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, []string{"r.json"}, []*Report{back}); err != nil {
		t.Fatal(err)
	}
	want := pm(rep.Results[1].Metrics.MAE.Mean, rep.Results[1].Metrics.MAE.SD, 2)
	if !strings.Contains(md.String(), "| inf | – | – |") || !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks the non-DP row with MAE %s:\n%s", want, md.String())
	}
	// A paper row appears for the paper's study windows.
	back.Setting.From = "2020-11-01"
	md.Reset()
	WriteMarkdown(&md, []string{"r.json"}, []*Report{back})
	if !strings.Contains(md.String(), "8.52 ± 0.11") || !strings.Contains(md.String(), "9.37 ± 1.37") {
		t.Errorf("paper reference missing:\n%s", md.String())
	}
}
