package forecast

import (
	"math"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

// Series is one area's 7-day average, as used for inputs and targets.
type Series struct {
	Area     string
	Start    time.Time // date of Smoothed[0]
	Smoothed []float64 // NaN where the average is not defined (the edges)
}

// Smooth computes the 7-day average of a region.
func Smooth(r *series.Region, s series.Smoothing) Series {
	avg := make([]float64, len(r.Cases))
	series.MovingAverage7(avg, r.Cases, s)
	return Series{Area: r.Name, Start: series.Date(r.Start), Smoothed: avg}
}

// index returns the index of day d, or -1 outside the series.
func (s Series) index(d time.Time) int {
	i := int(math.Round(series.Date(d).Sub(s.Start).Hours() / 24))
	if i < 0 || i >= len(s.Smoothed) {
		return -1
	}
	return i
}

// At is the smoothed value on day d, NaN when undefined.
func (s Series) At(d time.Time) float64 {
	i := s.index(d)
	if i < 0 {
		return math.NaN()
	}
	return s.Smoothed[i]
}

// Input returns the H smoothed values ending on day end, or nil when any
// of them is undefined.
func (s Series) Input(end time.Time, h int) []float64 {
	i := s.index(end)
	if i < 0 || i-h+1 < 0 {
		return nil
	}
	x := append([]float64(nil), s.Smoothed[i-h+1:i+1]...)
	for _, v := range x {
		if math.IsNaN(v) {
			return nil
		}
	}
	return x
}

// Errors returns the log errors of point on the windows of s (H input
// days, target P days after the input's last day) whose target lies in
// from … to (inclusive) and is defined.
func Errors(s Series, h, p int, point Point, from, to time.Time) []DatedError {
	var out []DatedError
	for t := series.Date(from); !t.After(series.Date(to)); t = t.AddDate(0, 0, 1) {
		y := s.At(t)
		if math.IsNaN(y) {
			continue
		}
		x := s.Input(t.AddDate(0, 0, -p), h)
		if x == nil {
			continue
		}
		out = append(out, DatedError{Target: t, Err: LogError(y, point(x))})
	}
	return out
}

// BaselineLookback is the number of days of past changes the hub-style
// baseline of Backtest uses, whatever the calibrator's own lookback (so
// that tuning the calibrator cannot weaken its yardstick).
const BaselineLookback = 14

// BaselineAt is the hub-style baseline for the forecast made on day end
// (the last input day) for end + P: the last value s(end), and the
// P-day changes s(t) − s(t−P) of the targets t in the lookback window
// end−lookback+1 … end, symmetrised.
func BaselineAt(s Series, end time.Time, p, lookback int) Quantiles {
	last := s.At(end)
	var diffs []float64
	for t := series.Date(end).AddDate(0, 0, -lookback+1); !t.After(series.Date(end)); t = t.AddDate(0, 0, 1) {
		a, b := s.At(t), s.At(t.AddDate(0, 0, -p))
		if !math.IsNaN(a) && !math.IsNaN(b) {
			diffs = append(diffs, a-b)
		}
	}
	return Baseline(last, diffs)
}

// Origin is one forecast made for one area: its dates, the point
// forecast, the calibrated quantiles, the baseline's quantiles and (when
// already observed) the outcome.
type Origin struct {
	Area      string
	InputEnd  time.Time // last input day (the forecast origin)
	Target    time.Time // InputEnd + P
	Point     float64
	Quantiles Quantiles
	Baseline  Quantiles
	Y         float64 // the smoothed value on Target; NaN when not yet known
	Errors    int     // errors the interval rests on
}

// Backtest makes the forecast of s at each origin (last input day) in
// ends: the point forecast of the H values ending there, quantiles from
// the errors of the windows of pool whose targets are known on that day
// (target ≤ origin, within c.Lookback days; pool holds the errors of all
// the LHA's areas), and the baseline. Origins without a complete input
// are skipped.
func (c Calibrator) Backtest(s Series, h, p int, point Point, pool []DatedError, ends []time.Time) []Origin {
	return c.BacktestWith(s, h, p, point, func(end time.Time) ErrorModel { return c.Fit(pool, end) }, ends)
}

// BacktestWith is Backtest with the error model of each forecast date from
// fit (for example a FitCache's Fit, shared by every area of an LHA).
func (c Calibrator) BacktestWith(s Series, h, p int, point Point, fit func(time.Time) ErrorModel, ends []time.Time) []Origin {
	var out []Origin
	for _, end := range ends {
		x := s.Input(end, h)
		if x == nil {
			continue
		}
		target := series.Date(end).AddDate(0, 0, p)
		pt := point(x)
		em := c.Widen(fit(end), x, pt)
		out = append(out, Origin{
			Area: s.Area, InputEnd: series.Date(end), Target: target, Point: pt,
			Quantiles: em.Quantiles(pt), Baseline: BaselineAt(s, end, p, BaselineLookback),
			Y: s.At(target), Errors: em.N,
		})
	}
	return out
}

// A FitCache remembers Fit over one pool of errors by forecast date. The
// areas of one LHA share their pooled error record and, mostly, their
// dates, so an LHA with hundreds of areas fits each date once instead of
// once per area (which took seconds in a browser). Not safe for
// concurrent use.
type FitCache struct {
	c    Calibrator
	pool []DatedError
	fits map[time.Time]ErrorModel
}

// NewFitCache returns a FitCache of c over pool.
func (c Calibrator) NewFitCache(pool []DatedError) *FitCache {
	return &FitCache{c: c, pool: pool, fits: map[time.Time]ErrorModel{}}
}

// Fit is c.Fit(pool, asOf), computed once per date.
func (f *FitCache) Fit(asOf time.Time) ErrorModel {
	d := series.Date(asOf)
	if m, ok := f.fits[d]; ok {
		return m
	}
	m := f.c.Fit(f.pool, d)
	f.fits[d] = m
	return m
}
