package session

import (
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// The weekly design in a live study (protocol.Study.Weekly): each LHA
// trains on and forecasts the next 7-day total from its own series and
// the study's public inputs file (forecast.ReadPublicFile), the same
// windows, features and target as `fedcast backtest` replays
// (forecast.WeeklyTraining, forecast.WeeklyForecaster).

// ErrNoPublic is returned for a weekly study when the LHA has no public
// inputs (Options.Public, SetPublic).
var ErrNoPublic = errors.New("session: the weekly design needs the study's public inputs file (national and state totals); download it from the coordinator or give your copy")

// IsWeekly reports whether st is a weekly study.
func IsWeekly(st protocol.Study) bool { return st.Weekly != nil }

// WeeklyDesign returns the weekly design a study describes (its windows,
// network and damping).
func WeeklyDesign(st protocol.Study) (model.Design, error) {
	if err := model.CheckStudyFeatures(st.Features, st.Weekly); err != nil || st.Weekly == nil {
		return model.Design{}, fmt.Errorf("%w: not a weekly study: %v", ErrBadStudy, err)
	}
	if len(st.Layers) < 2 || st.Layers[0] != st.Weekly.Inputs() || st.Layers[len(st.Layers)-1] != st.Weekly.Outputs() {
		return model.Design{}, fmt.Errorf("%w: layers %v for %d weekly inputs and %d outputs", ErrBadStudy, st.Layers, st.Weekly.Inputs(), st.Weekly.Outputs())
	}
	damping := st.Damping
	if damping == 0 {
		damping = 1
	}
	w := *st.Weekly
	return model.Design{Name: "weekly", Features: model.WeeklyTotal, Weekly: &w, Damping: damping,
		Hidden: append([]int(nil), st.Layers[1:len(st.Layers)-1]...)}, nil
}

// publicAsOf is pub cut to data's last day (nothing published later is
// read), known up to that day: totals the file does not have yet read as
// no change.
func publicAsOf(data *series.Dataset, pub *forecast.PublicInputs) (*forecast.PublicInputs, time.Time, error) {
	if pub == nil {
		return nil, time.Time{}, ErrNoPublic
	}
	if data == nil || len(data.Regions) == 0 {
		return nil, time.Time{}, ErrNoData
	}
	_, last := data.Span()
	last = series.Date(last)
	q := pub.Until(last)
	q.Known = last
	return q, last, nil
}

// PrepareWeekly returns the weekly study's training windows of data, as
// of its last day: every window of the last HistoryWeeks weeks whose
// target week is reported. With more than maxWindows (> 0), each round
// trains on a fresh uniform sample of that many. An area the public file
// does not list is an error naming it.
func PrepareWeekly(st protocol.Study, data *series.Dataset, pub *forecast.PublicInputs, maxWindows int) (*TrainingSet, error) {
	d, err := WeeklyDesign(st)
	if err != nil {
		return nil, err
	}
	q, _, err := publicAsOf(data, pub)
	if err != nil {
		return nil, err
	}
	x, y, err := forecast.WeeklyTraining(d, data, q)
	if err != nil {
		return nil, err
	}
	out := d.Weekly.Outputs() // targets a window: one per output of a quantile head
	t := &TrainingSet{history: d.Weekly.Inputs(), outputs: out, total: len(y) / out, cap: maxWindows}
	if maxWindows <= 0 || t.total <= maxWindows {
		t.x, t.y = x, y
		return t, nil
	}
	var seed [32]byte
	crand.Read(seed[:])
	t.rng = rand.New(rand.NewChaCha8(seed))
	t.allX, t.allY = x, y
	return t, nil
}

// WeeklyTrainingData is PrepareWeekly's windows, all of them, stacked.
func WeeklyTrainingData(st protocol.Study, data *series.Dataset, pub *forecast.PublicInputs) (x, y []float64, err error) {
	t, err := PrepareWeekly(st, data, pub, 0)
	if err != nil {
		return nil, nil, err
	}
	return t.x, t.y, nil
}

// sampleMemory draws PerRound of the windows held in memory, uniformly
// without replacement, in their order.
func (t *TrainingSet) sampleMemory() (x, y []float64) {
	k, in, out := t.PerRound(), t.history, max(1, t.outputs)
	x, y = make([]float64, 0, k*in), make([]float64, 0, k*out)
	need := k
	for j := range t.total {
		if need > 0 && (need == t.total-j || t.rng.IntN(t.total-j) < need) {
			x = append(x, t.allX[j*in:(j+1)*in]...)
			y = append(y, t.allY[j*out:(j+1)*out]...)
			need--
		}
	}
	return x, y
}

// WeeklyForecasts returns every area's forecast of the next 7 days with
// the weekly study's model params, as of data's last day, in the page's
// terms: Point and Quantiles are 7-day averages (the week's total / 7),
// InputEnd the last reported day and Target 7 days later.
func WeeklyForecasts(st protocol.Study, data *series.Dataset, pub *forecast.PublicInputs, params []float64) ([]AreaForecast, error) {
	d, err := WeeklyDesign(st)
	if err != nil {
		return nil, err
	}
	q, last, err := publicAsOf(data, pub)
	if err != nil {
		return nil, err
	}
	m := nn.NewMLP(st.Layers...)
	if len(params) != m.NumParams() {
		return nil, fmt.Errorf("%w: %d parameters, the design has %d", ErrBadStudy, len(params), m.NumParams())
	}
	f := forecast.WeeklyForecaster{Design: d, Model: m, Params: params, Calib: forecast.WeeklyCalibrator()}
	qs, err := f.Forecasts(data, q)
	if err != nil {
		return nil, err
	}
	out := make([]AreaForecast, len(qs))
	for i, r := range data.Regions {
		var avg forecast.Quantiles
		for j, v := range qs[i] {
			avg[j] = v / 7
		}
		out[i] = AreaForecast{Area: r.Name, LastReported: last, InputEnd: last, Target: last.AddDate(0, 0, 7),
			Point: avg.Median(), Quantiles: avg}
	}
	return out, nil
}

// WeeklyGuarded is Guarded for a weekly study: the model's forecast of
// every area against no change (the last 7-day average), judged on the
// issued origins (the weekly design trains on every week whose outcome is
// known, so no week of the file is held out) and held inside the band of
// the LHA's own weekly changes.
func WeeklyGuarded(st protocol.Study, data *series.Dataset, pub *forecast.PublicInputs, params []float64, issued []forecast.GuardOrigin) ([]GuardedForecast, error) {
	mf, err := WeeklyForecasts(st, data, pub, params)
	if err != nil {
		return nil, err
	}
	var history []forecast.Series
	for _, r := range data.Regions {
		history = append(history, forecast.Smooth(r, series.Trailing))
	}
	changes := forecast.LargestChanges(history, 7)
	byArea := map[string][]forecast.GuardOrigin{}
	for _, o := range issued {
		byArea[o.Area] = append(byArea[o.Area], o)
	}
	out := make([]GuardedForecast, 0, len(mf))
	for i, m := range mf {
		s := history[i]
		nc := s.At(m.InputEnd)
		b := AreaForecast{Area: m.Area, LastReported: m.LastReported, InputEnd: m.InputEnd, Target: m.Target, Point: nc}
		for j := range b.Quantiles {
			b.Quantiles[j] = nc
		}
		band, _ := changes.Band(nc)
		j := forecast.Judge(byArea[m.Area])
		g := GuardedForecast{Headline: forecast.Guard(j, m.Point, nc, band), Forecast: b, Model: m}
		if j.Method == forecast.MethodModel {
			g.Forecast = m
			g.Forecast.Point = g.ModelShown
			g.Forecast.Quantiles = band.ClampQuantiles(m.Quantiles)
		}
		out = append(out, g)
	}
	return out, nil
}

// EvaluateWeekly is EvaluateIssued for a weekly study: the guarded
// forecasts (WeeklyGuarded), their hub file and sidecar; no test metrics
// (the weekly design trains on every week whose outcome is known).
func EvaluateWeekly(st protocol.Study, data *series.Dataset, pub *forecast.PublicInputs, params []float64, issued []Issued) (Evaluation, error) {
	var ev Evaluation
	var err error
	if ev.Guarded, err = WeeklyGuarded(st, data, pub, params, IssuedOrigins(st, data, issued)); err != nil {
		return ev, err
	}
	return ev, ev.files()
}
