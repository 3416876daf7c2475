package privacy_test

// Speed of the accountant and of clipping (spec §9: one ε ≤ 20 µs, one
// calibration ≤ 1 ms).
//
// Before/after the optimisation of November 2026 (curve cache, skipping of
// orders that provably cannot attain the minimum, lazy per-(q, c) tables,
// secant/Anderson–Björck calibration, 4-accumulator L2Norm). Medians of
// -count=5 on a shared 2-core AMD EPYC under heavy load (a long experiment
// and other builds running), the old and new test binaries run alternately;
// absolute times are noisy, the ratios are the figures to keep.
//
//	benchmark                      native before → after   ratio | wasm (node) before → after   ratio
//	Epsilon (new (q,c) each call)  RATIOS_TABLE
//
// BenchmarkEpsilon is the cold case (a new (q, c) every call, as in a
// calibration); BenchmarkEpsilonCached repeats one (q, c) with a different
// number of rounds each call (a coordinator or simulation reporting the
// budget spent round after round); the old code had no cache, so its two
// figures are the same computation.

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// The paper's noise levels for ε = 5, 2, 1 at q = 0.25, T = 75, δ = 1e-5.
var benchC = []float64{2.3, 4.8828125, 8.984375}

// benchEpsilon runs one ε per iteration at the paper's (q, δ) for each of
// benchC. fresh perturbs c by a relative 1e-9·(i mod 4096) every call, far
// more distinct pairs than the curve cache holds, so every call evaluates a
// new curve; otherwise (q, c) repeat and the round count varies.
func benchEpsilon(b *testing.B, fresh bool) {
	for _, c := range benchC {
		b.Run(fmt.Sprintf("c=%g", c), func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if fresh {
					privacy.Epsilon(0.25, c*(1+1e-9*float64(i%4096)), 75, 1e-5)
				} else {
					privacy.Epsilon(0.25, c, 1+i%75, 1e-5)
				}
			}
		})
	}
}

// BenchmarkEpsilon: one ε over all default orders for a new (q, c).
func BenchmarkEpsilon(b *testing.B) { benchEpsilon(b, true) }

// BenchmarkEpsilonCached: one ε for a (q, c) seen before.
func BenchmarkEpsilonCached(b *testing.B) { benchEpsilon(b, false) }

// BenchmarkAccountantCompose: one round composed into an accountant (the
// same (q, c) every round, as in a study).
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

// BenchmarkNoiseMultiplier: one calibration for the paper's ε grid.
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

// benchUpdate is a client update of the paper's model size (11,777
// weights), entries N(0, 0.01²): norm about 1.1, above the paper's S = 0.5.
func benchUpdate() []float64 {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, 11777)
	for i := range x {
		x[i] = r.NormFloat64() * 0.01
	}
	return x
}

func BenchmarkL2Norm(b *testing.B) {
	x := benchUpdate()
	for b.Loop() {
		privacy.L2Norm(x)
	}
}

// BenchmarkClipL2: clip one update to S = 0.5 (a copy is restored first).
func BenchmarkClipL2(b *testing.B) {
	src := benchUpdate()
	x := make([]float64, len(src))
	for b.Loop() {
		copy(x, src)
		privacy.ClipL2(x, 0.5)
	}
}

// BenchmarkClipAndNoise: clip one update and add noise from a ChaCha8
// stream.
func BenchmarkClipAndNoise(b *testing.B) {
	rng := privacy.NewSecureRand()
	src := benchUpdate()
	x := make([]float64, len(src))
	for b.Loop() {
		copy(x, src)
		privacy.ClipL2(x, 0.5)
		privacy.AddGaussian(x, 0.02, rng)
	}
}
