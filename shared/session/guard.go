package session

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// GuardedForecast is one area's forecast as the guard lets the LHA see
// it: the headline (method, value, reason) and the quantile forecast of
// the headlined method, the model's own forecast beside it. Everything
// here is computed on this computer and never sent.
type GuardedForecast struct {
	forecast.Headline
	// Forecast is the headlined forecast: no change's, or the model's with
	// every level held inside the plausible band.
	Forecast AreaForecast
	// Model is the shared model's own forecast (unclamped quantiles).
	Model AreaForecast
}

// Guarded computes every area's guarded forecast (forecast.Guard): the
// model and no change are scored on the weekly origins each area kept
// out of training (windows whose target comes after the area's last
// training target) and on the issued origins (forecasts the LHA issued
// earlier, with their outcomes; may be nil); the model's forecast is held
// inside the band of the LHA's own history. The coverage is that of the
// headlined ranges (each area's own method). yield may be nil.
func Guarded(st protocol.Study, data *series.Dataset, point forecast.Point, issued []forecast.GuardOrigin, yield func()) ([]GuardedForecast, RecentCoverage, error) {
	return guarded(st, data, point, issued, yield, nil)
}

// guardedPasses is the number of passes over the areas guarded counts on
// its tally: the model's forecasts, no change's, the weeks held out.
const guardedPasses = 3

// guarded is Guarded counting its passes over the areas on tl.
func guarded(st protocol.Study, data *series.Dataset, point forecast.Point, issued []forecast.GuardOrigin, yield func(), tl *tally) ([]GuardedForecast, RecentCoverage, error) {
	var cov RecentCoverage
	mf, _, err := pointForecasts(st, data, point, yield, tl)
	if err != nil {
		return nil, cov, err
	}
	bf, _, err := pointForecasts(st, data, forecast.Persistence, yield, tl)
	if err != nil {
		return nil, cov, err
	}
	held, err := heldOutOrigins(st, data, point, yield, tl)
	if err != nil {
		return nil, cov, err
	}
	sm, _ := series.ParseSmoothing(st.Smoothing) // checked by pointForecasts
	pause := pacer(yield)
	var history []forecast.Series
	for _, r := range data.Regions {
		history = append(history, forecast.Smooth(r, sm))
		pause()
	}
	p := st.Horizon
	if p == 0 {
		p = series.DefaultHorizon
	}
	base := map[string]AreaForecast{}
	for _, f := range bf {
		base[f.Area] = f
	}
	changes := forecast.LargestChanges(nil, p) // the same for every area of the file
	for i := range history {
		changes = changes.Merge(forecast.LargestChanges(history[i:i+1], p))
		pause()
	}
	byArea := map[string][]forecast.GuardOrigin{}
	for _, o := range issued {
		byArea[o.Area] = append(byArea[o.Area], o)
	}
	pause()
	out := make([]GuardedForecast, 0, len(mf))
	for _, m := range mf {
		pause()
		b, ok := base[m.Area]
		if !ok {
			continue
		}
		nc := b.Point
		band, _ := changes.Band(nc)
		j := forecast.Judge(append(append([]forecast.GuardOrigin(nil), byArea[m.Area]...), held[m.Area]...))
		g := GuardedForecast{Headline: forecast.Guard(j, m.Point, nc, band), Forecast: b, Model: m}
		if j.Method == forecast.MethodModel {
			g.Forecast = m
			g.Forecast.Point = g.ModelShown
			g.Forecast.Quantiles = band.ClampQuantiles(m.Quantiles)
		}
		cov = cov.add(g.Forecast.Coverage)
		out = append(out, g)
	}
	return out, cov, nil
}

// HeldOutOrigins returns, for each area, the weekly origins at the end of
// its file that training left out: windows (the study's H, P and
// smoothing, from its start date on, up to the file's end) whose target
// comes after the area's last training target, one week apart counting
// back from the latest, with the model's and no change's forecasts and
// the outcome.
func HeldOutOrigins(st protocol.Study, data *series.Dataset, point forecast.Point) (map[string][]forecast.GuardOrigin, error) {
	return heldOutOrigins(st, data, point, nil, nil)
}

// heldOutOrigins is HeldOutOrigins calling yield (when not nil) about
// every 30 ms, so that a large file does not freeze the page, and
// counting a pass over the areas on tl.
func heldOutOrigins(st protocol.Study, data *series.Dataset, point forecast.Point, yield func(), tl *tally) (map[string][]forecast.GuardOrigin, error) {
	opt, err := WindowOptions(st)
	if err != nil {
		return nil, err
	}
	open := opt
	open.To = time.Time{}
	out := map[string][]forecast.GuardOrigin{}
	pause := pacer(yield)
	tl.pass(len(data.Regions))
	for _, r := range data.Regions {
		pause()
		if os, ok := heldOutArea(st, r, opt, open, point); ok {
			out[r.Name] = os
		}
		tl.area()
	}
	return out, nil
}

// heldOutArea returns the weekly origins of one area that training left
// out (HeldOutOrigins); false when the area is too short for the study
// (nothing trained on it, nothing to score). opt are the study's window
// options, open the same without an end date.
func heldOutArea(st protocol.Study, r *series.Region, opt, open series.WindowOptions, point forecast.Point) ([]forecast.GuardOrigin, bool) {
	one := &series.Dataset{Regions: []*series.Region{r}}
	areas, err := series.MakeWindows(one, opt)
	if err != nil {
		return nil, false
	}
	train, _ := series.SplitAreas(areas, series.Temporal, st.TrainFraction, nil)
	var trainEnd time.Time
	for _, w := range train[0].Windows {
		if w.Target.After(trainEnd) {
			trainEnd = w.Target
		}
	}
	all, err := series.MakeWindows(one, open)
	if err != nil {
		return nil, false
	}
	var latest time.Time
	for _, w := range all[0].Windows {
		if w.Target.After(trainEnd) && w.InputEnd.After(latest) {
			latest = w.InputEnd
		}
	}
	var os []forecast.GuardOrigin
	for _, w := range all[0].Windows {
		// Only the weekly origins counted back from the latest are
		// scored (forecast.WeeklyOrigins): the model runs on those alone.
		daysBack := int(math.Round(latest.Sub(w.InputEnd).Hours() / 24))
		if w.Target.After(trainEnd) && daysBack%7 == 0 {
			os = append(os, forecast.GuardOrigin{Area: r.Name, InputEnd: w.InputEnd,
				Model: point(w.X), NoChange: forecast.Persistence(w.X), Actual: w.Y})
		}
	}
	return forecast.WeeklyOrigins(os), true
}

// GuardedHub converts guarded forecasts to hub rows (the headlined
// forecast of each area).
func GuardedHub(gs []GuardedForecast) []forecast.HubForecast {
	fs := make([]AreaForecast, len(gs))
	for i, g := range gs {
		fs[i] = g.Forecast
	}
	return HubForecasts(fs)
}

// MethodsColumns are the columns of the sidecar file FILE.methods.csv
// written beside a hub file.
var MethodsColumns = []string{"location", "method", "weeks_judged", "model_mae", "no_change_mae", "model_forecast", "model_clamped", "value"}

// WriteMethods writes the sidecar of a hub file: which method each area's
// headline used, on how many weeks it was judged, both errors, the
// model's own forecast and whether it was clamped.
func WriteMethods(w io.Writer, gs []GuardedForecast) error {
	rows := [][]string{MethodsColumns}
	for _, g := range gs {
		rows = append(rows, []string{g.Forecast.Area, string(g.Method), fmt.Sprint(g.Origins), num(g.ModelMAE), num(g.NoChangeMAE),
			num(g.Model.Point), fmt.Sprint(g.ModelClamped), num(g.Value)})
	}
	return writeCSV(w, rows)
}

// num formats a figure of the sidecar: 3 decimals, empty when undefined.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func writeCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}
