package fl

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkAggregatorAdd is the server's cost per received update
// (validation, re-clipping, summing) for the paper's 11,777 weights.
func BenchmarkAggregatorAdd(b *testing.B) {
	cfg := dpConfig()
	const dim = 11777
	a := NewAggregator(cfg, dim)
	u := make([]float64, dim)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	b.SetBytes(dim * 8)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.Add(u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFinish is the noise and update of the global model per round.
func BenchmarkFinish(b *testing.B) {
	cfg := dpConfig()
	const dim = 11777
	a := NewAggregator(cfg, dim)
	g := make([]float64, dim)
	noise := NewRand(1, StreamNoise)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a.Finish(g, noise)
	}
}
