package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
)

func weeklySeries(start time.Time, days int, spike time.Time) *series.Region {
	r := &series.Region{Name: "A", Start: start, Cases: make([]float64, days)}
	for i := range r.Cases {
		r.Cases[i] = 40 + 30*math.Sin(float64(i)/11) + float64(i%7)
		if !start.AddDate(0, 0, i).Before(spike) {
			r.Cases[i] = 5e5
		}
	}
	return r
}

// A weekly forecaster with random (untrained, far from no change) weights:
// its quantiles are finite, non-negative and non-decreasing at every
// origin, the median is the model's point forecast (Shift 0), and nothing
// reported after the origin changes them.
func TestWeeklyForecaster(t *testing.T) {
	des := model.WeeklyDesign
	m := des.Network()
	params := make([]float64, m.NumParams())
	m.Init(params, rand.New(rand.NewPCG(3, 4))) // output layer not zero
	start := time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)
	never := start.AddDate(10, 0, 0)
	hol := model.NewHolidays("Bayern")
	pubFor := func(spike time.Time) model.Public {
		n := weeklySeries(start, 300, spike)
		return model.Public{National: n, State: n, Holidays: hol, Population: 1e5}
	}
	f := WeeklyForecaster{Design: des, Model: m, Params: params, Calib: WeeklyCalibrator()}
	r0, p0 := weeklySeries(start, 300, never), pubFor(never)
	moved := 0
	for o := start.AddDate(0, 0, 40); o.Before(start.AddDate(0, 0, 290)); o = o.AddDate(0, 0, 9) {
		q := f.Forecast(r0, p0, o)
		if !q.Valid() {
			t.Fatalf("origin %v: quantiles %v not valid", o, q)
		}
		point := des.Weekly.PredictTotals(m, params, r0, p0, []time.Time{o}, des.Damping)[0]
		if math.Abs(q.Median()-point) > 1e-9*point {
			t.Errorf("origin %v: median %v, point forecast %v", o, q.Median(), point)
		}
		last, _ := model.Total7(r0, o)
		if math.Abs(point-last) > 1 {
			moved++
		}
		after := o.AddDate(0, 0, 1)
		if q1 := f.Forecast(weeklySeries(start, 300, after), pubFor(after), o); q1 != q {
			t.Errorf("origin %v: a spike after the origin changed the forecast %v → %v", o, q, q1)
		}
		if q2 := f.Forecast(weeklySeries(start, 300, o), pubFor(o), o); q2 == q {
			t.Errorf("origin %v: a spike on the origin changed nothing", o)
		}
	}
	if moved == 0 {
		t.Error("the random model always forecast no change: the test checks nothing")
	}
	// Too short for the model's inputs: no change with the prior's range;
	// too short for a 7-day total: zeros.
	short := weeklySeries(start, 20, never)
	q := f.Forecast(short, model.Public{}, start.AddDate(0, 0, 19))
	if last, _ := model.Total7(short, start.AddDate(0, 0, 19)); !q.Valid() || math.Abs(q.Median()-last) > 1e-9*last || q[0] >= q[6] {
		t.Errorf("short series: %v, want a range around no change %v", q, last)
	}
	if q := f.Forecast(short, model.Public{}, start.AddDate(0, 0, 3)); q != (Quantiles{}) {
		t.Errorf("series shorter than a week: %v, want zeros", q)
	}
}
