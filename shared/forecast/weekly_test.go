package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
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

// weeklyFixture is an area of 300 days from 2020-03-01 without a spike,
// and public inputs whose totals follow the same curve.
func weeklyFixture() (time.Time, *series.Region, model.Public) {
	start := time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)
	never := start.AddDate(10, 0, 0)
	n := weeklySeries(start, 300, never)
	return start, weeklySeries(start, 300, never), model.Public{National: n, State: n, Holidays: model.NewHolidays("Bayern"), Population: 1e5}
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

// The third round's options (docs/results.md): Blend puts the median on
// the log scale between the model's point forecast and no change, with the
// model's weight from the area's own errors only; Poisson widens the
// ranges, and more for a small total than the same relative range of a
// large one. Neither looks past the origin.
func TestWeeklyForecasterOptions(t *testing.T) {
	des := model.WeeklyDesign
	m := des.Network()
	params := make([]float64, m.NumParams())
	m.Init(params, rand.New(rand.NewPCG(3, 4)))
	start, r, pub := weeklyFixture()
	plain := WeeklyForecaster{Design: des, Model: m, Params: params, Calib: WeeklyCalibrator()}
	blend, pois := plain, plain
	blend.Blend, pois.Poisson = true, 1
	between, widened := 0, 0
	for o := start.AddDate(0, 0, 60); o.Before(start.AddDate(0, 0, 290)); o = o.AddDate(0, 0, 9) {
		q, qb, qp := plain.Forecast(r, pub, o), blend.Forecast(r, pub, o), pois.Forecast(r, pub, o)
		last, _ := model.Total7(r, o)
		lo, hi := math.Min(q.Median(), last), math.Max(q.Median(), last)
		if !qb.Valid() || qb.Median() < lo-1e-9*hi || qb.Median() > hi+1e-9*hi {
			t.Errorf("origin %v: blended median %v outside [%v, %v]", o, qb.Median(), lo, hi)
		}
		if qb.Median() > lo+1e-6*hi && qb.Median() < hi-1e-6*hi {
			between++
		}
		if !qp.Valid() || math.Abs(qp.Median()-q.Median()) > 1e-9*q.Median() || qp[6]-qp[0] < q[6]-q[0] {
			t.Errorf("origin %v: Poisson ranges %v against %v (want the same median, wider)", o, qp, q)
		}
		if qp[6]-qp[0] > q[6]-q[0] {
			widened++
		}
		after := o.AddDate(0, 0, 1)
		if q1 := blend.Forecast(weeklySeries(start, 300, after), pub, o); q1 != qb {
			t.Errorf("origin %v: a spike after the origin changed the blended forecast", o)
		}
	}
	if between == 0 || widened == 0 {
		t.Errorf("blend strictly between in %d origins, Poisson wider in %d: the test checks nothing", between, widened)
	}
	// The weight: 1 without known targets, ½ for equal errors, towards
	// the better of the two otherwise.
	if w := ownSkillWeight(r, nil, nil); w != 1 {
		t.Errorf("weight without past origins %v, want 1", w)
	}
	o := start.AddDate(0, 0, 100)
	y, _ := model.Total7(r, o.AddDate(0, 0, 7))
	nc, _ := model.Total7(r, o)
	for _, c := range []struct {
		pred float64
		want func(float64) bool
	}{
		{y, func(w float64) bool { return w == 1 }},
		{nc, func(w float64) bool { return w == 0.5 }},
		{math.Expm1(2*math.Log1p(y) - math.Log1p(nc)), func(w float64) bool { return math.Abs(w-0.5) < 1e-12 }},
		{3 * nc, func(w float64) bool { return w < 0.5 }},
	} {
		if w := ownSkillWeight(r, []time.Time{o}, []float64{c.pred}); !c.want(w) {
			t.Errorf("prediction %v (outcome %v, no change %v): weight %v", c.pred, y, nc, w)
		}
	}
	if blendLog(7, 3, 1) != 7 || math.Abs(blendLog(7, 3, 0)-3) > 1e-12 || math.Abs(blendLog(7, 3, 0.5)-(math.Sqrt(8*4)-1)) > 1e-12 {
		t.Error("blendLog: want a at w = 1, b at w = 0, the geometric mean of a+1 and b+1 minus 1 at ½")
	}
}

// The fourth round's options (docs/results.md): Others makes the median
// the geometric mean (of total + 1) of the released models' point
// forecasts; RampWeeks damps the change by the weeks of the area's
// history; BlendDays takes the blend's weight from a longer span of the
// area's own errors. None looks past the origin.
func TestWeeklyForecasterFourthRound(t *testing.T) {
	des := model.WeeklyDesign
	m := des.Network()
	p1, p2 := make([]float64, m.NumParams()), make([]float64, m.NumParams())
	m.Init(p1, rand.New(rand.NewPCG(3, 4)))
	m.Init(p2, rand.New(rand.NewPCG(5, 6)))
	start, r, pub := weeklyFixture()
	plain := WeeklyForecaster{Design: des, Model: m, Params: p1, Calib: WeeklyCalibrator()}
	self, ens, ramp, b28, b84 := plain, plain, plain, plain, plain
	self.Others, ens.Others, ramp.RampWeeks = [][]float64{p1}, [][]float64{p2}, 26
	b28.Blend = true
	b84.Blend, b84.BlendDays = true, 84
	point := func(params []float64, o time.Time, damping float64) float64 {
		return des.Weekly.PredictTotals(m, params, r, pub, []time.Time{o}, damping)[0]
	}
	blendDiffers := 0
	for o := start.AddDate(0, 0, 60); o.Before(start.AddDate(0, 0, 290)); o = o.AddDate(0, 0, 9) {
		q := plain.Forecast(r, pub, o)
		if qs := self.Forecast(r, pub, o); math.Abs(qs.Median()-q.Median()) > 1e-9*q.Median() {
			t.Errorf("origin %v: an ensemble of the model with itself moved the median %v → %v", o, q.Median(), qs.Median())
		}
		a, b := point(p1, o, des.Damping), point(p2, o, des.Damping)
		want := math.Expm1((math.Log1p(a) + math.Log1p(b)) / 2)
		if qe := ens.Forecast(r, pub, o); !qe.Valid() || math.Abs(qe.Median()-want) > 1e-9*want {
			t.Errorf("origin %v: ensemble median %v, want %v (models %v, %v)", o, qe.Median(), want, a, b)
		}
		weeks := o.Sub(start).Hours() / (24 * 7)
		want = point(p1, o, des.Damping*math.Min(1, weeks/26))
		if qr := ramp.Forecast(r, pub, o); !qr.Valid() || math.Abs(qr.Median()-want) > 1e-9*want {
			t.Errorf("origin %v (%.1f weeks): ramped median %v, want %v", o, weeks, qr.Median(), want)
		}
		q84 := b84.Forecast(r, pub, o)
		if q84 != b28.Forecast(r, pub, o) {
			blendDiffers++
		}
		after := o.AddDate(0, 0, 1)
		for _, f := range []WeeklyForecaster{ens, ramp, b84} {
			if f.Forecast(weeklySeries(start, 300, after), pub, o) != f.Forecast(r, pub, o) {
				t.Errorf("origin %v: a spike after the origin changed a forecast", o)
			}
		}
	}
	if blendDiffers == 0 {
		t.Error("the blend's weight from 84 days never differed from 28 days': the test checks nothing")
	}
}

// Weekly.PersonalSteps: the median is the point forecast of the released
// model fine-tuned on the area's own windows known on the origin, with
// the design's loss; a spike after the origin changes nothing, and the
// released parameters are not touched.
func TestWeeklyForecasterPersonal(t *testing.T) {
	des := model.WeeklyDesign
	des.Weekly = &model.Weekly{}
	*des.Weekly = *model.WeeklyDesign.Weekly
	des.Weekly.PersonalSteps, des.Weekly.PersonalRate = 20, 0.01
	m := des.Network()
	params := make([]float64, m.NumParams())
	m.Init(params, rand.New(rand.NewPCG(3, 4)))
	saved := append([]float64(nil), params...)
	start, r, pub := weeklyFixture()
	f := WeeklyForecaster{Design: des, Model: m, Params: params, Calib: WeeklyCalibrator()}
	plain := f
	plain.Design.Weekly = model.WeeklyDesign.Weekly
	released := f // ranges from the released model's errors
	rw := *des.Weekly
	rw.PersonalReleasedErrors = true
	released.Design.Weekly = &rw
	moved, otherRange := 0, 0
	for o := start.AddDate(0, 0, 120); o.Before(start.AddDate(0, 0, 290)); o = o.AddDate(0, 0, 23) {
		x, y := des.Weekly.Windows(r, pub, o)
		tuned := append([]float64(nil), params...)
		tr := nn.NewTrainer(m)
		tr.SetLoss(nn.AbsoluteError)
		tr.Train(tuned, x, y, 20, nn.AdamOptions{LearningRate: 0.01})
		want := des.Weekly.PredictTotals(m, tuned, r, pub, []time.Time{o}, des.Damping)[0]
		q := f.Forecast(r, pub, o)
		if !q.Valid() || math.Abs(q.Median()-want) > 1e-9*want {
			t.Errorf("origin %v: personalised median %v, want %v", o, q.Median(), want)
		}
		if q.Median() != plain.Forecast(r, pub, o).Median() {
			moved++
		}
		// PersonalReleasedErrors: the same median, the ranges of the
		// released model's errors.
		qr := released.Forecast(r, pub, o)
		if !qr.Valid() || math.Abs(qr.Median()-q.Median()) > 1e-9*want {
			t.Errorf("origin %v: median %v with the released model's errors, want %v", o, qr.Median(), q.Median())
		}
		if qr != q {
			otherRange++
		}
		spiked := weeklySeries(start, 300, o.AddDate(0, 0, 1))
		if f.Forecast(spiked, pub, o) != q {
			t.Errorf("origin %v: a spike after the origin changed the personalised forecast", o)
		}
	}
	if moved == 0 || otherRange == 0 {
		t.Errorf("personalisation moved the median at %d origins, the released errors the range at %d: the test checks nothing", moved, otherRange)
	}
	if !slices.Equal(params, saved) {
		t.Error("personalisation changed the released parameters")
	}
}
