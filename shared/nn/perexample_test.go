package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExampleGradientsAreSingleSampleGradients checks that each
// per-example gradient is, bit for bit, Gradient on the batch holding only
// that sample, and that their mean is the batch gradient (up to rounding).
func TestExampleGradientsAreSingleSampleGradients(t *testing.T) {
	m, p, x, y := problem(7, 9, 5, 8, 4, 1)
	tr := NewTrainer(m)
	want := make([]float64, len(p))
	mean := make([]float64, len(p))
	seen := 0
	tr.ExampleGradients(p, x, y, func(i int, g []float64, loss float64) {
		if i != seen {
			t.Fatalf("sample %d visited at position %d", i, seen)
		}
		seen++
		one := NewTrainer(m)
		wl := one.Gradient(p, x[i*5:(i+1)*5], y[i:i+1], want)
		if loss != wl {
			t.Errorf("sample %d: loss %v, want %v", i, loss, wl)
		}
		for k := range g {
			if g[k] != want[k] {
				t.Fatalf("sample %d, parameter %d: %v, want %v", i, k, g[k], want[k])
			}
			mean[k] += g[k] / 9
		}
	})
	if seen != 9 {
		t.Fatalf("visited %d samples, want 9", seen)
	}
	batch := make([]float64, len(p))
	tr.Gradient(p, x, y, batch)
	for k := range batch {
		// float32 sums in another order: a few ulps of the largest terms.
		if e := relErr(mean[k], batch[k], 1e-3); e > 1e-5 {
			t.Errorf("parameter %d: mean of per-example gradients %v, batch gradient %v (rel. error %.2g)", k, mean[k], batch[k], e)
		}
	}
}

func TestClipExample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name  string
		scale float64
		clip  float64
	}{
		{"tiny", 1e-300, 1e-3}, {"within", 1e-3, 1}, {"above", 10, 0.5}, {"huge", 1e300, 0.1}, {"small clip", 1, 1e-200},
	} {
		for trial := range 50 {
			g := make([]float64, 1+rng.IntN(300))
			for i := range g {
				g[i] = rng.NormFloat64() * c.scale
			}
			orig := append([]float64(nil), g...)
			norm := ClipExample(g, c.clip)
			after := l2(g)
			if !(after <= c.clip) {
				t.Fatalf("%s/%d: norm after clipping %v > clip %v", c.name, trial, after, c.clip)
			}
			if norm <= c.clip {
				for i := range g {
					if g[i] != orig[i] {
						t.Fatalf("%s/%d: a gradient within the bound was changed", c.name, trial)
					}
				}
			} else if after < c.clip*(1-1e-9) {
				t.Errorf("%s/%d: clipped to %v, want ≈ %v", c.name, trial, after, c.clip)
			}
		}
	}
	g := []float64{1, math.NaN(), 3}
	ClipExample(g, 1)
	if g[0] != 0 || g[1] != 0 || g[2] != 0 {
		t.Errorf("NaN gradient clipped to %v, want zero", g)
	}
	g = []float64{math.Inf(-1), 1}
	ClipExample(g, 1)
	if g[0] != 0 || g[1] != 0 {
		t.Errorf("Inf gradient clipped to %v, want zero", g)
	}
}

// TestClippedSumBoundsEachExample: whatever one sample holds (here targets
// up to 1e6, which give gradients far above the bound), removing it
// changes the clipped sum by a vector of norm at most the clip bound.
func TestClippedSumBoundsEachExample(t *testing.T) {
	m, p, x, y := problem(3, 12, 4, 6, 1)
	for i := range y {
		y[i] *= math.Pow(10, float64(i%7))
	}
	tr := NewTrainer(m)
	const clip = 0.25
	full := make([]float64, len(p))
	if n := tr.ClippedGradientSum(p, x, y, clip, full); n == 0 {
		t.Fatal("no sample was clipped: the test would not test clipping")
	}
	for drop := range 12 {
		var xs, ys []float64
		for i := range 12 {
			if i != drop {
				xs = append(xs, x[i*4:(i+1)*4]...)
				ys = append(ys, y[i])
			}
		}
		part := make([]float64, len(p))
		tr.ClippedGradientSum(p, xs, ys, clip, part)
		for k := range part {
			part[k] -= full[k]
		}
		if d := l2(part); d > clip*(1+1e-12) {
			t.Errorf("removing sample %d moves the sum by %v > clip %v", drop, d, clip)
		}
	}
}

// TestAdamMatchesTrain: an Adam fed Trainer.Gradient reproduces Train bit
// for bit.
func TestAdamMatchesTrain(t *testing.T) {
	m, p, x, y := problem(11, 6, 3, 5, 1)
	opt := AdamOptions{LearningRate: 0.01}
	want := append([]float64(nil), p...)
	NewTrainer(m).Train(want, x, y, 7, opt)
	tr := NewTrainer(m)
	a := NewAdam(len(p), opt)
	g := make([]float64, len(p))
	for range 7 {
		tr.Gradient(p, x, y, g)
		a.Step(p, g)
	}
	if a.Steps() != 7 {
		t.Errorf("Steps() = %d, want 7", a.Steps())
	}
	for k := range p {
		if p[k] != want[k] {
			t.Fatalf("parameter %d: %v, Train gives %v", k, p[k], want[k])
		}
	}
}
