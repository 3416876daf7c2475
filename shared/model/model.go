package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

// Features names how a window of smoothed counts becomes the network's
// inputs and target, and how the network's output becomes a forecast.
type Features string

// The feature maps.
const (
	// Counts is the paper's: the network reads the H smoothed counts as
	// they are and outputs the forecast count itself.
	Counts Features = "counts"
	// LogChange is fedcast's default: with ℓ(v) = ln(1+v) and x_H the last
	// input, the inputs are ℓ(x_i) − ℓ(x_H) and the target is
	// ℓ(y) − ℓ(x_H); the forecast is exp(ℓ(x_H) + output) − 1. Every
	// window is scaled by its own level (a function of that window alone,
	// so it costs no privacy), a county of 5,000 and one of 5 cases a day
	// look alike, and an output of 0 is the no-change forecast.
	LogChange Features = "log-change"
)

// Parse returns the feature map named s; "" is Counts (files and messages
// written before the field existed).
func Parse(s string) (Features, error) {
	switch Features(s) {
	case "", Counts:
		return Counts, nil
	case LogChange:
		return LogChange, nil
	case Lipschitz:
		return Lipschitz, nil
	}
	return "", fmt.Errorf("model: unknown features %q (want %q, %q or %q)", s, Counts, LogChange, Lipschitz)
}

// Anchored reports whether an all-zero output means "no change": then
// Features.Init starts from the pretrained public model and InitRandom
// from the no-change forecast.
func (f Features) Anchored() bool { return f == LogChange || f == Lipschitz }

// maxLogChange bounds the log-change of a forecast, e^±5 ≈ ×150 either way:
// a noised model far off on an odd input cannot produce an absurd number.
const maxLogChange = 5

// l is ln(1+v), with negative values (never in a smoothed count) read as 0.
func l(v float64) float64 { return math.Log1p(max(v, 0)) }

// Input writes the network's inputs for the smoothed counts x (len H) into
// dst (len H).
func (f Features) Input(dst, x []float64) {
	if len(dst) != len(x) {
		panic("model: Input: dst and x lengths differ")
	}
	if f == Lipschitz {
		lipschitzInput(dst, x)
		return
	}
	if f != LogChange {
		copy(dst, x)
		return
	}
	last := l(x[len(x)-1])
	for i, v := range x {
		dst[i] = l(v) - last
	}
}

// Target returns the network's target for the window (x, y).
func (f Features) Target(x []float64, y float64) float64 {
	if f == Lipschitz {
		return lipschitzLog(y) - lipschitzLog(x[len(x)-1])
	}
	if f != LogChange {
		return y
	}
	return l(y) - l(x[len(x)-1])
}

// Forecast turns the network's output for the inputs x into a count
// (never below 0 for LogChange).
func (f Features) Forecast(x []float64, out float64) float64 {
	if !f.Anchored() {
		return out
	}
	if f == Lipschitz {
		return lipschitzForecast(x, out)
	}
	last := x[len(x)-1]
	if out == 0 || math.IsNaN(out) {
		return max(0, last) // exactly the no-change forecast
	}
	out = max(-maxLogChange, min(maxLogChange, out))
	return max(0, math.Expm1(l(last)+out))
}

// Stack is series.Stack with the feature map applied: x is n×H inputs, y
// the n targets, in the network's terms.
func (f Features) Stack(areas []series.Area) (x, y []float64) {
	x, y = series.Stack(areas)
	f.Transform(x, y)
	return x, y
}

// Transform applies the feature map in place to n windows of smoothed
// counts (x: n×H row-major, y: n targets).
func (f Features) Transform(x, y []float64) {
	if !f.Anchored() || len(y) == 0 {
		return
	}
	H := len(x) / len(y)
	for i := range y {
		w := x[i*H : (i+1)*H]
		y[i] = f.Target(w, y[i])
		f.Input(w, w)
	}
}

// Predict writes the forecasts (counts) for n windows of smoothed counts
// x (n×H) into dst (len n), using the network m with params.
func (f Features) Predict(m *nn.MLP, params, x, dst []float64) {
	f.PredictDamped(m, params, x, dst, 1)
}

// PredictDamped is Predict with the anchored network's output multiplied
// by damping (in (0, 1]) before it becomes a forecast: the forecast change
// against "no change" is shrunk, in log terms, by that factor. It is
// post-processing of the released model, so it costs no privacy. Counts
// ignore damping.
func (f Features) PredictDamped(m *nn.MLP, params, x, dst []float64, damping float64) {
	if !f.Anchored() {
		m.Predict(params, x, dst)
		return
	}
	if !(damping > 0 && damping <= 1) {
		panic(fmt.Sprintf("model: damping %v outside (0, 1]", damping))
	}
	in := make([]float64, len(x))
	H := m.In()
	for i := range dst {
		f.Input(in[i*H:(i+1)*H], x[i*H:(i+1)*H])
	}
	m.Predict(params, in, dst)
	for i := range dst {
		if f == Lipschitz { // publish.Forecaster's order: clamp, then damp
			dst[i] = max(-lipschitzMaxChange, min(lipschitzMaxChange, dst[i]))
		}
		dst[i] = f.Forecast(x[i*H:(i+1)*H], damping*dst[i])
	}
}

// CheckDamping returns an error unless d is in (0, 1].
func CheckDamping(d float64) error {
	if !(d > 0 && d <= 1) {
		return fmt.Errorf("model: damping %v must be in (0, 1] (1: the model's forecast as it is)", d)
	}
	return nil
}

// Persistence writes the no-change forecast of each of n windows (x: n×H)
// into dst: the last smoothed input value. It needs no training, no data
// sharing and no privacy budget: the baseline every model must beat.
func Persistence(x, dst []float64) {
	if len(dst) == 0 {
		return
	}
	H := len(x) / len(dst)
	for i := range dst {
		dst[i] = x[(i+1)*H-1]
	}
}

// Init writes the initial model for the network m into dst. For the
// paper's Counts it is the network's usual random initialisation
// (nn.MLP.Init with rng). For an anchored map it is the public pretrained
// model (Pretrained: fitted to synthetic outbreaks from fixed seeds, so it
// costs no privacy and is the same for every run and rng); the untrained
// model of InitRandom is the no-change forecast, the pretrained one has
// learnt how synthetic epidemics go on. Init panics if pretraining fails
// (it cannot for a network with one output).
func (f Features) Init(m *nn.MLP, dst []float64, rng *rand.Rand) {
	if !f.Anchored() {
		m.Init(dst, rng)
		return
	}
	if f == Lipschitz { // no pretrained public model: the no-change forecast
		f.initRandom(m, dst, rng)
		m.ProjectSpectral(dst)
		return
	}
	w, err := Pretrained(m)
	if err != nil {
		panic(err)
	}
	copy(dst, w)
}

// InitRandom writes the initial model without pretraining: the network's
// random initialisation, with the output layer set to zero when the
// features are anchored, so that the untrained model is the no-change
// forecast (for a linear model: all zeros).
func (f Features) InitRandom(m *nn.MLP, dst []float64, rng *rand.Rand) {
	f.initRandom(m, dst, rng)
}

func (f Features) initRandom(m *nn.MLP, dst []float64, rng *rand.Rand) {
	m.Init(dst, rng)
	if !f.Anchored() {
		return
	}
	sizes := m.Sizes()
	last := sizes[len(sizes)-1] * (sizes[len(sizes)-2] + 1)
	clear(dst[len(dst)-last:])
}
