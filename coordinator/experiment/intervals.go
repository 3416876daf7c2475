package experiment

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/series"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Point forecasters the interval layer can wrap (Config.PointForecast).
const (
	PointModel       = "model"       // the federated model of each run
	PointPersistence = "persistence" // the last smoothed input (no training)
)

// Count is a coverage with its count and a 95 % Wilson interval.
type Count struct {
	Covered int        `json:"covered"`
	N       int        `json:"n"`
	Rate    float64    `json:"rate"`
	Wilson  [2]float64 `json:"wilson_95"`
}

// newCount is k covered of n, with its Wilson interval; with n = 0 the
// rate is 0 and the interval [0, 1] (JSON has no NaN).
func newCount(k, n int) Count {
	if n <= 0 {
		return Count{Wilson: [2]float64{0, 1}}
	}
	lo, hi := forecast.Wilson(k, n, 1.959963984540054)
	return Count{Covered: k, N: n, Rate: float64(k) / float64(n), Wilson: [2]float64{lo, hi}}
}

// DateCoverage is the coverage of the forecasts for one target date,
// pooled over areas and runs.
type DateCoverage struct {
	Target     string `json:"target_date"`
	Coverage50 Count  `json:"coverage_50"`
	Coverage95 Count  `json:"coverage_95"`
}

// RollingScores are the interval scores over every window of the study
// period (one forecast origin per day), with each run's final model.
type RollingScores struct {
	ForecastsPerRun int             `json:"forecasts_per_run"`
	Origins         int             `json:"origins"`
	WIS             metrics.Summary `json:"wis"`
	RelativeWIS     metrics.Summary `json:"relative_wis"`
	Coverage50      metrics.Summary `json:"coverage_50"`
	Coverage95      metrics.Summary `json:"coverage_95"`
}

// IntervalDetail is what stands behind the summary interval scores of a
// Result: counts, binomial intervals, the coverage per target date, the
// coverage of intervals calibrated on the training windows only
// (in-sample), the PIT histogram and the rolling-origin evaluation.
type IntervalDetail struct {
	ForecastsPerRun int             `json:"forecasts_per_run"`
	BaselineWIS     metrics.Summary `json:"baseline_wis"`
	// Per run: the mean count over runs (rounded) of the forecasts of one
	// run, with its Wilson interval. The interval treats a run's forecasts
	// as independent, which forecasts for the same dates are not (the
	// areas share an epidemic): see ByTargetDate for the real sample.
	Coverage50Pooled Count `json:"coverage_50_pooled"`
	Coverage95Pooled Count `json:"coverage_95_pooled"`
	// The same per target date.
	ByTargetDate []DateCoverage `json:"by_target_date"`
	// Intervals calibrated on the errors of the area's own training
	// windows (the windows the model learnt from).
	Coverage50InSample metrics.Summary `json:"coverage_50_in_sample"`
	Coverage95InSample metrics.Summary `json:"coverage_95_in_sample"`
	// PIT: share of outcomes between consecutive quantile levels
	// (forecast.PITEdges), pooled over runs.
	PIT     []float64      `json:"pit"`
	Rolling *RollingScores `json:"rolling,omitempty"`
}

// intervalRun is one run's interval evaluation.
type intervalRun struct {
	n, in50, in95, inS50, inS95 int
	wis, baseWIS                float64 // sums
	pit                         [forecast.PITBins]int
	byDate                      map[time.Time][3]int // n, in50, in95
	rollN, rollIn50, rollIn95   int
	rollWIS, rollBase           float64
	origins                     map[time.Time]bool
	hub                         []forecast.HubForecast
}

// intervalInputs are the per-area data the interval evaluation needs,
// shared read-only by all runs.
type intervalInputs struct {
	cal      forecast.Calibrator
	h, p     int
	refShift int                        // days from the last input day to the last reported day
	series   map[string]forecast.Series // by area
	all      []series.Area              // every study window (rolling origins)
}

// evaluateIntervals scores the quantile forecasts of point on one run's
// test windows, with intervals from each area's own errors on windows
// whose targets are known at the forecast origin; and, on every study
// window, the rolling-origin evaluation. keepHub keeps the test-period
// forecasts as hub rows.
func (in *intervalInputs) evaluateIntervals(rd *runData, point forecast.Point, keepHub bool) intervalRun {
	out := intervalRun{byDate: map[time.Time][3]int{}, origins: map[time.Time]bool{}}
	lb := in.cal.Lookback
	for a, name := range rd.areaNames {
		s := in.series[name]
		var ends []time.Time
		for _, i := range rd.testIdx[a] {
			ends = append(ends, rd.testEnd[i])
		}
		var rollEnds []time.Time
		for _, w := range in.all[a].Windows {
			rollEnds = append(rollEnds, w.InputEnd)
		}
		if len(rollEnds) == 0 {
			continue
		}
		first, last := rollEnds[0], rollEnds[len(rollEnds)-1]
		for _, e := range ends {
			first, last = minTime(first, e), maxTime(last, e)
		}
		pool := forecast.Errors(s, in.h, in.p, point, first.AddDate(0, 0, -lb), last)

		// In-sample: the errors of this area's training windows.
		var trainErrs []float64
		c := rd.clients[a]
		for j := range c.Y {
			trainErrs = append(trainErrs, forecast.LogError(c.Y[j], point(c.X[j*in.h:(j+1)*in.h])))
		}
		inSample := in.cal.FitErrors(trainErrs)

		for _, o := range in.cal.Backtest(s, in.h, in.p, point, pool, ends) {
			if math.IsNaN(o.Y) {
				continue
			}
			out.n++
			c50, c95 := forecast.Covered(o.Quantiles, 0.5, o.Y), forecast.Covered(o.Quantiles, 0.95, o.Y)
			d := out.byDate[o.Target]
			d[0]++
			if c50 {
				out.in50++
				d[1]++
			}
			if c95 {
				out.in95++
				d[2]++
			}
			out.byDate[o.Target] = d
			out.wis += forecast.WIS(o.Quantiles, o.Y)
			out.baseWIS += forecast.WIS(o.Baseline, o.Y)
			out.pit[forecast.PITBin(o.Quantiles, o.Y)]++
			qi := inSample.Quantiles(o.Point)
			if forecast.Covered(qi, 0.5, o.Y) {
				out.inS50++
			}
			if forecast.Covered(qi, 0.95, o.Y) {
				out.inS95++
			}
			if keepHub {
				out.hub = append(out.hub, forecast.HubForecast{
					Location: name, ReferenceDate: o.InputEnd.AddDate(0, 0, in.refShift),
					TargetEndDate: o.Target, Quantiles: o.Quantiles,
				})
			}
		}
		for _, o := range in.cal.Backtest(s, in.h, in.p, point, pool, rollEnds) {
			if math.IsNaN(o.Y) {
				continue
			}
			out.rollN++
			out.origins[o.InputEnd] = true
			if forecast.Covered(o.Quantiles, 0.5, o.Y) {
				out.rollIn50++
			}
			if forecast.Covered(o.Quantiles, 0.95, o.Y) {
				out.rollIn95++
			}
			out.rollWIS += forecast.WIS(o.Quantiles, o.Y)
			out.rollBase += forecast.WIS(o.Baseline, o.Y)
		}
	}
	return out
}

// summarizeIntervals fills the interval fields of r from its runs.
func summarizeIntervals(r *Result, runs []intervalRun) {
	var wis, rel, c50, c95, base, s50, s95 []float64
	var rWIS, rRel, r50, r95 []float64
	var k50, k95, n int
	var pit [forecast.PITBins]int
	byDate := map[time.Time][3]int{}
	origins := map[time.Time]bool{}
	rolling := false
	for _, o := range runs {
		if o.n == 0 {
			continue
		}
		nf := float64(o.n)
		wis = append(wis, o.wis/nf)
		base = append(base, o.baseWIS/nf)
		rel = append(rel, o.wis/o.baseWIS)
		c50 = append(c50, float64(o.in50)/nf)
		c95 = append(c95, float64(o.in95)/nf)
		s50 = append(s50, float64(o.inS50)/nf)
		s95 = append(s95, float64(o.inS95)/nf)
		k50, k95, n = k50+o.in50, k95+o.in95, n+o.n
		for i, v := range o.pit {
			pit[i] += v
		}
		for d, c := range o.byDate {
			b := byDate[d]
			byDate[d] = [3]int{b[0] + c[0], b[1] + c[1], b[2] + c[2]}
		}
		if o.rollN > 0 {
			rolling = true
			rf := float64(o.rollN)
			rWIS = append(rWIS, o.rollWIS/rf)
			rRel = append(rRel, o.rollWIS/o.rollBase)
			r50 = append(r50, float64(o.rollIn50)/rf)
			r95 = append(r95, float64(o.rollIn95)/rf)
			for d := range o.origins {
				origins[d] = true
			}
		}
	}
	r.WIS, r.RelativeWIS = metrics.Summarize(wis), metrics.Summarize(rel)
	r.Coverage50, r.Coverage95 = metrics.Summarize(c50), metrics.Summarize(c95)
	nr := len(wis)
	perRun := func(k int) int { return int(math.Round(float64(k) / float64(max(1, nr)))) }
	det := &IntervalDetail{
		BaselineWIS:      metrics.Summarize(base),
		Coverage50Pooled: newCount(perRun(k50), perRun(n)), Coverage95Pooled: newCount(perRun(k95), perRun(n)),
		Coverage50InSample: metrics.Summarize(s50), Coverage95InSample: metrics.Summarize(s95),
	}
	if len(runs) > 0 {
		det.ForecastsPerRun = runs[0].n
	}
	if n > 0 {
		// PIT: pooled over runs (shares, so the run count cancels).
		det.PIT = make([]float64, forecast.PITBins)
		for i, v := range pit {
			det.PIT[i] = float64(v) / float64(n)
		}
	}
	dates := make([]time.Time, 0, len(byDate))
	for d := range byDate {
		dates = append(dates, d)
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].Before(dates[j]) })
	for _, d := range dates {
		c := byDate[d]
		if perRun(c[0]) == 0 {
			continue // under half a forecast per run (a random split's rare dates)
		}
		det.ByTargetDate = append(det.ByTargetDate, DateCoverage{
			Target: d.Format(time.DateOnly), Coverage50: newCount(perRun(c[1]), perRun(c[0])), Coverage95: newCount(perRun(c[2]), perRun(c[0])),
		})
	}
	if rolling {
		det.Rolling = &RollingScores{
			ForecastsPerRun: runs[0].rollN, Origins: len(origins),
			WIS: metrics.Summarize(rWIS), RelativeWIS: metrics.Summarize(rRel),
			Coverage50: metrics.Summarize(r50), Coverage95: metrics.Summarize(r95),
		}
	}
	r.Intervals = det
	for _, o := range runs {
		if o.hub != nil {
			r.Hub = o.hub
			break
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// checkPointForecast validates Config.PointForecast.
func checkPointForecast(s string) error {
	switch s {
	case PointModel, PointPersistence:
		return nil
	}
	return fmt.Errorf("experiment: point forecast %q (want %q or %q)", s, PointModel, PointPersistence)
}

// WriteHub writes the first run's test-period quantile forecasts of each ε
// into dir as hub CSV files named fedcast-eps-<ε>.csv (see
// forecast.WriteHub), and returns the files written.
func (r *Report) WriteHub(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, res := range r.Results {
		name := filepath.Join(dir, "fedcast-eps-"+fileEps(float64(res.Epsilon))+".csv")
		var buf bytes.Buffer
		if err := forecast.WriteHub(&buf, res.Hub); err != nil {
			return files, fmt.Errorf("experiment: %s: %w", name, err)
		}
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			return files, err
		}
		files = append(files, name)
	}
	return files, nil
}

// intervalFigures draws the interval figures from the report's summaries:
// coverage of the 50 % and 95 % intervals against ε (nominal levels
// dashed), relative WIS against ε (1 = the baseline, dashed) and, per ε,
// the PIT histogram.
func (r *Report) intervalFigures(dir string) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, name string) error {
		written, err := saveFigure(p, dir, name, 6*vg.Inch, 4.5*vg.Inch)
		files = append(files, written...)
		return err
	}
	for _, f := range intervalByEps {
		p, err := r.intervalEpsFigure(f)
		if err != nil {
			return files, err
		}
		if p == nil {
			continue
		}
		if err := save(p, f.name); err != nil {
			return files, err
		}
	}
	for _, res := range r.Results {
		if res.Intervals == nil || len(res.Intervals.PIT) != forecast.PITBins {
			continue
		}
		p, err := pitFigure(res)
		if err != nil {
			return files, err
		}
		if err := save(p, "pit_eps_"+fileEps(float64(res.Epsilon))); err != nil {
			return files, err
		}
	}
	return files, nil
}

// intervalLine is one summary drawn against ε, with its reference level
// (dashed).
type intervalLine struct {
	label string
	get   func(Result) metrics.Summary
	ref   float64
}

// intervalFigure is a figure of summaries against ε.
type intervalFigure struct {
	name, title, ylabel string
	lines               []intervalLine
}

// intervalByEps are the interval figures drawn against ε.
var intervalByEps = []intervalFigure{
	{"interval_coverage", "Coverage of the forecast ranges (mean ± sd across runs; nominal dashed)", "share of outcomes inside",
		[]intervalLine{{"95 % range", func(r Result) metrics.Summary { return r.Coverage95 }, 0.95},
			{"50 % range", func(r Result) metrics.Summary { return r.Coverage50 }, 0.5}}},
	{"relative_wis", "Relative WIS against the hub-style baseline (mean ± sd)", "relative WIS (below 1: better)",
		[]intervalLine{{"quantile forecasts", func(r Result) metrics.Summary { return r.RelativeWIS }, 1}}},
}

// intervalEpsFigure draws figure f against ε (nil: no result has a value
// to draw).
func (r *Report) intervalEpsFigure(f intervalFigure) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.title
	p.X.Label.Text = "privacy budget ε (log scale; non-DP at the right)"
	p.Y.Label.Text = f.ylabel
	p.X.Scale = plot.LogScale{}
	p.Add(plotter.NewGrid())
	n := 0
	var xs plotter.XYs
	for i, s := range f.lines {
		pts, err := r.addIntervalLine(p, s, palette[i%len(palette)])
		if err != nil {
			return nil, err
		}
		if len(pts) > 0 {
			xs = pts
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	ticks := epsTicks(xs)
	for i := range ticks {
		if ticks[i].Value == nonDPx(r.Results) && hasNonDP(r.Results) {
			ticks[i].Label = "non-DP"
		}
	}
	p.X.Tick.Marker = ticks
	p.Legend.Top = true
	widenLogX(p, xs)
	if f.name == "interval_coverage" {
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top = false // the 95 % line runs along the top
	} else {
		p.Y.Min = math.Min(p.Y.Min, 0.8)
		p.Y.Max = math.Max(p.Y.Max, 1.1)
	}
	return p, nil
}

// addIntervalLine adds line s (mean ± sd per ε, and its dashed reference
// level) to p in colour col and returns its points (none: nothing drawn).
func (r *Report) addIntervalLine(p *plot.Plot, s intervalLine, col color.Color) (plotter.XYs, error) {
	var pts plotter.XYs
	var errs plotter.YErrors
	for _, res := range r.Results {
		e := float64(res.Epsilon)
		if math.IsInf(e, 1) {
			e = nonDPx(r.Results)
		}
		m := s.get(res)
		if math.IsNaN(m.Mean) {
			continue
		}
		pts = append(pts, plotter.XY{X: e, Y: m.Mean})
		errs = append(errs, struct{ Low, High float64 }{m.SD, m.SD})
	}
	if len(pts) == 0 {
		return nil, nil
	}
	l, sc, err := newLinePoints(pts)
	if err != nil {
		return nil, err
	}
	l.Color, sc.GlyphStyle.Color = col, col
	eb := &plotter.YErrorBars{XYs: pts, YErrors: errs}
	eb.LineStyle.Color = col
	eb.CapWidth = vg.Points(5)
	level := s.ref
	ref := plotter.NewFunction(func(float64) float64 { return level })
	ref.Color = col
	ref.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(l, sc, eb, ref)
	p.Legend.Add(s.label, l, sc)
	return pts, nil
}

// pitFigure draws res's PIT histogram against the flat line of a
// calibrated forecast.
func pitFigure(res Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "PIT histogram, " + epsLabel(float64(res.Epsilon)) + " (all runs; flat = calibrated)"
	p.X.Label.Text = "position of the outcome in the forecast distribution"
	p.Y.Label.Text = "density (share ÷ bin width)"
	var hs plotter.XYs
	for b := range forecast.PITBins {
		lo, hi := forecast.PITEdges[b], forecast.PITEdges[b+1]
		dens := res.Intervals.PIT[b] / (hi - lo)
		hs = append(hs, plotter.XY{X: lo, Y: dens}, plotter.XY{X: hi, Y: dens})
	}
	l, err := plotter.NewLine(hs)
	if err != nil {
		return nil, err
	}
	l.Color = palette[0]
	l.Width = vg.Points(2)
	one, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(plotter.NewGrid(), l, one)
	p.Legend.Add("observed", l)
	p.Legend.Add("calibrated", one)
	p.Legend.Top = true
	return p, nil
}

// nonDPx is where non-DP is drawn on a log ε axis: twice the largest
// finite ε (or 10 without one).
func nonDPx(rs []Result) float64 {
	m := 0.0
	for _, r := range rs {
		if e := float64(r.Epsilon); !math.IsInf(e, 1) {
			m = math.Max(m, e)
		}
	}
	if m == 0 {
		return 10
	}
	return 2 * m
}

func hasNonDP(rs []Result) bool {
	for _, r := range rs {
		if math.IsInf(float64(r.Epsilon), 1) {
			return true
		}
	}
	return false
}
