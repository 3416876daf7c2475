package backtest

import (
	"fmt"
	"slices"
	"sync"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

// WeeklyDesign adapts shared/model's weekly design (model.WeeklyDesign:
// the next 7-day total from a year of the area's own history, the national
// and state totals and the holidays of its state) to Design. Each campaign
// starts from the previous campaign's released model (the first from the
// design's public initial model); ranges come from the area's own past
// errors (forecast.WeeklyForecaster).
type WeeklyDesign struct {
	D    model.Design
	Seed uint64
	// Calib, Poisson and Blend are the ranges' and the median's settings
	// (forecast.WeeklyForecaster); a nil Calib is forecast.WeeklyCalibrator.
	Calib   *forecast.Calibrator
	Poisson float64
	Blend   bool
	// BlendDays, RampWeeks: forecast.WeeklyForecaster's. Ensemble > 1
	// forecasts with the mean of the current and the Ensemble−1 previous
	// campaigns' released models (post-processing; 0 or 1: the current).
	BlendDays, RampWeeks, Ensemble int

	mlp *nn.MLP

	mu       sync.Mutex
	released [][]float64 // the previous campaigns' models, oldest first (Init)
}

// NewWeeklyDesign returns the adaptor of d, which must have d.Weekly.
func NewWeeklyDesign(d model.Design, seed uint64) (*WeeklyDesign, error) {
	if d.Weekly == nil {
		return nil, fmt.Errorf("backtest: design %q is not a weekly design", d.Name)
	}
	if err := d.CheckCampaignStart(); err != nil {
		return nil, err
	}
	if err := d.Weekly.Validate(); err != nil {
		return nil, err
	}
	return &WeeklyDesign{D: d, Seed: seed, mlp: d.Network()}, nil
}

// Recipe returns D.
func (w *WeeklyDesign) Recipe() model.Design { return w.D }

// Layers are the network's sizes.
func (w *WeeklyDesign) Layers() []int { return w.mlp.Sizes() }

// Init starts from the design's initial model before the first campaign,
// and after it from the previous campaign's model as the design's
// CampaignStart says (model.Design.StartCampaign).
func (w *WeeklyDesign) Init(dst, previous []float64) {
	if previous != nil {
		w.mu.Lock()
		w.released = append(w.released, slices.Clone(previous))
		w.mu.Unlock()
		start := make([]float64, len(dst))
		if w.D.CampaignStart != "" {
			w.D.Init(w.mlp, start, fl.NewRand(w.Seed, fl.StreamInit))
		}
		w.D.StartCampaign(dst, previous, start)
		return
	}
	w.D.Init(w.mlp, dst, fl.NewRand(w.Seed, fl.StreamInit))
}

// Training returns the windows of the last HistoryWeeks weeks known on the
// campaign's start (forecast.WeeklyTraining, as a live LHA builds them).
func (w *WeeklyDesign) Training(own *series.Dataset, pub *forecast.PublicInputs) (x, y []float64, err error) {
	return forecast.WeeklyTraining(w.D, own, pub)
}

// Forecast forecasts each area's next 7-day total.
func (w *WeeklyDesign) Forecast(params []float64, own *series.Dataset, pub *forecast.PublicInputs) ([]forecast.Quantiles, error) {
	f := forecast.WeeklyForecaster{Design: w.D, Model: w.mlp, Params: params, Calib: forecast.WeeklyCalibrator(),
		Poisson: w.Poisson, Blend: w.Blend, BlendDays: w.BlendDays, RampWeeks: w.RampWeeks}
	if w.Ensemble > 1 {
		w.mu.Lock()
		f.Others = w.released[max(0, len(w.released)-(w.Ensemble-1)):]
		w.mu.Unlock()
	}
	if w.Calib != nil {
		f.Calib = *w.Calib
	}
	return f.Forecasts(own, pub)
}

// LocalTrain takes cfg.LocalEpochs Adam steps with the design's loss
// (model.Weekly.Loss; the squared error unless set), as fl.LocalUpdate
// does with the squared error.
func (w *WeeklyDesign) LocalTrain(t *nn.Trainer, params, x, y []float64, cfg fl.Config) {
	w.D.Weekly.SetLoss(t)
	t.Train(params, x, y, cfg.LocalEpochs, nn.AdamOptions{LearningRate: cfg.LearningRate})
}

func init() {
	for _, name := range []string{"weekly", "weekly-e15", "weekly-squared", "weekly-trend"} {
		registerDesign(name, func(seed uint64) (Design, error) {
			d, err := model.ReplayPreset(name)
			if err != nil {
				return nil, err
			}
			return NewWeeklyDesign(d, seed)
		})
	}
}
