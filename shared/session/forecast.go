package session

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// AreaForecast is one area's live forecast: the point forecast of the
// final model and quantiles calibrated on the LHA's own recent errors
// (package forecast). Everything here is computed on this computer and
// never sent.
type AreaForecast struct {
	Area         string
	LastReported time.Time // last day in the LHA's file for the area (hub reference_date)
	InputEnd     time.Time // last day of the input window
	Target       time.Time // the day forecast
	Point        float64   // the model's output (unclamped)
	Quantiles    forecast.Quantiles
	Errors       int // past errors the interval rests on (all areas pooled)
	// Coverage is RecentCoverage for this area alone.
	Coverage RecentCoverage
}

// RecentCoverage says how often the LHA's own recent outcomes fell inside
// the intervals this method would have given at the time (every forecast
// origin whose outcome is known, over the calibration lookback, all areas
// pooled).
type RecentCoverage struct {
	N, In50, In95 int
}

func (c RecentCoverage) add(o RecentCoverage) RecentCoverage {
	return RecentCoverage{N: c.N + o.N, In50: c.In50 + o.In50, In95: c.In95 + o.In95}
}

// ErrModelLayout is returned when the model does not fit the study's layers.
var ErrModelLayout = errors.New("session: the model does not match the study's layers")

// Forecasts computes each area's live quantile forecast from the final
// global model, and the recent coverage of the same interval method on
// the LHA's own data. Areas too short for an input are left out.
func Forecasts(st protocol.Study, data *series.Dataset, params []float64) ([]AreaForecast, RecentCoverage, error) {
	return ForecastsYielding(st, data, params, nil)
}

// ForecastsYielding is Forecasts calling yield (when not nil) about every
// 30 ms, so that a browser can paint while an LHA with hundreds of areas
// is forecast.
func ForecastsYielding(st protocol.Study, data *series.Dataset, params []float64, yield func()) ([]AreaForecast, RecentCoverage, error) {
	var cov RecentCoverage
	if len(st.Layers) < 2 {
		return nil, cov, fmt.Errorf("%w: %v", ErrModelLayout, st.Layers)
	}
	m := nn.NewMLP(st.Layers...)
	if m.NumParams() != len(params) {
		return nil, cov, fmt.Errorf("%w: %d numbers, the layout %v needs %d", ErrModelLayout, len(params), st.Layers, m.NumParams())
	}
	point, err := DesignPoint(st, m, params)
	if err != nil {
		return nil, cov, err
	}
	return pointForecasts(st, data, point, yield, nil)
}

// DesignPoint is the point forecaster of the final model under the study's
// design: its feature map and damping (shared/model), the forecast the
// simulation scores. It reuses one output slice: one per goroutine.
func DesignPoint(st protocol.Study, m *nn.MLP, params []float64) (forecast.Point, error) {
	features, err := model.Parse(st.Features)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	damping := st.Damping
	if damping == 0 {
		damping = 1
	}
	if err := model.CheckDamping(damping); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	out := make([]float64, 1)
	return func(x []float64) float64 {
		features.PredictDamped(m, params, x, out, damping)
		return out[0]
	}, nil
}

// PointForecasts is Forecasts for any point forecaster.
func PointForecasts(st protocol.Study, data *series.Dataset, point forecast.Point) ([]AreaForecast, RecentCoverage, error) {
	return pointForecasts(st, data, point, nil, nil)
}

// pointForecasts is PointForecasts calling yield (when not nil) about
// every 30 ms, and counting a pass over the areas on tl: an area is done
// once its forecast is made.
func pointForecasts(st protocol.Study, data *series.Dataset, point forecast.Point, yield func(), tl *tally) ([]AreaForecast, RecentCoverage, error) {
	pause := pacer(yield)
	var cov RecentCoverage
	sm, err := series.ParseSmoothing(st.Smoothing)
	if err != nil {
		return nil, cov, fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	live := series.WindowOptions{History: st.History, Horizon: st.Horizon, Smoothing: sm}
	h, p := st.History, st.Horizon
	if h == 0 {
		h = series.DefaultHistory
	}
	if p == 0 {
		p = series.DefaultHorizon
	}
	cal := forecast.DefaultCalibrator()
	tl.pass(len(data.Regions))
	type areaInput struct {
		r        *series.Region
		s        forecast.Series
		inputEnd time.Time
		target   time.Time
	}
	var ins []areaInput
	var ss []forecast.Series
	var first, newest time.Time
	for _, r := range data.Regions {
		pause()
		_, inputEnd, target, err := series.LatestInput(r, live)
		if err != nil {
			continue
		}
		s := forecast.Smooth(r, sm)
		ins = append(ins, areaInput{r: r, s: s, inputEnd: inputEnd, target: target})
		ss = append(ss, s)
		// Recent origins: those whose target is known (≤ inputEnd), over
		// the lookback; their own calibration reaches a lookback further.
		from := inputEnd.AddDate(0, 0, -p-cal.Lookback+1-cal.Lookback)
		if first.IsZero() || from.Before(first) {
			first = from
		}
		if inputEnd.After(newest) {
			newest = inputEnd
		}
	}
	if len(ins) == 0 {
		return nil, cov, fmt.Errorf("session: no area of the file has %d days of data for a forecast", h+6)
	}
	var pool []forecast.DatedError
	for _, s := range ss {
		pool = append(pool, forecast.Errors(s, h, p, point, first, newest)...) // pooled over the areas, yielding
		pause()
	}
	fit := cal.NewFitCache(pool).Fit
	var fs []AreaForecast
	for _, a := range ins {
		pause()
		var ends []time.Time
		for d := a.inputEnd.AddDate(0, 0, -p-cal.Lookback+1); !d.After(a.inputEnd.AddDate(0, 0, -p)); d = d.AddDate(0, 0, 1) {
			ends = append(ends, d)
		}
		var ac RecentCoverage
		for _, o := range cal.BacktestWith(a.s, h, p, point, fit, ends) {
			if math.IsNaN(o.Y) {
				continue
			}
			ac.N++
			if forecast.Covered(o.Quantiles, 0.5, o.Y) {
				ac.In50++
			}
			if forecast.Covered(o.Quantiles, 0.95, o.Y) {
				ac.In95++
			}
		}
		cov = cov.add(ac)
		os := cal.BacktestWith(a.s, h, p, point, fit, []time.Time{a.inputEnd})
		if len(os) == 1 {
			o := os[0]
			fs = append(fs, AreaForecast{Area: a.r.Name, LastReported: series.Date(a.r.End()), InputEnd: o.InputEnd,
				Target: o.Target, Point: o.Point, Quantiles: o.Quantiles, Errors: o.Errors, Coverage: ac})
		}
		tl.area()
	}
	tl.end()
	return fs, cov, nil
}

// HubForecasts converts forecasts to hub rows: reference_date the area's
// last reported day, target_end_date the day forecast.
func HubForecasts(fs []AreaForecast) []forecast.HubForecast {
	out := make([]forecast.HubForecast, len(fs))
	for i, f := range fs {
		out[i] = forecast.HubForecast{Location: f.Area, ReferenceDate: f.LastReported, TargetEndDate: f.Target, Quantiles: f.Quantiles}
	}
	return out
}
