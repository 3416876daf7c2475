package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestProjectSpectralBoundsEveryLayer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sizes := range [][]int{{2, 8, 1}, {13, 16, 1}, {10, 128, 64, 32, 1}, {3, 1}} {
		m := NewMLP(sizes...)
		p := make([]float64, m.NumParams())
		m.Init(p, rng)
		for i := range p {
			p[i] *= 5 // well above 1
		}
		before := m.ProjectSpectral(p)
		for l, s := range m.SpectralNorms(p) {
			if s > 1 {
				t.Errorf("%v layer %d: spectral norm %v > 1 after projection (was %v)", sizes, l, s, before[l])
			}
			if before[l] > 1 && s < 1-1e-9 {
				t.Errorf("%v layer %d: norm %v, want 1 (projection scales to the boundary)", sizes, l, s)
			}
		}
		if b := m.LipschitzBound(p); b > 1 {
			t.Errorf("%v: Lipschitz bound %v > 1", sizes, b)
		}
		// The network is 1-Lipschitz: no pair of inputs moves the output more.
		in := m.In()
		x, y := make([]float64, in), make([]float64, in)
		fx, fy := make([]float64, 1), make([]float64, 1)
		for range 2000 {
			d := 0.0
			for i := range x {
				x[i] = rng.NormFloat64() * 3
				y[i] = x[i] + rng.NormFloat64()*math.Pow(10, -rng.Float64()*3)
				d += (x[i] - y[i]) * (x[i] - y[i])
			}
			m.Predict(p, x, fx)
			m.Predict(p, y, fy)
			if diff := math.Abs(fx[0] - fy[0]); diff > math.Sqrt(d)*(1+1e-9) {
				t.Fatalf("%v: |f(x)−f(y)| = %v > ‖x−y‖ = %v", sizes, diff, math.Sqrt(d))
			}
		}
	}
}

func TestPowerIterationApproachesExactNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := NewMLP(13, 16, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	exact := m.SpectralNorms(p)
	for l := range m.Layers() {
		u := make([]float64, m.Sizes()[l+1])
		est := m.PowerIteration(p, l, u, 50)
		if math.Abs(est-exact[l]) > 1e-6*exact[l] || est > exact[l]*(1+1e-12) {
			t.Errorf("layer %d: power iteration %v, exact %v", l, est, exact[l])
		}
	}
	for i := range p {
		p[i] *= 4
	}
	us := make([][]float64, m.Layers())
	for range 3 {
		m.NormalizeSpectral(p, us, 5)
	}
	for l, s := range m.SpectralNorms(p) {
		if s > 1+1e-3 {
			t.Errorf("layer %d: norm %v after spectral normalisation, want ≈ ≤ 1", l, s)
		}
	}
}

// TestTrainSpectralKeepsNormsNearOne trains a network whose targets need
// large weights: plain Adam leaves norms far above 1, TrainSpectral keeps
// them near 1 and still learns (the loss falls).
func TestTrainSpectralKeepsNormsNearOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m := NewMLP(2, 8, 1)
	n := 64
	x, y := make([]float64, 2*n), make([]float64, n)
	for i := range n {
		x[2*i], x[2*i+1] = rng.NormFloat64(), rng.NormFloat64()
		y[i] = 5*x[2*i] - 4*x[2*i+1]
	}
	p0 := make([]float64, m.NumParams())
	m.Init(p0, rng)
	plain, spec := append([]float64(nil), p0...), append([]float64(nil), p0...)
	tr := NewTrainer(m)
	tr.Train(plain, x, y, 300, AdamOptions{LearningRate: 0.05})
	start := tr.Loss(spec, x, y)
	tr.TrainSpectral(spec, x, y, 300, AdamOptions{LearningRate: 0.05}, 1)
	if b := m.LipschitzBound(plain); b < 2 {
		t.Fatalf("plain training reached Lipschitz bound %v only: the test does not need large weights", b)
	}
	for l, s := range m.SpectralNorms(spec) {
		if s > 1.05 {
			t.Errorf("layer %d: norm %v after spectral training, want ≈ ≤ 1", l, s)
		}
	}
	if end := tr.Loss(spec, x, y); !(end < 0.8*start) {
		t.Errorf("spectral training did not learn: loss %v → %v", start, end)
	}
}
