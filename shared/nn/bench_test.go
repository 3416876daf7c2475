package nn

import (
	"math/rand/v2"
	"testing"
)

// benchData returns the spec's workload: a 10-128-64-32-1 network with
// PyTorch-default initial weights and n windows of raw case counts.
func benchData(n int) (*MLP, []float64, []float64, []float64) {
	rng := rand.New(rand.NewPCG(7, 7))
	m := NewMLP(10, 128, 64, 32, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	x := make([]float64, n*10)
	y := make([]float64, n)
	for i := range x {
		x[i] = 50 + 100*rng.Float64()
	}
	for i := range y {
		y[i] = 50 + 100*rng.Float64()
	}
	return m, p, x, y
}

// BenchmarkClientRound is one client's local training in one round: 30
// full-batch Adam steps on 13 windows (spec §4).
func BenchmarkClientRound(b *testing.B) {
	m, p0, x, y := benchData(13)
	p := make([]float64, len(p0))
	b.Run("flat", func(b *testing.B) {
		tr := NewTrainer(m)
		tr.Train(append(p[:0], p0...), x, y, 1, AdamOptions{})
		b.ReportAllocs()
		for b.Loop() {
			copy(p, p0)
			tr.Train(p, x, y, 30, AdamOptions{})
		}
	})
	b.Run("gonum", func(b *testing.B) {
		r := newGonumNet(m, 13)
		b.ReportAllocs()
		for b.Loop() {
			copy(p, p0)
			r.train(p, x, y, 30, AdamOptions{})
		}
	})
}

// BenchmarkGradient is one loss-and-gradient evaluation on 13 windows.
func BenchmarkGradient(b *testing.B) {
	m, p, x, y := benchData(13)
	g := make([]float64, len(p))
	b.Run("flat", func(b *testing.B) {
		tr := NewTrainer(m)
		tr.Gradient(p, x, y, g)
		b.ReportAllocs()
		for b.Loop() {
			tr.Gradient(p, x, y, g)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		r := newGonumNet(m, 13)
		b.ReportAllocs()
		for b.Loop() {
			r.gradient(p, x, y, g)
		}
	})
}

// BenchmarkPredict is inference on 13 windows.
func BenchmarkPredict(b *testing.B) {
	m, p, x, _ := benchData(13)
	dst := make([]float64, 13)
	b.ReportAllocs()
	for b.Loop() {
		m.Predict(p, x, dst)
	}
}
