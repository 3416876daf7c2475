package fl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
)

// paperClients makes data of the paper's shape: n clients with 13 windows
// of H = 10 smoothed counts each, at levels spread like county case counts.
func paperClients(n int) []ClientData {
	rng := rand.New(rand.NewPCG(1, 1))
	cs := make([]ClientData, n)
	for i := range cs {
		level := 5 + 200*rng.ExpFloat64()
		growth := 1 + 0.04*rng.NormFloat64()
		var x, y []float64
		for w := 0; w < 13; w++ {
			for h := 0; h < 10; h++ {
				x = append(x, level*pow(growth, w+h))
			}
			y = append(y, level*pow(growth, w+16))
		}
		cs[i] = ClientData{X: x, Y: y}
	}
	return cs
}

func pow(b float64, n int) float64 {
	r := 1.0
	for i := 0; i < n; i++ {
		r *= b
	}
	return r
}

// BenchmarkRun75 is one full run of the paper's setting: 400 clients, 75
// rounds, m = 100 (q = 0.25), E = 30, DP with c = 4.88 (ε ≈ 2).
func BenchmarkRun75(b *testing.B) {
	clients := paperClients(400)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s := &Simulation{Model: nn.NewMLP(10, 128, 64, 32, 1), Clients: clients, Seed: uint64(i), Workers: workers,
					Epsilon: 2, Delta: 1e-5,
					Config: Config{Clients: 400, ExpectedClients: 100, Rounds: 75, ClipNorm: 0.5, NoiseMultiplier: 4.8828125,
						DP: true, LocalEpochs: 30, LearningRate: 1e-3}}
				if _, err := s.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

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
