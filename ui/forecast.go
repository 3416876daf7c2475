package ui

import (
	"math"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// The forecast made after the study with the final model: each area's
// value, range and chart, page by page.

// Forecast is the model's forecast for one area.
type Forecast struct {
	Area     string
	InputEnd time.Time // last day of the input window
	Target   time.Time // the day forecast
	Value    float64   // the headlined value (the guard's method, inside the plausible band)
	// Quantiles are the headlined forecast's range at the hub levels, from
	// this LHA's own recent errors (package forecast; computed here, not
	// sent).
	Quantiles forecast.Quantiles
	Chart     *Chart
	// Guard is the guard's headline for the area: its method, the reason
	// and the shared model's own forecast beside it.
	Guard forecast.Headline
}

// Range95 says the 95 % range in words.
func (f Forecast) Range95() string {
	lo, hi, _ := f.Quantiles.Interval(0.95)
	return "between " + FormatCount(lo) + " and " + FormatCount(hi)
}

// Range50 says the 50 % range in words.
func (f Forecast) Range50() string {
	lo, hi, _ := f.Quantiles.Interval(0.5)
	return "between " + FormatCount(lo) + " and " + FormatCount(hi)
}

// Shown is the forecast as displayed: the median of the range (the
// model's output with the default calibrator, see package forecast), or
// the model's output when there is no range; never below zero.
func (f Forecast) Shown() string {
	if f.Quantiles != (forecast.Quantiles{}) {
		return FormatCount(f.Quantiles.Median())
	}
	return FormatCount(math.Max(0, f.Value))
}

// TargetDate formats the forecast's date.
func (f Forecast) TargetDate() string { return f.Target.Format("Monday 2 January 2006") }

// forecast evaluates the final model on the LHA's data (session.Evaluate:
// each area's forecast, the hub file, the local test metrics of the model
// and of the no-change forecast), yielding as it goes, draws the forecast
// charts and publishes it all under the lock, showing how far it has got
// (ForecastProgress) on the way. Data and Welcome do not change once
// training has started.
func (s *JoinState) forecast(params []float64) {
	s.lock()
	d, w, issued := s.Data, s.Welcome, s.loadIssued()
	s.ForecastProgress = session.Progress{}
	s.unlock()
	if d == nil || w == nil || len(params) == 0 {
		s.publish(func() { s.Forecasting = false })
		return
	}
	show := s.progressShower()
	passes := 0 // the session's passes over the areas; drawing the charts is one more
	ev, err := s.evaluate(w.Study, d, params, issued, func(p session.Progress) {
		passes = p.Passes
		p.Passes++
		show(p)
	})
	charts := session.Progress{Pass: passes + 1, Passes: passes + 1, Areas: len(d.Regions)}
	var forecasts []Forecast
	sm := s.smoothing()
	last := time.Now()
	for _, g := range ev.Guarded {
		f := g.Forecast
		forecasts = append(forecasts, Forecast{Area: f.Area, InputEnd: f.InputEnd, Target: f.Target, Value: f.Point,
			Quantiles: f.Quantiles, Chart: forecastChart(d.Region(f.Area), sm, f.InputEnd, f.Target, f.Quantiles), Guard: g.Headline})
		charts.Done = min(charts.Done+1, charts.Areas)
		show(charts)
		last = s.maybeYield(last)
	}
	charts.Done = charts.Areas
	s.publish(func() {
		s.Forecasts, s.Recent, s.Hub, s.ForecastPage = forecasts, ev.Recent, ev.Hub, 0
		s.Forecasting, s.ForecastProgress = false, charts
		s.saveIssued(issued, ev.Guarded)
		s.HubURL = objectURL(s.HubURL, ev.Hub, "text/csv;charset=utf-8")
		s.Metrics, s.Baseline, s.MetricsNote = ev.Model, ev.Baseline, evaluationNote(err)
	})
}

// ForecastsPerPage is the number of areas whose forecast chart is shown at
// once.
const ForecastsPerPage = 10

// ForecastPageRows is the current page of forecasts.
func (s *JoinState) ForecastPageRows() []Forecast {
	from := min(s.ForecastPage*ForecastsPerPage, len(s.Forecasts))
	return s.Forecasts[from:min(from+ForecastsPerPage, len(s.Forecasts))]
}

// ForecastPages is the number of pages of forecasts.
func (s *JoinState) ForecastPages() int {
	return (len(s.Forecasts) + ForecastsPerPage - 1) / ForecastsPerPage
}

// TurnForecastPage moves the forecasts by delta pages (clamped).
func (s *JoinState) TurnForecastPage(delta int) {
	s.ForecastPage = max(0, min(s.ForecastPages()-1, s.ForecastPage+delta))
}

// forecastChart plots the last six weeks of an area with its forecast:
// the median as a dashed line, the 50 % and 95 % ranges as bands.
func forecastChart(r *series.Region, sm series.Smoothing, inputEnd, target time.Time, q forecast.Quantiles) *Chart {
	avg := make([]float64, len(r.Cases))
	series.MovingAverage7(avg, r.Cases, sm)
	last := r.Index(inputEnd)
	at := avg[last]
	fc := []Point{{Day(inputEnd), at}, {Day(target), q.Median()}}
	band := func(coverage float64) []BandPoint {
		lo, hi, _ := q.Interval(coverage)
		return []BandPoint{{Day(inputEnd), at, at}, {Day(target), lo, hi}}
	}
	c := casesChart("Forecast for "+r.Name, "date", "cases per day (7-day average)", r, avg, max(0, len(r.Cases)-42), "7-day average")
	c.Lines = append(c.Lines, Line{Name: "forecast", Class: "forecast", Points: fc, Markers: true})
	c.Bands = []Band{
		{Name: "95 % range", Class: "band95", Points: band(0.95)},
		{Name: "50 % range", Class: "band50", Points: band(0.5)},
	}
	c.VRefs = []Ref{{At: Day(r.End()), Label: "last reported day", Class: "today"}}
	return c
}
