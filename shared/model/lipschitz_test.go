package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
)

// TestLipschitzFeatures: the preset and its name; the inputs are the
// weekly log-changes z_j of the trailing averages at x_H, x_{H−7}, x_{H−14}
// and zeros; the target is the next week's log-change; the forecast of
// the target is y; the initial model is the no-change forecast with every
// layer's spectral norm at most 1.
func TestLipschitzFeatures(t *testing.T) {
	if f, err := Parse("lipschitz"); err != nil || f != Lipschitz || !f.Anchored() {
		t.Fatalf("Parse(lipschitz) = %q, %v", f, err)
	}
	d, err := Preset("lipschitz")
	if err != nil || d.Features != Lipschitz || d.History != 15 || d.Damping != 0.1 {
		t.Fatalf("lipschitz preset = %+v, %v", d, err)
	}
	x := make([]float64, LipschitzHistory)
	for i := range x {
		x[i] = float64(10 + 3*i)
	}
	x[0] = -4 // a negative correction reads as 0
	u := func(v float64) float64 { return math.Log(LipschitzKappa + max(v, 0)) }
	in := make([]float64, len(x))
	Lipschitz.Input(in, x)
	want := []float64{u(x[14]) - u(x[7]), u(x[7]) - u(0)}
	for i, v := range in {
		w := 0.0
		if i < len(want) {
			w = want[i]
		}
		if math.Abs(v-w) > 1e-15 {
			t.Fatalf("input %d = %v, want %v (inputs %v)", i, v, w, in)
		}
	}
	y := 80.0
	tg := Lipschitz.Target(x, y)
	if math.Abs(tg-(u(y)-u(x[14]))) > 1e-15 || math.Abs(Lipschitz.Forecast(x, tg)-y) > 1e-9 {
		t.Fatalf("target %v forecasts %v, want %v", tg, Lipschitz.Forecast(x, tg), y)
	}
	if got := Lipschitz.Forecast(x, 100); got > math.Exp(u(x[14])+lipschitzMaxChange) {
		t.Fatalf("an output of 100 forecasts %v: not clamped", got)
	}
	m := nn.NewMLP(LipschitzHistory, 8, 1)
	w := make([]float64, m.NumParams())
	Lipschitz.Init(m, w, rand.New(rand.NewPCG(1, 2)))
	for l, s := range m.SpectralNorms(w) {
		if s > 1 {
			t.Errorf("initial layer %d has spectral norm %v", l+1, s)
		}
	}
	out := []float64{0}
	Lipschitz.PredictDamped(m, w, x, out, 0.1)
	if math.Abs(out[0]-x[14]) > 1e-9 {
		t.Errorf("the initial model forecasts %v, want no change (%v)", out[0], x[14])
	}
}
