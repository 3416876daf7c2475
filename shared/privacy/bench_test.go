package privacy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// The paper's noise levels for ε = 5, 2, 1 at q = 0.25, T = 75, δ = 1e-5.
var benchC = []float64{2.3, 4.8828125, 8.984375}

// BenchmarkEpsilon: one ε over all default orders for a new (q, c) (no
// caching across calls: the per-(q, c) tables are rebuilt every time).
func BenchmarkEpsilon(b *testing.B) {
	for _, c := range benchC {
		b.Run(fmt.Sprintf("c=%g", c), func(b *testing.B) {
			for b.Loop() {
				privacy.Epsilon(0.25, c, 75, 1e-5)
			}
		})
	}
}

// BenchmarkAccountantCompose: Compose reuses the accountant's scratch.
func BenchmarkAccountantCompose(b *testing.B) {
	for _, c := range benchC {
		b.Run(fmt.Sprintf("c=%g", c), func(b *testing.B) {
			a := privacy.NewAccountant(nil)
			for b.Loop() {
				a.Compose(0.25, c, 1)
			}
		})
	}
}

func BenchmarkNoiseMultiplier(b *testing.B) {
	for _, eps := range []float64{1, 2, 5} {
		b.Run(fmt.Sprintf("eps=%g", eps), func(b *testing.B) {
			for b.Loop() {
				if _, err := privacy.NoiseMultiplier(eps, 1e-5, 0.25, 75); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRDPFractional(b *testing.B) {
	for b.Loop() {
		privacy.RDP(0.25, 4.8828125, 3.7)
	}
}

// BenchmarkClipAndNoise: clip one update of the paper's model size
// (11,777 weights) and add noise from a ChaCha8 stream.
func BenchmarkClipAndNoise(b *testing.B) {
	rng := privacy.NewSecureRand()
	src := make([]float64, 11777)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range src {
		src[i] = r.NormFloat64()
	}
	x := make([]float64, len(src))
	for b.Loop() {
		copy(x, src)
		privacy.ClipL2(x, 0.5)
		privacy.AddGaussian(x, 0.02, rng)
	}
}
