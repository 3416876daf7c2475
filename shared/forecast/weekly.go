package forecast

import (
	"math"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

// WeeklyCalibrator returns the constants of the weekly design's ranges
// (model.WeeklyDesign): DefaultCalibrator's, with the errors of the LHA's
// own forecasts whose target week ended in the last 28 days (28 days
// beat 56 by the tuning rule of docs/results.md, "Design over time").
func WeeklyCalibrator() Calibrator {
	c := DefaultCalibrator()
	c.Lookback = 28
	return c
}

// WeeklyForecaster makes one area's quantile forecasts of the next 7-day
// total with the weekly design's released model. Its ranges come from the
// area's own errors only: the log errors of the same model's forecasts for
// the area's past origins whose target week is already reported, over the
// calibrator's lookback (targets ending in origin−Lookback+1 … origin).
// Nothing pooled over areas is used; the public inputs are public.
type WeeklyForecaster struct {
	Design model.Design
	Model  *nn.MLP
	Params []float64
	Calib  Calibrator
	// Poisson ≥ 0 widens the ranges by a counting term: scale² +=
	// Poisson/(ŷ + 1), ŷ the forecast total (0: off).
	Poisson float64
	// Blend moves the median towards no change by the area's own skill:
	// on the log scale, the model's weight is e²(no change) / (e²(no
	// change) + e²(model)), the mean squared log errors of both over the
	// calibrator's lookback (the area's own data only).
	Blend bool
	// BlendDays, when above the calibrator's lookback, is the span of past
	// origins Blend's weight rests on (0: the lookback).
	BlendDays int
	// Others are earlier released models of the same network (for example
	// the previous campaigns'): the forecast change is the mean of the
	// log-changes of Params and Others (an ensemble of released models is
	// post-processing; it costs no privacy). Empty: Params alone.
	Others [][]float64
	// RampWeeks > 0 damps the forecast change more while the area's own
	// series is short: the damping is multiplied by min(1, w/RampWeeks),
	// w the weeks from the area's first day to the origin (0: off).
	RampWeeks int
}

// Forecast returns the quantiles of the total reported over origin+1 …
// origin+7 for the area r, read from reports of days ≤ origin. When the
// area's series is too short for the model's inputs the median is no
// change (the last 7-day total) with the prior's spread; when it is too
// short even for that, every quantile is 0.
func (f WeeklyForecaster) Forecast(r *series.Region, pub model.Public, origin time.Time) Quantiles {
	origin = series.Date(origin)
	c := f.Calib
	span := c.Lookback
	if f.Blend {
		span = max(span, f.BlendDays)
	}
	// Past origins whose target (origin' + 7) is known on origin; the
	// ranges use those of the last Lookback days, the blend all of them.
	var past []time.Time
	for o := origin.AddDate(0, 0, -6-span); !o.After(origin.AddDate(0, 0, -7)); o = o.AddDate(0, 0, 1) {
		past = append(past, o)
	}
	first := origin.AddDate(0, 0, -6-c.Lookback)
	preds := f.predict(r, pub, append(past, origin))
	last, ok := model.Total7(r, origin)
	if !ok {
		return Quantiles{}
	}
	point := preds[len(past)]
	if math.IsNaN(point) {
		point = last
	}
	wt := 1.0
	if f.Blend {
		wt = ownSkillWeight(r, past, preds)
		point = blendLog(point, last, wt)
	}
	var errs []float64
	for i, o := range past {
		y, ok := model.Total7(r, o.AddDate(0, 0, 7))
		if !ok || math.IsNaN(preds[i]) || o.Before(first) {
			continue
		}
		p := preds[i]
		if f.Blend {
			nc, okNC := model.Total7(r, o)
			if !okNC {
				continue
			}
			p = blendLog(p, nc, wt)
		}
		errs = append(errs, LogError(y, p))
	}
	em := c.Widen(c.FitErrors(errs), []float64{last}, point)
	if c.Public > 0 {
		em = c.WidenPublic(em, publicChange(pub, origin))
	}
	if f.Poisson > 0 {
		em.Scale = math.Sqrt(em.Scale*em.Scale + f.Poisson/(math.Max(point, 0)+1))
	}
	q := em.Quantiles(point)
	if f.Design.Weekly.Quantiles != "" {
		q = f.headRanges(r, pub, origin, q)
	}
	return q
}

// headRanges returns the forecast of a quantile head (model.Weekly.
// Quantiles): "head" its own quantiles, "mix" the mean on the log scale
// of its quantiles and own (the own errors' ranges around the same
// median), level by level. Where the head cannot forecast, own.
func (f WeeklyForecaster) headRanges(r *series.Region, pub model.Public, origin time.Time, own Quantiles) Quantiles {
	w := f.Design.Weekly
	hq, ok := w.PredictQuantiles(f.Model, f.Params, r, pub, origin, f.damping(r, origin))
	if !ok {
		return own
	}
	var q Quantiles
	for i := range q {
		q[i] = hq[i]
		if w.Quantiles == "mix" {
			q[i] = math.Expm1((math.Log1p(hq[i]) + math.Log1p(own[i])) / 2)
		}
	}
	return monotone(q)
}

// damping is the design's damping of the forecast change for r on origin,
// ramped by RampWeeks.
func (f WeeklyForecaster) damping(r *series.Region, origin time.Time) float64 {
	damping := f.Design.Damping
	if f.RampWeeks > 0 && len(r.Cases) > 0 {
		weeks := origin.Sub(series.Date(r.Start)).Hours() / (24 * 7)
		damping *= max(0, min(1, weeks/float64(f.RampWeeks)))
	}
	return damping
}

// publicChange is model.PublicChange, NaN where it is unknown.
func publicChange(pub model.Public, origin time.Time) float64 {
	if g, ok := model.PublicChange(pub, origin); ok {
		return g
	}
	return math.NaN()
}

// predict returns the forecast totals of the windows ending on origins
// (NaN where the area's series does not cover one): the model's, or the
// ensemble's mean on the log scale, with the ramped damping.
func (f WeeklyForecaster) predict(r *series.Region, pub model.Public, origins []time.Time) []float64 {
	w := *f.Design.Weekly
	damping := f.damping(r, origins[len(origins)-1])
	params := f.personal(r, pub, origins[len(origins)-1])
	var preds []float64
	if w.PersonalReleasedErrors && w.PersonalSteps > 0 {
		// The past forecasts (the ranges' errors) from the released model,
		// the origin's from the personalised copy.
		preds = w.PredictTotals(f.Model, f.Params, r, pub, origins, damping)
		last := len(origins) - 1
		preds[last] = w.PredictTotals(f.Model, params, r, pub, origins[last:], damping)[0]
	} else {
		preds = w.PredictTotals(f.Model, params, r, pub, origins, damping)
	}
	if len(f.Others) == 0 {
		return preds
	}
	for i, p := range preds {
		preds[i] = math.Log1p(max(p, 0)) // NaN stays NaN
	}
	for _, params := range f.Others {
		for i, p := range w.PredictTotals(f.Model, params, r, pub, origins, damping) {
			preds[i] += math.Log1p(max(p, 0))
		}
	}
	for i, p := range preds {
		preds[i] = math.Expm1(p / float64(1+len(f.Others)))
	}
	return preds
}

// personal returns the model the area forecasts with on origin: Params,
// or with Weekly.PersonalSteps > 0 a copy fine-tuned on the area's own
// windows known on origin (model.Weekly.Windows reads no later report).
func (f WeeklyForecaster) personal(r *series.Region, pub model.Public, origin time.Time) []float64 {
	w := f.Design.Weekly
	if w.PersonalSteps == 0 {
		return f.Params
	}
	x, y := w.Windows(r, pub, origin)
	if len(y) == 0 {
		return f.Params
	}
	p := append([]float64(nil), f.Params...)
	t := nn.NewTrainer(f.Model)
	w.SetLoss(t)
	t.Train(p, x, y, w.PersonalSteps, nn.AdamOptions{LearningRate: w.PersonalRate})
	return p
}

// blendLog is exp(w·log(a+1) + (1−w)·log(b+1)) − 1.
func blendLog(a, b, w float64) float64 {
	if w == 1 {
		return a
	}
	return math.Expm1(w*math.Log1p(math.Max(a, 0)) + (1-w)*math.Log1p(math.Max(b, 0)))
}

// ownSkillWeight is the model's weight in WeeklyForecaster.Blend, from the
// area's own past forecasts preds at the origins past (1 when no past
// target is known or both errors are 0).
func ownSkillWeight(r *series.Region, past []time.Time, preds []float64) float64 {
	var sm, sn float64
	for i, o := range past {
		y, ok := model.Total7(r, o.AddDate(0, 0, 7))
		nc, okNC := model.Total7(r, o)
		if !ok || !okNC || math.IsNaN(preds[i]) {
			continue
		}
		em, en := LogError(y, preds[i]), LogError(y, nc)
		sm, sn = sm+em*em, sn+en*en
	}
	if sm+sn == 0 {
		return 1
	}
	return sn / (sm + sn)
}
