package session

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func TestForecastsAndHub(t *testing.T) {
	d, _, err := synth.Generate(synth.Options{Areas: 4, Days: 70, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 1}, Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9}}
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

// A one-layer network with weights 1/H and no bias forecasts the mean of
// its input window: 20 for a series that is 20 every day.
func TestForecastsMeanModel(t *testing.T) {
	st := protocol.Study{Layers: []int{10, 1},
		Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered",
			From: "2020-11-01", To: "2020-11-20"}} // from/to do not limit a forecast
	model := make([]float64, 11)
	for i := 0; i < 10; i++ {
		model[i] = 0.1
	}
	start := time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC)
	flat := make([]float64, 30)
	for i := range flat {
		flat[i] = 20
	}
	d := &series.Dataset{Regions: []*series.Region{
		{Name: "A", Start: start, Cases: flat},
		{Name: "short", Start: start, Cases: []float64{1, 2, 3}},
	}}
	fcs, _, err := Forecasts(st, d, model)
	if err != nil {
		t.Fatal(err)
	}
	if len(fcs) != 1 {
		t.Fatalf("%d forecasts, want 1 (the short area has no input window): %+v", len(fcs), fcs)
	}
	f := fcs[0]
	// Centred average: the last smoothed day is 3 days before the last
	// reported day (2020-11-30), the target 7 days after that.
	if f.Area != "A" || !f.InputEnd.Equal(start.AddDate(0, 0, 26)) || !f.Target.Equal(start.AddDate(0, 0, 33)) {
		t.Errorf("forecast %+v, want area A, input to 2020-11-27, target 2020-12-04", f)
	}
	if math.Abs(f.Point-20) > 1e-12 {
		t.Errorf("value %v, want 20", f.Point)
	}
	if _, _, err := Forecasts(st, d, model[:10]); !errors.Is(err, ErrModelLayout) {
		t.Errorf("wrong model length: %v, want ErrModelLayout", err)
	}
}

// Under the default design (log-change features) an all-zero model is the
// no-change forecast: each area's median is exactly its last smoothed
// input value. A model read as raw counts would forecast 0 instead.
func TestForecastsUseTheDesign(t *testing.T) {
	d, _, err := synth.Generate(synth.Options{Areas: 3, Days: 70, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 4, 1},
		Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9,
			Features: "log-change", Damping: 0.5,
			Hidden: []int{4}}}
	zero := make([]float64, 10*4+4+4+1)
	fcs, _, err := Forecasts(st, d, zero)
	if err != nil || len(fcs) != 3 {
		t.Fatalf("%d forecasts, %v", len(fcs), err)
	}
	for _, f := range fcs {
		r := d.Region(f.Area)
		avg := make([]float64, len(r.Cases))
		series.MovingAverage7(avg, r.Cases, series.Centered)
		last := avg[r.Index(f.InputEnd)]
		if f.Point != last || last == 0 {
			t.Errorf("%s: point %v, want the no-change forecast %v", f.Area, f.Point, last)
		}
	}
	st.Features = "sideways"
	if _, _, err := Forecasts(st, d, zero); !errors.Is(err, ErrBadStudy) {
		t.Errorf("unknown features: %v", err)
	}
}
