package nn

import (
	"math"
	"testing"
)

// TestAbsoluteErrorGradient checks the absolute error's loss against a
// float64 evaluation and its gradient against central differences of that
// loss (ReLU kinks and |0| are hit with probability zero).
func TestAbsoluteErrorGradient(t *testing.T) {
	m, p, x, y := problem(7, 9, 4, 6, 3)
	tr := NewTrainer(m)
	tr.SetLoss(AbsoluteError)
	checkLossGradient(t, tr, m, p, x, y, func(_ int, u float64) float64 { return math.Abs(u) })
}

// checkLossGradient compares tr's loss on (x, y) with the mean of
// each(i, y_i − ŷ_i) evaluated in float64, and its gradient with central
// differences of that mean.
func checkLossGradient(t *testing.T, tr *Trainer, m *MLP, p, x, y []float64, each func(i int, u float64) float64) {
	t.Helper()
	lossAt := func(q []float64) float64 {
		out := make([]float64, len(y))
		m.Predict(q, x, out)
		s := 0.0
		for i := range y {
			s += each(i, y[i]-out[i])
		}
		return s / float64(len(y))
	}
	if got, want := tr.Loss(p, x, y), lossAt(p); math.Abs(got-want) > 1e-5 {
		t.Fatalf("loss %v, want %v", got, want)
	}
	g := make([]float64, len(p))
	tr.Gradient(p, x, y, g)
	const h = 1e-4
	for i := range p {
		q := append([]float64(nil), p...)
		q[i] += h
		up := lossAt(q)
		q[i] -= 2 * h
		num := (up - lossAt(q)) / (2 * h)
		if math.Abs(num-g[i]) > 2e-3 {
			t.Errorf("param %d: gradient %v, central difference %v", i, g[i], num)
		}
	}
}

// TestLossMinimisers: a bias-only model (input 0) trained on targets
// {0, 0, 0, 10} ends near their mean 2.5 with the squared error and near
// their median 0 with the absolute error.
func TestLossMinimisers(t *testing.T) {
	for _, tc := range []struct {
		loss Loss
		want float64
	}{{SquaredError, 2.5}, {AbsoluteError, 0}} {
		m := NewMLP(1, 1)
		p := []float64{0, 1} // weight 0, bias 1
		tr := NewTrainer(m)
		tr.SetLoss(tc.loss)
		tr.Train(p, []float64{0, 0, 0, 0}, []float64{0, 0, 0, 10}, 3000, AdamOptions{LearningRate: 0.01})
		if math.Abs(p[1]-tc.want) > 0.05 {
			t.Errorf("loss %d: bias %v, want about %v", tc.loss, p[1], tc.want)
		}
	}
}

// TestSetLossSquaredUnchanged: SetLoss(SquaredError) after another loss
// trains exactly as a fresh Trainer (the AVX-512 path included).
func TestSetLossSquaredUnchanged(t *testing.T) {
	m, p, x, y := problem(3, 40, 5, 8, 1)
	a, b := append([]float64(nil), p...), append([]float64(nil), p...)
	NewTrainer(m).Train(a, x, y, 10, AdamOptions{})
	tr := NewTrainer(m)
	tr.SetLoss(AbsoluteError)
	tr.Train(append([]float64(nil), p...), x, y, 3, AdamOptions{})
	tr.SetLoss(SquaredError)
	tr.Train(b, x, y, 10, AdamOptions{})
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("param %d: %v after SetLoss(SquaredError), %v fresh", i, b[i], a[i])
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("SetLoss(99) did not panic")
		}
	}()
	tr.SetLoss(99)
}

// TestPinballGradient checks the pinball loss against a float64
// evaluation and its gradient against central differences, with a
// different level on each of three outputs.
func TestPinballGradient(t *testing.T) {
	levels := []float64{0.1, 0.5, 0.9}
	m, p, x, y := problem(5, 9, 4, 6, 3)
	tr := NewTrainer(m)
	tr.SetPinball(levels)
	checkLossGradient(t, tr, m, p, x, y, func(i int, u float64) float64 {
		tau := levels[i%3]
		return math.Max(tau*u, (tau-1)*u)
	})
}

// TestPinballQuantiles: a bias-only model with three outputs trained with
// the pinball loss at 0.1, 0.5 and 0.9 on the targets 0 … 99 ends near
// their 10 %, 50 % and 90 % quantiles; a wrong number of levels or a
// level outside (0, 1) panics, and so does SetLoss(Pinball).
func TestPinballQuantiles(t *testing.T) {
	m := NewMLP(1, 3)
	p := make([]float64, m.NumParams()) // weights and biases 0
	x := make([]float64, 100)
	y := make([]float64, 300)
	for i := range 100 {
		for j := range 3 {
			y[3*i+j] = float64(i)
		}
	}
	tr := NewTrainer(m)
	tr.SetPinball([]float64{0.1, 0.5, 0.9})
	tr.Train(p, x, y, 4000, AdamOptions{LearningRate: 0.1})
	for j, want := range []float64{10, 50, 90} {
		if b := p[3+j]; math.Abs(b-want) > 1.5 {
			t.Errorf("output %d: bias %v, want about %v", j, b, want)
		}
	}
	for _, f := range []func(){
		func() { tr.SetPinball([]float64{0.5}) },
		func() { tr.SetPinball([]float64{0, 0.5, 0.9}) },
		func() { tr.SetPinball([]float64{0.1, 0.5, 1}) },
		func() { tr.SetLoss(Pinball) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}
