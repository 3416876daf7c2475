package privacy_test

import (
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// BenchmarkDiscreteGaussian11777 is the noise of one round at the paper's
// model size: 11,777 exact discrete Gaussian draws at the paper's lattice
// (S = 0.5, c = 4.8828125: σ/γ ≈ 2¹⁴·1.22) from a ChaCha8 stream seeded by
// crypto/rand, as in a live study.
func BenchmarkDiscreteGaussian11777(b *testing.B) {
	lat, err := privacy.NewLattice(0.5, 4.8828125)
	if err != nil {
		b.Fatal(err)
	}
	rng := privacy.NewSecureRand()
	sum := make([]int64, 11777)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat.AddNoise(sum, rng)
	}
}

// BenchmarkNormFloat64Noise11777 is the old float sampler on the same
// size, for the ratio.
func BenchmarkNormFloat64Noise11777(b *testing.B) {
	rng := privacy.NewSecureRand()
	x := make([]float64, 11777)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		privacy.AddGaussian(x, 0.02, rng)
	}
}

// countingSource counts the 64-bit words drawn.
type countingSource struct {
	src rand.Source
	n   int
}

func (c *countingSource) Uint64() uint64 { c.n++; return c.src.Uint64() }

// BenchmarkDiscreteGaussianDraws reports the random words consumed per
// sample at the paper's lattice (a load-independent cost measure).
func BenchmarkDiscreteGaussianDraws(b *testing.B) {
	lat, err := privacy.NewLattice(0.5, 4.8828125)
	if err != nil {
		b.Fatal(err)
	}
	src := &countingSource{src: rand.NewChaCha8([32]byte{1})}
	rng := rand.New(src)
	sum := make([]int64, 11777)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat.AddNoise(sum, rng)
	}
	b.ReportMetric(float64(src.n)/float64(b.N*len(sum)), "words/sample")
}
