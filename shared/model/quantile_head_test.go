package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
)

// A quantile head (Weekly.Quantiles): 7 outputs, every window's target
// repeated for each, the output biases starting at the prior's normal
// ranges (so the untrained head is no change with ranges of spread 0.25
// on the log scale), the pinball loss, PredictTotals giving the median
// and PredictQuantiles the sorted levels around it.
func TestQuantileHead(t *testing.T) {
	d := WeeklyDesign.clone()
	d.Weekly.Quantiles = "head"
	if err := d.Weekly.Validate(); err != nil {
		t.Fatal(err)
	}
	m := d.Network()
	if m.Out() != 7 || m.In() != d.Weekly.Inputs() || m.NumParams() != 775 {
		t.Fatalf("network %v, %d parameters", m.Sizes(), m.NumParams())
	}
	a := region("A", "2020-03-01", 300, func(i int) float64 { return 50 + 20*math.Sin(float64(i)/9) })
	asOf := date("2020-12-01")
	x1, y1 := WeeklyDesign.Weekly.Windows(a, Public{}, asOf)
	x7, y7 := d.Weekly.Windows(a, Public{}, asOf)
	if !slices.Equal(x1, x7) || len(y7) != 7*len(y1) || len(y1) == 0 {
		t.Fatalf("windows: %d inputs and %d targets, against %d and %d", len(x7), len(y7), len(x1), len(y1))
	}
	for i, v := range y1 {
		for j := range 7 {
			if y7[7*i+j] != v {
				t.Fatalf("window %d, output %d: target %v, want %v", i, j, y7[7*i+j], v)
			}
		}
	}

	params := make([]float64, m.NumParams())
	d.Init(m, params, rand.New(rand.NewPCG(1, 2)))
	origin := date("2020-11-01")
	s, _ := Total7(a, origin)
	q, ok := d.Weekly.PredictQuantiles(m, params, a, Public{}, origin, d.Damping)
	if !ok {
		t.Fatal("no quantiles")
	}
	for i, z := range []float64{-1.959963984540054, -1.2815515655446004, -0.6744897501960817, 0, 0.6744897501960817, 1.2815515655446004, 1.959963984540054} {
		want := math.Expm1(math.Log1p(s) + 0.25*z)
		if math.Abs(q[i]-want) > 1e-9*want {
			t.Errorf("untrained level %v: %v, want %v", QuantileLevels[i], q[i], want)
		}
	}
	if p := d.Weekly.PredictTotals(m, params, a, Public{}, []time.Time{origin}, d.Damping)[0]; p != q[3] {
		t.Errorf("PredictTotals %v, the head's median %v", p, q[3])
	}

	// Crossed outputs are sorted; the median's change is damped, the
	// other levels keep their distance to it.
	out := len(params) - 7
	copy(params[out:], []float64{0.3, -0.2, 0.1, 0.4, 0.2, 0.6, 0.5})
	q, _ = d.Weekly.PredictQuantiles(m, params, a, Public{}, origin, 0.5)
	sorted := []float64{-0.2, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6}
	for i, o := range sorted {
		want := math.Expm1(math.Log1p(s) + 0.5*0.3 + (o - 0.3))
		if math.Abs(q[i]-want) > 1e-9*want {
			t.Errorf("level %v: %v, want %v", QuantileLevels[i], q[i], want)
		}
	}
	if p := d.Weekly.PredictTotals(m, params, a, Public{}, []time.Time{origin}, 0.5)[0]; math.Abs(p-q[3]) > 1e-9*p {
		t.Errorf("PredictTotals %v, the head's median %v", p, q[3])
	}
	if _, ok := WeeklyDesign.Weekly.PredictQuantiles(m, params, a, Public{}, origin, 0.5); ok {
		t.Error("quantiles from a design without a head")
	}

	// The head trains with the pinball loss at the hub levels: a bias-only
	// head on constant inputs learns the targets' quantiles.
	tr := nn.NewTrainer(nn.NewMLP(1, 7))
	d.Weekly.SetLoss(tr)
	p := make([]float64, 14)
	xs := make([]float64, 200)
	ys := make([]float64, 0, 1400)
	for i := range 200 {
		for range 7 {
			ys = append(ys, float64(i)/2) // 0 … 99.5
		}
	}
	tr.Train(p, xs, ys, 5000, nn.AdamOptions{LearningRate: 0.1})
	for j, tau := range QuantileLevels {
		if want := tau * 99.5; math.Abs(p[7+j]-want) > 2 {
			t.Errorf("level %v: %v, want about %v", tau, p[7+j], want)
		}
	}

	for _, bad := range []Weekly{{Quantiles: "pinball"}, {Quantiles: "head", Init: "pairs"}} {
		b := *WeeklyDesign.Weekly
		b.Quantiles, b.Init = bad.Quantiles, bad.Init
		if b.Validate() == nil {
			t.Errorf("quantiles %q with start %q accepted", bad.Quantiles, bad.Init)
		}
	}
}
