package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// WriteTable prints the paper-style table: mean ± sd across runs per ε.
func (r *Report) WriteTable(w io.Writer) error {
	s := r.Setting
	period := "all data"
	if s.From != "" || s.To != "" {
		period = s.From + " .. " + s.To
	}
	fmt.Fprintf(w, "Study window %s: %d areas (%d–%d windows each), T=%d rounds, m=%d (q=%.4g), E=%d, S=%g, δ=%g, %s split, %d run(s), seed %d\n",
		period, s.Areas, s.WindowsPerArea[0], s.WindowsPerArea[1], s.Rounds, s.Config.ClientsPerRound, s.SampleRate,
		s.LocalEpochs, s.Clip, s.Delta, s.Split, s.Runs, s.Seed)
	if s.Preset != "" || s.Features != "" {
		fmt.Fprintf(w, "Design: preset %s, features %s, model %s, %s accountant\n", orDash(s.Preset), orDash(string(s.Features)), modelString(s.Model), orDash(s.Accountant))
	}
	fmt.Fprintf(w, "mean ± sd across runs (sd with divisor n−1); MAPE/MdAPE over non-zero targets; rel. = model ÷ no-change forecast, per run\n\n")
	fmt.Fprintf(w, "%-6s %-9s %-24s %-18s %-18s %-18s %-16s %-16s %-16s\n", "ε", "c", "MSE", "MAE", "MAPE %", "MdAPE %", "R²", "rel. MAE", "rel. MAPE")
	for _, res := range r.Results {
		m := res.Metrics
		c := fmt.Sprintf("%.4f", res.NoiseMultiplier)
		if math.IsInf(float64(res.Epsilon), 1) {
			c = "-"
		}
		fmt.Fprintf(w, "%-6s %-9s %-24s %-18s %-18s %-18s %-16s %-16s %-16s\n", epsString(float64(res.Epsilon)), c,
			pm(m.MSE.Mean, m.MSE.SD, 2), pm(m.MAE.Mean, m.MAE.SD, 2), pm(m.MAPE.Mean, m.MAPE.SD, 2),
			pm(m.MdAPE.Mean, m.MdAPE.SD, 2), pm(m.R2.Mean, m.R2.SD, 3), ratio(res.RelativeMAE), ratio(res.RelativeMAPE))
	}
	if b := r.Baseline; b != nil {
		fmt.Fprintf(w, "%-6s %-9s %-24s %-18s %-18s %-18s %-16s\n", "", b.Name, "", pm(b.Metrics.MAE.Mean, b.Metrics.MAE.SD, 2),
			pm(b.Metrics.MAPE.Mean, b.Metrics.MAPE.SD, 2), "", pm(b.Metrics.R2.Mean, b.Metrics.R2.SD, 3))
	}
	if len(r.Results) > 0 && r.Results[0].ZeroTargets > 0 {
		fmt.Fprintf(w, "\n%d of %d test targets per run are zero and were left out of MAPE/MdAPE.\n", r.Results[0].ZeroTargets, r.Results[0].TestWindows)
	}
	r.writeIntervalTable(w)
	r.writeStrategyTable(w)
	fmt.Fprintf(w, "\nWall time %.1f s on %d core(s).\n", s.WallSeconds, s.GOMAXPROCS)
	return nil
}

// ratio formats a relative measure; "–" when absent (older reports).
func ratio(r *Ratio) string {
	if r == nil {
		return "–"
	}
	return pm(r.Mean, r.SD, 3)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func modelString(sizes []int) string {
	parts := make([]string, len(sizes))
	for i, v := range sizes {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, "-")
}

func pm(mean, sd float64, prec int) string {
	if math.Abs(mean) >= 1e5 {
		return fmt.Sprintf("%.3g ± %.3g", mean, sd)
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, mean, prec, sd)
}

// WriteJSON writes the report as indented JSON. Undefined measures (NaN,
// e.g. MAPE when every target is zero) are null.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteFiles writes report.json and the figures into dir.
func (r *Report) WriteFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	f, err := os.Create(filepath.Join(dir, "report.json"))
	if err != nil {
		return nil, err
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	written = append(written, f.Name())
	figs, err := r.Figures(dir)
	written = append(written, figs...)
	return written, err
}

func fileEps(e float64) string {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return strings.ReplaceAll(fmt.Sprintf("%g", e), ".", "p")
}

// writeIntervalTable prints the quantile forecasts' scores per ε.
func (r *Report) writeIntervalTable(w io.Writer) {
	if len(r.Results) == 0 || r.Results[0].Intervals == nil {
		return
	}
	fmt.Fprintf(w, "\nQuantile forecasts (point forecaster: %s; intervals from each area's own recent errors):\n", r.Setting.PointForecast)
	fmt.Fprintf(w, "%-6s %-16s %-16s %-16s %-16s %-26s %-16s %-16s\n", "ε", "WIS", "relative WIS", "coverage 50 %", "coverage 95 %", "95 %/run [Wilson]", "95 % in-sample", "rolling rel. WIS")
	for _, res := range r.Results {
		d := res.Intervals
		if d == nil {
			continue
		}
		roll := "-"
		if d.Rolling != nil {
			roll = pm(d.Rolling.RelativeWIS.Mean, d.Rolling.RelativeWIS.SD, 3)
		}
		c := d.Coverage95Pooled
		fmt.Fprintf(w, "%-6s %-16s %-16s %-16s %-16s %-26s %-16s %-16s\n", epsString(float64(res.Epsilon)),
			pm(res.WIS.Mean, res.WIS.SD, 2), pm(res.RelativeWIS.Mean, res.RelativeWIS.SD, 3),
			pm(res.Coverage50.Mean, res.Coverage50.SD, 3), pm(res.Coverage95.Mean, res.Coverage95.SD, 3),
			fmt.Sprintf("%d/%d [%.3f, %.3f]", c.Covered, c.N, c.Wilson[0], c.Wilson[1]),
			pm(d.Coverage95InSample.Mean, d.Coverage95InSample.SD, 3), roll)
	}
	if d := r.Results[0].Intervals; d != nil && len(d.ByTargetDate) > 0 {
		fmt.Fprintf(w, "Test target dates (ε = %s, per run): ", epsString(float64(r.Results[0].Epsilon)))
		for i, bd := range d.ByTargetDate {
			if i > 0 {
				fmt.Fprint(w, "; ")
			}
			fmt.Fprintf(w, "%s: 50 %% %.3f, 95 %% %.3f (n=%d)", bd.Target, bd.Coverage50.Rate, bd.Coverage95.Rate, bd.Coverage95.N)
		}
		fmt.Fprintln(w)
		if d.Rolling != nil {
			fmt.Fprintf(w, "Rolling origins (every study window, %d origins, %d forecasts per run): coverage 50 %% %s, 95 %% %s\n",
				d.Rolling.Origins, d.Rolling.ForecastsPerRun, pm(d.Rolling.Coverage50.Mean, d.Rolling.Coverage50.SD, 3),
				pm(d.Rolling.Coverage95.Mean, d.Rolling.Coverage95.SD, 3))
		}
	}
}
