package experiment

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Figures writes the paper's figures into dir, each as PNG and SVG:
// predicted-vs-true scatter per ε (first run), box plots of the areas'
// MAPE per ε (all runs), privacy–utility curves (MAE and MAPE against ε on
// log axes, non-DP as a dashed line) and convergence curves (test MAPE
// every few rounds, mean ± sd). It returns the files written.
func (r *Report) Figures(dir string) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, name string, w, h vg.Length) error {
		written, err := saveFigure(p, dir, name, w, h)
		files = append(files, written...)
		return err
	}
	for _, res := range r.Results {
		if len(res.PairsTrue) == 0 {
			continue
		}
		p, err := scatterPlot(res)
		if err != nil {
			return files, err
		}
		if err := save(p, "scatter_eps_"+fileEps(float64(res.Epsilon)), 5*vg.Inch, 5*vg.Inch); err != nil {
			return files, err
		}
	}
	summary, err := r.SummaryFigures(dir)
	files = append(files, summary...)
	if err != nil {
		return files, err
	}
	if p, err := r.boxPlot(); err != nil {
		return files, err
	} else if p != nil {
		if err := save(p, "mape_boxplot", 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return files, err
		}
	}
	return files, nil
}

// SummaryFigures writes the figures that need only the report's summaries
// (privacy–utility curves and convergence), so that they can be redrawn
// from a JSON file (fedcast report --figures).
func (r *Report) SummaryFigures(dir string) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, name string, w, h vg.Length) error {
		written, err := saveFigure(p, dir, name, w, h)
		files = append(files, written...)
		return err
	}
	for _, m := range []struct {
		name, label string
		get         func(Summary) (float64, float64)
		base        func(BaselineMetrics) float64
	}{
		{"mae", "MAE (cases)", func(s Summary) (float64, float64) { return s.MAE.Mean, s.MAE.SD },
			func(b BaselineMetrics) float64 { return b.MAE.Mean }},
		{"mape", "MAPE (%)", func(s Summary) (float64, float64) { return s.MAPE.Mean, s.MAPE.SD },
			func(b BaselineMetrics) float64 { return b.MAPE.Mean }},
	} {
		baseline := math.NaN()
		if r.Baseline != nil {
			baseline = m.base(r.Baseline.Metrics)
		}
		p, err := r.utilityPlot(m.label, m.get, baseline)
		if err != nil {
			return files, err
		}
		if p != nil {
			if err := save(p, "privacy_utility_"+m.name, 6*vg.Inch, 4.5*vg.Inch); err != nil {
				return files, err
			}
		}
	}
	ivFiles, err := r.intervalFigures(dir)
	files = append(files, ivFiles...)
	if err != nil {
		return files, err
	}
	if p, err := r.convergencePlot(); err != nil {
		return files, err
	} else if p != nil {
		if err := save(p, "convergence", 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return files, err
		}
	}
	return files, nil
}

// saveFigure writes p as dir/name.png and dir/name.svg.
func saveFigure(p *plot.Plot, dir, name string, w, h vg.Length) ([]string, error) {
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		f := filepath.Join(dir, name+ext)
		if err := p.Save(w, h, f); err != nil {
			return files, fmt.Errorf("experiment: writing %s: %w", f, err)
		}
		files = append(files, f)
	}
	return files, nil
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, color.RGBA{0xbc, 0xbd, 0x22, 0xff},
	color.RGBA{0x17, 0xbe, 0xcf, 0xff}, color.RGBA{0x9a, 0x9a, 0x9a, 0xff}, // grey, not black: a box's median line stays visible
}

func epsLabel(e float64) string {
	if math.IsInf(e, 1) {
		return "non-DP"
	}
	return fmt.Sprintf("ε = %g", e)
}

func scatterPlot(res Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Predicted vs true, " + epsLabel(float64(res.Epsilon)) + " (run 1)"
	p.X.Label.Text = "true cases (7-day average)"
	p.Y.Label.Text = "predicted cases"
	pts := make(plotter.XYs, len(res.PairsTrue))
	hi := 0.0
	for i := range pts {
		pts[i].X, pts[i].Y = res.PairsTrue[i], res.PairsPred[i]
		hi = math.Max(hi, res.PairsTrue[i])
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Color = color.NRGBA{0x1f, 0x77, 0xb4, 0x90} // translucent: dense clouds stay readable
	s.GlyphStyle.Radius = vg.Points(2)
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	diag.Color = color.Gray{0x60}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(plotter.NewGrid(), s, diag)
	p.Legend.Add("test window", s)
	p.Legend.Add("perfect forecast", diag)
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

func (r *Report) boxPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "MAPE per area, all runs"
	p.Y.Label.Text = "MAPE (%, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var names []string
	for i, res := range r.Results {
		vals := make(plotter.Values, 0, len(res.AreaMAPE))
		for _, v := range res.AreaMAPE {
			vals = append(vals, math.Max(v, 1e-2)) // log axis: floor at 0.01 %
		}
		if len(vals) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(vg.Points(30), float64(len(names)), vals)
		if err != nil {
			return nil, err
		}
		b.FillColor = palette[i%len(palette)]
		p.Add(b)
		names = append(names, epsLabel(float64(res.Epsilon)))
	}
	if len(names) == 0 {
		return nil, nil
	}
	p.NominalX(names...)
	return p, nil
}

// utilityPlot draws the measure against ε, with the non-DP value and, when
// baseline is not NaN, the no-change forecast's as dashed lines.
func (r *Report) utilityPlot(label string, get func(Summary) (float64, float64), baseline float64) (*plot.Plot, error) {
	var pts plotter.XYs
	var errs plotter.YErrors
	nonDP := math.NaN()
	for _, res := range r.Results {
		m, sd := get(res.Metrics)
		if math.IsNaN(m) || m <= 0 {
			continue
		}
		e := float64(res.Epsilon)
		if math.IsInf(e, 1) {
			nonDP = m
			continue
		}
		pts = append(pts, plotter.XY{X: e, Y: m})
		lo := math.Min(sd, m*0.999) // keep the bar above 0 on a log axis
		errs = append(errs, struct{ Low, High float64 }{lo, sd})
	}
	if len(pts) < 1 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = "Privacy–utility trade-off (mean ± sd across runs)"
	p.X.Label.Text = "privacy budget ε (log scale)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, epsTicks(pts)
	// The y range covers the error bars and the reference lines; a range
	// under a factor of 10 has no power of ten to label on a log axis, so
	// it is drawn on a linear one.
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, pt := range pts {
		lo, hi = math.Min(lo, pt.Y-errs[i].Low), math.Max(hi, pt.Y+errs[i].High)
	}
	for _, v := range []float64{nonDP, baseline} {
		if !math.IsNaN(v) && v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi/lo < 10 {
		p.Y.Label.Text = label
		pad := 0.05 * (hi - lo)
		p.Y.Min, p.Y.Max = math.Max(0, lo-pad), hi+pad
	} else {
		p.Y.Label.Text = label + ", log scale"
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	line, points, err := newLinePoints(pts)
	if err != nil {
		return nil, err
	}
	eb := &plotter.YErrorBars{XYs: pts, YErrors: errs}
	eb.LineStyle.Color = palette[0]
	eb.LineStyle.Width = vg.Points(1)
	eb.CapWidth = vg.Points(6)
	p.Add(plotter.NewGrid(), line, points, eb)
	p.Legend.Add("DP-FedAvg", line, points)
	if !math.IsNaN(nonDP) {
		lo, hi := pts[0].X, pts[len(pts)-1].X
		base, err := plotter.NewLine(plotter.XYs{{X: lo, Y: nonDP}, {X: hi, Y: nonDP}})
		if err != nil {
			return nil, err
		}
		base.Color = color.Black
		base.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(base)
		p.Legend.Add("non-DP", base)
	}
	if !math.IsNaN(baseline) && baseline > 0 {
		lo, hi := pts[0].X, pts[len(pts)-1].X
		base, err := plotter.NewLine(plotter.XYs{{X: lo, Y: baseline}, {X: hi, Y: baseline}})
		if err != nil {
			return nil, err
		}
		base.Color = palette[1]
		base.Width = vg.Points(1.5)
		base.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(base)
		p.Legend.Add("no change (persistence)", base)
	}
	p.Legend.Top = true
	widenLogX(p, pts)
	return p, nil
}

// widenLogX gives a log x axis room when every point has the same x (one
// ε): gonum would otherwise widen it by ±1 and reach 0.
func widenLogX(p *plot.Plot, pts plotter.XYs) {
	for _, q := range pts {
		if q.X != pts[0].X {
			return
		}
	}
	if len(pts) > 0 {
		p.X.Min, p.X.Max = pts[0].X/2, pts[0].X*2
	}
}

// epsTicks labels the ε axis at the grid's own values.
func epsTicks(pts plotter.XYs) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(pts))
	for i, p := range pts {
		ticks[i] = plot.Tick{Value: p.X, Label: fmt.Sprintf("%g", p.X)}
	}
	return ticks
}

// convergenceEpsilons are the budgets the paper's convergence figure shows;
// with a larger grid only these are drawn, so the lines stay readable.
var convergenceEpsilons = []float64{0.5, 1, 2, math.Inf(1)}

func showConvergence(results []Result, e float64) bool {
	if len(results) <= 5 {
		return true
	}
	for _, c := range convergenceEpsilons {
		if c == e {
			return true
		}
	}
	return false
}

func newLinePoints(pts plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, nil, err
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, nil, err
	}
	l.Color = palette[0]
	s.GlyphStyle.Color = palette[0]
	return l, s, nil
}

func (r *Report) convergencePlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Convergence: test MAPE during training (mean ± sd)"
	p.X.Label.Text = "federated round"
	p.Y.Label.Text = "test MAPE (%, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	n := 0
	for i, res := range r.Results {
		if !showConvergence(r.Results, float64(res.Epsilon)) {
			continue
		}
		var pts plotter.XYs
		var errs plotter.YErrors
		for _, c := range res.Convergence {
			if math.IsNaN(c.MAPE.Mean) || c.MAPE.Mean <= 0 {
				continue
			}
			pts = append(pts, plotter.XY{X: float64(c.Round), Y: c.MAPE.Mean})
			errs = append(errs, struct{ Low, High float64 }{math.Min(c.MAPE.SD, c.MAPE.Mean*0.999), c.MAPE.SD})
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := newLinePoints(pts)
		if err != nil {
			return nil, err
		}
		col := palette[i%len(palette)]
		l.Color, s.GlyphStyle.Color = col, col
		eb := &plotter.YErrorBars{XYs: pts, YErrors: errs}
		eb.LineStyle.Color = col
		eb.CapWidth = vg.Points(4)
		p.Add(l, s, eb)
		p.Legend.Add(epsLabel(float64(res.Epsilon)), l, s)
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.Legend.Top = true
	return p, nil
}
