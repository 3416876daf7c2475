package session

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func TestEvaluate(t *testing.T) {
	d, _, err := synth.Generate(synth.Options{Areas: 3, Days: 90, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.8, Layers: []int{10, 1}}
	// The model that copies the last input value is the no-change forecast
	// itself: its test errors must equal the baseline's exactly.
	copyLast := make([]float64, 11)
	copyLast[9] = 1
	ev, err := Evaluate(st, d, copyLast, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Forecasts) != 3 || ev.Recent.N == 0 || strings.Count(ev.Hub, "\n") != 1+3*7 {
		t.Fatalf("%d forecasts, coverage %+v, hub %.60q", len(ev.Forecasts), ev.Recent, ev.Hub)
	}
	if ev.Model == nil || ev.Baseline == nil || ev.Model.N == 0 || ev.Model.MAE != ev.Baseline.MAE || ev.Model.N != ev.Baseline.N {
		t.Fatalf("copying model %+v vs no change %+v: want equal", ev.Model, ev.Baseline)
	}
	// The test days are the windows training leaves out: all areas' latest
	// 20 %.
	opt, _ := WindowOptions(st)
	want := 0
	for _, r := range d.Regions {
		areas, err := series.MakeWindows(&series.Dataset{Regions: []*series.Region{r}}, opt)
		if err != nil {
			t.Fatal(err)
		}
		_, test := series.SplitAreas(areas, series.Temporal, st.TrainFraction, nil)
		for _, a := range test {
			want += len(a.Windows)
		}
	}
	if ev.Model.N != want {
		t.Errorf("%d test days, want %d", ev.Model.N, want)
	}
	// A zero model misses by the mean target: worse than no change.
	ev, err = Evaluate(st, d, make([]float64, 11), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := Compare(ev.Model, ev.Baseline); !ok || c.Gain >= 0 || c.Alike {
		t.Errorf("zero model vs no change: %+v", c)
	}

	var le *LayoutError
	if _, err := Evaluate(st, d, copyLast[:5], nil); !errors.As(err, &le) || le.Have != 5 || le.Want != 11 || !errors.Is(err, ErrModelLayout) {
		t.Errorf("short model: %v", err)
	}
	bad := st
	bad.Features = "no-such-design"
	if _, err := Evaluate(bad, d, copyLast, nil); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown design: %v", err)
	}
	all := st
	all.TrainFraction = 1
	ev, err = Evaluate(all, d, copyLast, nil)
	if !errors.Is(err, ErrNoTestDays) || ev.Model != nil || len(ev.Forecasts) != 3 {
		t.Errorf("no test days: %v, metrics %+v, %d forecasts", err, ev.Model, len(ev.Forecasts))
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name        string
		model, base *metrics.Result
		ok, alike   bool
		gain, pct   float64
	}{
		{"better", &metrics.Result{N: 12, MAE: 8}, &metrics.Result{N: 12, MAE: 10}, true, false, 2, 20},
		{"worse", &metrics.Result{N: 5, MAE: 15.5}, &metrics.Result{N: 5, MAE: 10}, true, false, -5.5, -55},
		{"alike 2 %", &metrics.Result{N: 5, MAE: 10.2}, &metrics.Result{N: 5, MAE: 10}, true, true, -0.2, -2},
		{"alike 0.05 cases", &metrics.Result{N: 5, MAE: 0.15}, &metrics.Result{N: 5, MAE: 0.1}, true, true, -0.05, -50},
		{"just over 2 %", &metrics.Result{N: 5, MAE: 9.7}, &metrics.Result{N: 5, MAE: 10}, true, false, 0.3, 3},
		{"no model", nil, &metrics.Result{N: 5, MAE: 10}, false, false, 0, 0},
		{"no baseline", &metrics.Result{N: 5, MAE: 10}, nil, false, false, 0, 0},
		{"no days", &metrics.Result{MAE: 1}, &metrics.Result{MAE: 1}, false, false, 0, 0},
		{"undefined", &metrics.Result{N: 5, MAE: math.NaN()}, &metrics.Result{N: 5, MAE: 10}, false, false, 0, 0},
	} {
		c, ok := Compare(tc.model, tc.base)
		if ok != tc.ok || c.Alike != tc.alike || math.Abs(c.Gain-tc.gain) > 1e-12 || math.Abs(c.GainPercent-tc.pct) > 1e-9 {
			t.Errorf("%s: %+v, %v; want ok %v, alike %v, gain %v (%v %%)", tc.name, c, ok, tc.ok, tc.alike, tc.gain, tc.pct)
		}
		if ok && (c.Days != tc.model.N || c.ModelMAE != tc.model.MAE || c.BaselineMAE != tc.base.MAE) {
			t.Errorf("%s: %+v does not carry the figures", tc.name, c)
		}
	}
}

func TestEpsilonMatches(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		a, b float64
		want bool
	}{
		{1.5, 1.5, true}, {1.5, 1.5 + 1e-10, true}, {1.5, 1.5001, false},
		{1e-3, 1e-3 + 5e-10, true}, {1e-3, 1e-3 + 2e-9, false},
		{inf, inf, true}, {inf, 3, false}, {3, inf, false}, {math.NaN(), math.NaN(), false},
	} {
		if got := EpsilonMatches(tc.a, tc.b); got != tc.want {
			t.Errorf("EpsilonMatches(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}
