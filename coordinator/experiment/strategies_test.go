package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
)

// TestExampleLevelReport: under --privacy example the grid's ε is each
// LHA's, the coordinator adds no noise, every LHA's own accountant stays
// within its budget, and the JSON says so.
func TestExampleLevelReport(t *testing.T) {
	cfg := synthConfig(t)
	cfg.Runs = 2
	cfg.StrategyOptions = StrategyOptions{Strategy: fl.MRMTL, Lambda: 1, Privacy: fl.ExampleLevel}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{2, math.Inf(1)} {
		r := rep.Results[i]
		if r.Guarantee != fl.ExampleLevel || r.Strategy != fl.MRMTL || r.Lambda != 1 {
			t.Errorf("result %d labelled %q %q λ=%v", i, r.Guarantee, r.Strategy, r.Lambda)
		}
		if !math.IsInf(float64(r.Epsilon), 1) || r.NoiseMultiplier != 0 {
			t.Errorf("result %d: client-level ε %v, c %v; the coordinator must add no noise", i, r.Epsilon, r.NoiseMultiplier)
		}
		e := r.Example
		if e == nil || e.Epsilon != want || e.Steps != cfg.Rounds*cfg.LocalEpochs || e.LHAs == 0 {
			t.Fatalf("result %d: example setting %+v", i, e)
		}
		if math.IsInf(want, 1) {
			if e.NoiseMultiplier != 0 || !math.IsInf(float64(e.SpentMax), 1) {
				t.Errorf("ε = inf: c = %v, spent %v", e.NoiseMultiplier, e.SpentMax)
			}
		} else {
			central, _ := privacy.Epsilon(e.SampleRate, e.NoiseMultiplier, e.Steps, e.Delta)
			// Clients are sampled (m < N): an LHA spends its budget only in
			// the rounds it trains in, never more than the calibration.
			if !(float64(e.SpentMax) <= want) || !(float64(e.SpentMax) <= central) || !(e.SpentMin > 0) {
				t.Errorf("ε=%v: spent per LHA %v … %v, calibrated for %v", want, e.SpentMin, e.SpentMax, central)
			}
		}
		if r.Personal == nil || len(r.Personal.PerRun) != 2 {
			t.Errorf("result %d: no personalised accuracy", i)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"guarantee": "example"`, `"strategy": "mrmtl"`, `"spent_per_lha_max"`, `"privacy": "example"`, `"example_rate": 0.5`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Results[0].Example == nil || back.Results[0].Example.Epsilon != 2 || back.Results[0].Example.SpentMax != rep.Results[0].Example.SpentMax {
		t.Errorf("JSON round trip lost the example-level result: %+v", back.Results[0].Example)
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "Strategy mrmtl (λ = 1), privacy example") {
		t.Errorf("table lacks the strategy line:\n%s", table.String())
	}
}

// TestPersonalisedEnds: MR-MTL with λ = inf forecasts with the global
// model (personal = global, FedAvg's numbers); with λ = 0 the personal
// models differ from it.
func TestPersonalisedEnds(t *testing.T) {
	base := synthConfig(t)
	base.Runs, base.Epsilons = 1, []float64{math.Inf(1)}
	fed, err := Run(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{math.Inf(1), 0} {
		cfg := base
		cfg.StrategyOptions = StrategyOptions{Strategy: fl.MRMTL, Lambda: fl.JSONFloat(lambda)}
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		same := r.Personal.Metrics.MAE.Mean == r.Metrics.MAE.Mean
		if math.IsInf(lambda, 1) {
			if !same || r.Metrics.MAE.Mean != fed.Results[0].Metrics.MAE.Mean {
				t.Errorf("λ = inf: personal MAE %v, global %v, FedAvg %v", r.Personal.Metrics.MAE.Mean, r.Metrics.MAE.Mean, fed.Results[0].Metrics.MAE.Mean)
			}
		} else if same {
			t.Errorf("λ = 0: personal MAE equals the global model's (%v)", r.Metrics.MAE.Mean)
		}
	}
	if p := fed.Results[0].Personal; p == nil || p.Metrics.MAE.Mean != fed.Results[0].Metrics.MAE.Mean {
		t.Error("FedAvg's personalised accuracy must be the global model's")
	}
}

func TestStrategyOptionsChecked(t *testing.T) {
	for _, o := range []StrategyOptions{
		{Strategy: "ditto"},
		{Strategy: fl.Cyclic, Privacy: fl.BothLevels}, // no example-level ε
		{Privacy: "node"},
		{Strategy: fl.MRMTL, Lambda: -1},
		{Privacy: fl.BothLevels}, // no example-level ε
	} {
		cfg := synthConfig(t)
		cfg.StrategyOptions = o
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestEmbargo: with the embargo no training window's target comes after
// its area's first test origin, and windows before it are kept.
func TestEmbargo(t *testing.T) {
	cfg := synthConfig(t)
	areas, err := series.MakeWindows(cfg.Data, series.WindowOptions{History: 10, Horizon: 7})
	if err != nil {
		t.Fatal(err)
	}
	train, test := series.SplitAreas(areas, series.Temporal, 0.9, nil)
	kept := embargo(train, test)
	for i := range kept {
		origin := test[i].Windows[0].InputEnd
		if len(kept[i].Windows) == 0 || len(kept[i].Windows) >= len(train[i].Windows) {
			t.Fatalf("area %d: %d of %d training windows kept", i, len(kept[i].Windows), len(train[i].Windows))
		}
		for _, w := range kept[i].Windows {
			if w.Target.After(origin) {
				t.Errorf("area %d: target %s after the test origin %s", i, w.Target, origin)
			}
		}
		if n := len(train[i].Windows) - len(kept[i].Windows); n != 6 {
			t.Errorf("area %d: %d windows dropped, want P−1 = 6", i, n)
		}
	}
}
