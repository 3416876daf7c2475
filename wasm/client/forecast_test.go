package client

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/synth"
)

func TestForecastsAndHub(t *testing.T) {
	d, _, err := synth.Generate(synth.Options{Areas: 4, Days: 70, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9, Layers: []int{10, 1}}
	// A model that predicts the last input value: weight 1 on x[9].
	model := make([]float64, 11)
	model[9] = 1
	fs, cov, err := Forecasts(st, d, model)
	if err != nil {
		t.Fatal(err)
	}
	pfs, pcov, err := PointForecasts(st, d, forecast.Persistence)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 4 || cov != pcov || cov.N == 0 || cov.In95 < cov.In50 {
		t.Fatalf("%d forecasts, coverage %+v (persistence %+v)", len(fs), cov, pcov)
	}
	last := d.Regions[0].End()
	for i, f := range fs {
		if f.Quantiles != pfs[i].Quantiles {
			t.Errorf("%s: the copying model and persistence differ: %v vs %v", f.Area, f.Quantiles, pfs[i].Quantiles)
		}
		if !f.Quantiles.Valid() || f.Errors == 0 {
			t.Errorf("%s: quantiles %v from %d errors", f.Area, f.Quantiles, f.Errors)
		}
		if !f.LastReported.Equal(last) || f.Target.Sub(f.LastReported) != 4*24*time.Hour || f.Target.Sub(f.InputEnd) != 7*24*time.Hour {
			t.Errorf("%s: last reported %s, input end %s, target %s", f.Area, f.LastReported, f.InputEnd, f.Target)
		}
		if lo, hi, _ := f.Quantiles.Interval(0.95); !(lo <= f.Quantiles.Median() && f.Quantiles.Median() <= hi && lo < hi) {
			t.Errorf("%s: 95 %% interval %v … %v around %v", f.Area, lo, hi, f.Quantiles.Median())
		}
	}
	var buf bytes.Buffer
	if err := forecast.WriteHub(&buf, HubForecasts(fs)); err != nil {
		t.Fatal(err)
	}
	back, err := forecast.ReadHub(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 4 || back[2].Location != fs[2].Area || back[2].Horizon() != 4 {
		t.Errorf("hub file read back: %+v", back)
	}
	if _, _, err := Forecasts(st, d, model[:5]); !errors.Is(err, ErrModelLayout) {
		t.Errorf("short model: %v", err)
	}
}
