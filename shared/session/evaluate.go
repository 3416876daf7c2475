package session

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// Errors of Evaluate.
var (
	// ErrUnknownModel: the study's design (feature map or damping) is not
	// one this code knows, so it cannot forecast with the model.
	ErrUnknownModel = errors.New("session: the study's model type is unknown")
	// ErrNoTestDays: every window of the LHA's data went into training,
	// so there is nothing to test the model on.
	ErrNoTestDays = errors.New("session: no test days (all windows were used for training)")
)

// LayoutError is a model whose number of parameters does not fit the
// study's layers. It wraps ErrModelLayout.
type LayoutError struct {
	Have, Want int // numbers in the model; numbers the layers need
	Layers     []int
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("%v: %d numbers, the layout %v needs %d", ErrModelLayout, e.Have, e.Layers, e.Want)
}

func (e *LayoutError) Unwrap() error { return ErrModelLayout }

// Evaluation is what an LHA learns from the final model on its own data,
// all computed on this computer and never sent.
type Evaluation struct {
	// Guarded is each area's forecast as the guard headlines it (see
	// Guarded); Forecasts the headlined quantile forecasts alone.
	Guarded   []GuardedForecast
	Forecasts []AreaForecast
	// Recent is the interval coverage on the LHA's own recent days.
	Recent RecentCoverage
	// Hub is the headlined forecasts as a forecast-hub CSV file ("" without
	// any), Methods its sidecar (WriteMethods).
	Hub, Methods string
	// Model and Baseline are the model's and the no-change forecast's
	// errors on the same test windows: the latest (1 − TrainFraction) of
	// each area's windows by target date, the ones training left out
	// (nil when they could not be computed).
	Model, Baseline *metrics.Result
}

// Evaluate computes the final model's guarded forecasts (the guard's
// headline for each area), their hub file and its sidecar, and the local
// test metrics under the study's design, calling yield (when not
// nil) about every 30 ms so that a browser can paint. It returns what it
// could compute with the last error met: a *LayoutError or
// ErrUnknownModel (nothing computed), ErrNoTestDays (no metrics), or an
// error of the forecasts or the windows (the other parts may be there).
func Evaluate(st protocol.Study, data *series.Dataset, params []float64, yield func()) (Evaluation, error) {
	return EvaluateIssued(st, data, params, nil, yield)
}

// EvaluateIssued is Evaluate with the forecasts this LHA issued before
// (kept on its computer): the guard also scores the model on those whose
// outcomes are now in data (IssuedOrigins).
func EvaluateIssued(st protocol.Study, data *series.Dataset, params []float64, issued []Issued, yield func()) (Evaluation, error) {
	return EvaluateProgress(st, data, params, issued, yield, nil)
}

// EvaluateProgress is EvaluateIssued telling progress (when not nil) how
// far it has got, after each area of each of its passes over the areas
// (Progress), so that a page can show it: with hundreds of areas an
// evaluation takes seconds in a browser. progress is called on the
// caller's goroutine and should return quickly.
func EvaluateProgress(st protocol.Study, data *series.Dataset, params []float64, issued []Issued, yield func(), progress func(Progress)) (Evaluation, error) {
	var ev Evaluation
	if len(st.Layers) < 2 {
		return ev, &LayoutError{Have: len(params), Layers: st.Layers}
	}
	m := nn.NewMLP(st.Layers...)
	if m.NumParams() != len(params) {
		return ev, &LayoutError{Have: len(params), Want: m.NumParams(), Layers: st.Layers}
	}
	point, err := DesignPoint(st, m, params)
	if err != nil {
		return ev, fmt.Errorf("%w: %w", ErrUnknownModel, err)
	}
	opt, err := WindowOptions(st)
	if err != nil {
		return ev, err
	}
	var last error
	tl := newTally(progress, guardedPasses+1) // and the test days
	ev.Guarded, ev.Recent, last = guarded(st, data, point, IssuedOrigins(st, data, issued), yield, tl)
	if yield != nil {
		yield()
	}
	if err := ev.files(); err != nil {
		last = err
	}
	if yield != nil {
		yield()
	}
	res, base, err := testMetrics(st, data, opt, point, yield, tl)
	if err != nil {
		return ev, err
	}
	ev.Model, ev.Baseline = res, base
	return ev, last
}

// testMetrics scores point and the no-change forecast on the test windows
// of every area of data, counting a pass over the areas on tl.
func testMetrics(st protocol.Study, data *series.Dataset, opt series.WindowOptions, point forecast.Point, yield func(), tl *tally) (res, base *metrics.Result, err error) {
	pause := pacer(yield)
	tl.pass(len(data.Regions))
	var y, yhat, persist []float64
	for _, r := range data.Regions {
		// The test windows of this area: the latest (1 − train_fraction)
		// of its windows by target date, as in training's split.
		areas, err := series.MakeWindows(&series.Dataset{Regions: []*series.Region{r}}, opt)
		if err != nil {
			return nil, nil, err
		}
		_, test := series.SplitAreas(areas, series.Temporal, st.TrainFraction, nil)
		tx, ty := series.Stack(test)
		if n := len(ty); n > 0 {
			h := len(tx) / n
			p := make([]float64, n)
			model.Persistence(tx, p)
			for i := range ty {
				yhat = append(yhat, point(tx[i*h:(i+1)*h]))
			}
			y, persist = append(y, ty...), append(persist, p...)
		}
		tl.area()
		pause()
	}
	tl.end()
	if len(y) == 0 {
		return nil, nil, ErrNoTestDays
	}
	r, b := metrics.Compute(y, yhat), metrics.Compute(y, persist)
	return &r, &b, nil
}

// EpsilonMatches reports whether the coordinator's ε and the one
// recomputed here agree to 1e-9 relative (both come from the same
// accountant code; a difference below that is rounding). An infinite ε
// matches only an infinite one.
func EpsilonMatches(coordinator, local float64) bool {
	if math.IsInf(coordinator, 0) || math.IsInf(local, 0) {
		return coordinator == local
	}
	return math.Abs(coordinator-local) <= 1e-9*math.Max(1, math.Abs(coordinator))
}

// files fills Forecasts, Hub and Methods from Guarded.
func (ev *Evaluation) files() error {
	for _, g := range ev.Guarded {
		ev.Forecasts = append(ev.Forecasts, g.Forecast)
	}
	if len(ev.Forecasts) == 0 {
		return nil
	}
	var b, m strings.Builder
	if err := forecast.WriteHub(&b, HubForecasts(ev.Forecasts)); err != nil {
		return err
	}
	if err := WriteMethods(&m, ev.Guarded); err != nil {
		return err
	}
	ev.Hub, ev.Methods = b.String(), m.String()
	return nil
}
