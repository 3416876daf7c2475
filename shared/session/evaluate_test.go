package session

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func TestEvaluate(t *testing.T) {
	d, _, err := synth.Generate(synth.Options{Areas: 3, Days: 90, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 1}, Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.8}}
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
	if ev.Model == nil || ev.Baseline == nil || ev.Model.MAE <= ev.Baseline.MAE {
		t.Errorf("zero model vs no change: %+v, %+v", ev.Model, ev.Baseline)
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
