package client

import (
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// Forecast is a model's forecast for one area of the LHA's data.
type Forecast struct {
	Area     string
	InputEnd time.Time // last day of the input window
	Target   time.Time // the day forecast
	// Value is the model's output: the 7-day average of new cases per
	// day on Target. It is not clamped; show max(0, Value).
	Value float64
}

// Forecasts computes each area's forecast with model for the study st:
// the newest complete input window of every area (series.LatestInput;
// the study's from/to do not apply, a forecast looks past the data), fed
// through the study's network. Areas too short for one input window are
// left out. The browser page and `fedcast client` both use it.
func Forecasts(st protocol.Study, model []float64, data *series.Dataset) ([]Forecast, error) {
	if len(st.Layers) < 2 {
		return nil, fmt.Errorf("%w: %d layers", ErrBadStudy, len(st.Layers))
	}
	m := nn.NewMLP(st.Layers...)
	if m.NumParams() != len(model) {
		return nil, fmt.Errorf("%w: the model has %d numbers, the study's layout %d", ErrBadStudy, len(model), m.NumParams())
	}
	opt, err := windowOptions(st)
	if err != nil {
		return nil, err
	}
	opt.From, opt.To = time.Time{}, time.Time{}
	var out []Forecast
	y := make([]float64, 1)
	for _, r := range data.Regions {
		x, inputEnd, target, err := series.LatestInput(r, opt)
		if err != nil {
			continue
		}
		m.Predict(model, x, y)
		out = append(out, Forecast{Area: r.Name, InputEnd: inputEnd, Target: target, Value: y[0]})
	}
	return out, nil
}

// windowOptions are the study's windowing settings.
func windowOptions(st protocol.Study) (series.WindowOptions, error) {
	sm, err := series.ParseSmoothing(st.Smoothing)
	if err != nil {
		return series.WindowOptions{}, fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	opt := series.WindowOptions{History: st.History, Horizon: st.Horizon, Smoothing: sm}
	for _, d := range []struct {
		s   string
		dst *time.Time
	}{{st.From, &opt.From}, {st.To, &opt.To}} {
		if d.s != "" {
			if *d.dst, err = time.Parse(time.DateOnly, d.s); err != nil {
				return opt, fmt.Errorf("%w: date %q", ErrBadStudy, d.s)
			}
		}
	}
	return opt, nil
}
