package privacy_test

import (
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
