package privacy_test

// Speed of the accountant and of clipping (spec §9: one ε ≤ 20 µs, one
// calibration ≤ 1 ms).
//
// Before/after the optimisation of November 2026 (curve cache, skipping of
// orders that provably cannot attain the minimum, lazy per-(q, c) tables,
// secant/Anderson–Björck calibration, 4-accumulator L2Norm). The old code
// (commit edbc750) and the new were built as test binaries with this file
// and run alternately, -count=1 five times each (native, then wasm under
// node), on a shared 2-core AMD EPYC under heavy load (a long experiment and
// other engineers' builds): medians, with the ratio of the minima beside
// them; absolute times are inflated and noisy, the ratios are what to keep.
//
//	benchmark                     native before → after  ratio             | wasm (node) before → after  ratio
//	Epsilon/c=2.3                 79.1 µs →  48.3 µs ×  1.6 (min ×  2.4) | 543.6 µs → 206.5 µs ×  2.6 (min ×  2.9)
//	Epsilon/c=4.8828125           73.1 µs →  60.0 µs ×  1.2 (min ×  1.4) | 369.9 µs → 116.7 µs ×  3.2 (min ×  2.5)
//	Epsilon/c=8.984375            71.4 µs →  13.0 µs ×  5.5 (min ×  5.9) | 310.1 µs →  31.4 µs ×  9.9 (min ×  8.7)
//	EpsilonCached/c=2.3           87.1 µs →   2.1 µs × 40.9 (min × 45.6) | 496.3 µs →   6.4 µs × 77.3 (min × 46.7)
//	EpsilonCached/c=4.8828125     86.1 µs →   1.9 µs × 46.1 (min × 60.2) | 476.7 µs →   6.0 µs × 79.8 (min × 46.9)
//	EpsilonCached/c=8.984375     106.1 µs →   2.3 µs × 45.5 (min × 42.4) | 415.2 µs →   6.1 µs × 67.7 (min × 68.0)
//	AccountantCompose/c=2.3      114.0 µs →   1.1 µs ×105.8 (min × 69.8) | 356.6 µs →   2.9 µs ×122.0 (min ×129.6)
//	AccountantCompose/c=4.8828125  78.6 µs →   1.1 µs × 72.7 (min × 86.5) | 295.5 µs →   4.1 µs × 72.8 (min ×121.3)
//	AccountantCompose/c=8.984375  65.1 µs →   1.0 µs × 64.0 (min × 77.5) | 260.3 µs →   3.3 µs × 78.0 (min ×101.3)
//	NoiseMultiplier/eps=1         1.94 ms → 128.4 µs × 15.1 (min × 11.5) | 10.01 ms → 464.3 µs × 21.6 (min × 17.2)
//	NoiseMultiplier/eps=2         2.46 ms → 320.7 µs ×  7.7 (min ×  7.7) |  7.68 ms → 844.4 µs ×  9.1 (min ×  7.9)
//	NoiseMultiplier/eps=5         2.07 ms → 401.4 µs ×  5.1 (min ×  5.4) |  6.87 ms →  1.15 ms ×  6.0 (min ×  6.2)
//	RDPFractional                 13.0 µs →  14.5 µs ×  0.9 (min ×  1.4) |  39.7 µs →  38.1 µs ×  1.0 (min ×  1.2)
//	L2Norm                        41.1 µs →  12.9 µs ×  3.2 (min ×  4.4) |  69.1 µs →  25.5 µs ×  2.7 (min ×  4.9)
//	ClipL2                       107.5 µs →  32.4 µs ×  3.3 (min ×  3.6) | 249.0 µs → 128.0 µs ×  1.9 (min ×  3.1)
//	ClipAndNoise                 306.6 µs → 407.5 µs ×  0.8 (min ×  1.3) | 847.6 µs → 935.1 µs ×  0.9 (min ×  1.2)
//
// ClipAndNoise is dominated by the ChaCha8 Gaussian draws (unchanged) and
// within noise. RDPFractional (one order, one fresh plan) is unchanged.
// Against spec §9: a repeated ε (2 µs) and the calibration (0.13–0.4 ms)
// meet their targets here; a cold ε meets 20 µs when the minimiser is an
// integer order (c = 8.98: 13 µs) but not when fractional orders matter
// (c = 2.3, 4.88: 50–60 µs under this load), where the erfc tables of the 9
// fractional groups (about 300 erfc) dominate.
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
			a := privacy.NewRDP(nil)
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
		privacy.SampledGaussianRDP(0.25, 4.8828125, 3.7)
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

// PLD accountant (docs/benchmarks.md): ε of T = 75 rounds at the paper's
// q = 0.25 and the references' settings, pessimistic only (what budgets
// and calibration use) and with the optimistic lower bound; calibration.
func BenchmarkPLDEpsilon(b *testing.B) {
	for _, ev := range []privacy.Event{{SampleRate: 0.25, NoiseMultiplier: 4.8828125, Rounds: 75}, {SampleRate: 0.1, NoiseMultiplier: 1, Rounds: 75}, {SampleRate: 0.01, NoiseMultiplier: 0.5, Rounds: 75}} {
		b.Run(fmt.Sprintf("q=%g/c=%g/pessimistic", ev.SampleRate, ev.NoiseMultiplier), func(b *testing.B) {
			// c perturbed by 1e-9·i: past EpsilonFor's cache of recent queries.
			i := 0
			for b.Loop() {
				e := ev
				e.NoiseMultiplier *= 1 + 1e-9*float64(i)
				i++
				if _, err := privacy.EpsilonFor(privacy.AccountantPLD, []privacy.Event{e}, 1e-5); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("q=%g/c=%g/bounds", ev.SampleRate, ev.NoiseMultiplier), func(b *testing.B) {
			for b.Loop() {
				if _, err := privacy.PLDEpsilon([]privacy.Event{ev}, 1e-5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPLDNoiseMultiplier(b *testing.B) {
	for _, eps := range []float64{1, 2, 5} {
		b.Run(fmt.Sprintf("eps=%g", eps), func(b *testing.B) {
			for b.Loop() {
				if _, err := privacy.PLDNoiseMultiplier(eps, 1e-5, 0.25, 75); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
