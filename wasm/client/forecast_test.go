package client

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// A one-layer network with weights 1/H and no bias forecasts the mean of
// its input window: 20 for a series that is 20 every day.
func TestForecasts(t *testing.T) {
	st := protocol.Study{History: 10, Horizon: 7, Smoothing: "centered", Layers: []int{10, 1},
		From: "2020-11-01", To: "2020-11-20"} // from/to do not limit a forecast
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
	fcs, err := Forecasts(st, model, d)
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
	if math.Abs(f.Value-20) > 1e-12 {
		t.Errorf("value %v, want 20", f.Value)
	}
	if _, err := Forecasts(st, model[:10], d); !errors.Is(err, ErrBadStudy) {
		t.Errorf("wrong model length: %v, want ErrBadStudy", err)
	}
}
