package privacy_test

import (
	"math"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// exactPairDelta is δ(ε) of one round of the Poisson-subsampled Gaussian
// for the dominating pair of one direction of add/remove adjacency (Zhu,
// Dong and Wang 2022), in closed form with M = (1−q)N(0, c²) + qN(1, c²):
// remove compares M with N(0, c²), add compares N(0, c²) with M.
func exactPairDelta(q, c, eps float64, add bool) float64 {
	sf := func(x float64) float64 { return 0.5 * math.Erfc(x/math.Sqrt2) } // P(Z > x)
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	if !add {
		// L(x) = log((1−q) + q·e^{(2x−1)/(2c²)}) > ε ⇔ x > x_ε.
		x := 0.5 + c*c*math.Log((math.Expm1(eps)+q)/q)
		return (1-q)*sf(x/c) + q*sf((x-1)/c) - math.Exp(eps)*sf(x/c)
	}
	// L(x) = −log((1−q) + q·e^{(2x−1)/(2c²)}) > ε ⇔ x < x_ε (needs e^{−ε} > 1−q).
	r := math.Exp(-eps) - (1 - q)
	if r <= 0 {
		return 0
	}
	x := 0.5 + c*c*math.Log(r/q)
	return cdf(x/c) - math.Exp(eps)*((1-q)*cdf(x/c)+q*cdf((x-1)/c))
}

// exactPairEpsilon solves δ_remove(ε) = δ and δ_add(ε) = δ by bisection
// and returns the larger ε.
func exactPairEpsilon(q, c, delta float64) float64 {
	worst := 0.0
	for _, add := range []bool{false, true} {
		lo, hi := 0.0, 50.0
		for range 200 {
			m := (lo + hi) / 2
			if exactPairDelta(q, c, m, add) > delta {
				lo = m
			} else {
				hi = m
			}
		}
		worst = max(worst, hi)
	}
	return worst
}

// The PLD accountant's one-round ε is the exact ε of the proven dominating
// pairs of the Poisson-subsampled Gaussian (the larger of the two
// directions), from above and within its reported discretisation error.
// (For one round remove is the larger in every case here; add matters in
// compositions, see TestPLDAddRemoveDiffer.)
func TestPLDDominatingPairOneRound(t *testing.T) {
	for _, tc := range []struct{ q, c, delta float64 }{
		{0.25, 1, 1e-5}, {0.1, 0.7, 1e-5}, {0.5, 2, 1e-3}, {0.9, 0.8, 1e-6}, {0.01, 0.6, 1e-5},
		{0.9, 3, 1e-5}, {0.99, 6, 1e-5}, {0.95, 10, 1e-3},
	} {
		exact := exactPairEpsilon(tc.q, tc.c, tc.delta)
		est, err := privacy.PLDEpsilon([]privacy.Event{{SampleRate: tc.q, NoiseMultiplier: tc.c, Rounds: 1}}, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("q=%g c=%g δ=%g: PLD ε %.6f (%s), exact %.6f", tc.q, tc.c, tc.delta, est.Epsilon, est.Direction, exact)
		if !(est.Epsilon >= exact-1e-9) || !(est.Epsilon-exact <= est.DiscretisationError()+1e-6) {
			t.Errorf("q=%g c=%g δ=%g: PLD ε %.6f (± %.2g), exact %.6f of the dominating pairs", tc.q, tc.c, tc.delta, est.Epsilon, est.DiscretisationError(), exact)
		}
	}
}
