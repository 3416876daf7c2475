package model

import (
	"math"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

// The weekly design's outputs beyond the network's one median: a trend
// median (Weekly.Median, the eighteenth and nineteenth rounds of
// docs/results.md "Design over time") and a quantile head
// (Weekly.Quantiles, the seventeenth round). Both are off in
// WeeklyDesign.

// TrendFactor is the share of the last weekly log-change a trend median
// (Weekly.Median) carries on.
const TrendFactor = 0.5

// PublicChange is the last weekly log-change of the area's state total as
// known on origin, ℓ(S(origin)) − ℓ(S(origin−7)), or the national total's
// where the state's does not cover those 14 days; false when neither
// does.
func PublicChange(pub Public, origin time.Time) (float64, bool) {
	for _, r := range []*series.Region{pub.State, pub.National} {
		if g, ok := weekChange(r, origin); ok {
			return g, true
		}
	}
	return 0, false
}

// weekChange is ℓ(S(origin)) − ℓ(S(origin−7)) of r.
func weekChange(r *series.Region, origin time.Time) (float64, bool) {
	now, ok := Total7(r, origin)
	before, ok2 := Total7(r, origin.AddDate(0, 0, -7))
	if !ok || !ok2 {
		return 0, false
	}
	return l(now) - l(before), true
}

// median applies Median to the network's forecast total nn of the window
// ending on origin (S(origin) known).
func (w Weekly) median(r *series.Region, pub Public, origin time.Time, nn float64) float64 {
	var g float64
	off := w.TrendOffHolidays && pub.Holidays != nil &&
		(pub.Holidays.Share(origin) > 0 || pub.Holidays.Share(origin.AddDate(0, 0, -7)) > 0)
	switch {
	case w.Median == "":
		return nn
	case off && w.Median == "network+state-trend":
		return nn
	case off:
		// no change
	case w.Median == "own-trend":
		g, _ = weekChange(r, origin)
	default: // "state-trend", "network+state-trend"
		g, _ = PublicChange(pub, origin)
	}
	s, _ := Total7(r, origin)
	trend := math.Expm1(l(s) + max(-maxLogChange, min(maxLogChange, TrendFactor*g)))
	if w.Median == "network+state-trend" {
		return math.Expm1((l(nn) + l(trend)) / 2)
	}
	return trend
}

// QuantileLevels are the levels of a quantile head's outputs, the hub's.
var QuantileLevels = []float64{0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975}

// quantileStart is the start of a quantile head's output biases: the
// normal quantiles times 0.25 (forecast.DefaultCalibrator's prior spread).
var quantileStart = []float64{-0.25 * 1.959963984540054, -0.25 * 1.2815515655446004, -0.25 * 0.6744897501960817, 0,
	0.25 * 0.6744897501960817, 0.25 * 1.2815515655446004, 0.25 * 1.959963984540054}

// medianOutput is the index of the median among QuantileLevels.
const medianOutput = 3

// Outputs returns the number of network outputs: one, or one per
// quantile level with Quantiles.
func (w Weekly) Outputs() int {
	if w.Quantiles != "" {
		return len(QuantileLevels)
	}
	return 1
}

// SetLoss makes t minimise the design's local loss: TrainLoss's, or the
// pinball loss at QuantileLevels with Quantiles.
func (w Weekly) SetLoss(t *nn.Trainer) {
	if w.Quantiles != "" {
		t.SetPinball(QuantileLevels)
		return
	}
	t.SetLoss(w.TrainLoss())
}

// medianOf is a network's median output: the only one, or a quantile
// head's median after sorting (the outputs may cross).
func medianOf(out []float64) float64 {
	if len(out) == 1 {
		return out[0]
	}
	s := slices.Clone(out)
	slices.Sort(s)
	return s[medianOutput]
}

// PredictQuantiles returns a quantile head's forecast of the total of
// origin+1 … origin+7 at QuantileLevels, and false when the area's series
// does not cover the window or the design has no quantile head. The
// outputs are sorted; the median's log-change is damped as in
// ForecastTotal (its value is PredictTotals'), and every other level
// keeps its distance to the median on the log scale (clamped to ±5):
// q_τ = (S(origin)+1)·exp(damping·o₀.₅ + (o_τ − o₀.₅)) − 1, at least 0.
func (w Weekly) PredictQuantiles(m *nn.MLP, params []float64, r *series.Region, pub Public, origin time.Time, damping float64) ([]float64, bool) {
	k := w.Outputs()
	if k == 1 {
		return nil, false
	}
	x := make([]float64, w.Inputs())
	if !w.Input(x, r, pub, origin) {
		return nil, false
	}
	out := make([]float64, k)
	m.Predict(params, x, out)
	slices.Sort(out)
	med := ForecastTotal(r, origin, out[medianOutput], damping)
	if math.IsNaN(med) {
		return nil, false
	}
	q := make([]float64, k)
	for i, o := range out {
		d := max(-maxLogChange, min(maxLogChange, o-out[medianOutput]))
		q[i] = max(0, math.Expm1(math.Log1p(med)+d))
		if d == 0 {
			q[i] = med // PredictTotals' value, to the bit
		}
	}
	for i := 1; i < k; i++ {
		q[i] = max(q[i], q[i-1])
	}
	return q, true
}
