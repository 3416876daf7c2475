package privacy_test

import (
	"math"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// logSumExp returns log Σ exp(v).
func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// discreteSubsampledRDP returns, for the one-dimensional Poisson-subsampled
// discrete Gaussian P = (1−q)N_ℤ(0, σ²) + q·N_ℤ(μ, σ²) against
// P₀ = N_ℤ(0, σ²) with an integer μ, the Rényi divergences of order α in
// both directions, D_α(P‖P₀) and D_α(P₀‖P), by direct summation over the
// integers (|x| ≤ 60σ + (α+2)μ: the integrands peak near 0 and αμ, and
// what lies beyond is below e^−1800 of the total).
func discreteSubsampledRDP(q, sigma float64, mu int, alpha float64) (fwd, rev float64) {
	r := int(60*sigma) + int(alpha+2)*mu
	logp0 := make([]float64, 0, 2*r+1)
	for x := -r; x <= r; x++ {
		logp0 = append(logp0, -float64(x)*float64(x)/(2*sigma*sigma))
	}
	logZ := logSumExp(logp0)
	var f, b []float64
	for x, i := -r, 0; x <= r; x, i = x+1, i+1 {
		lp0 := logp0[i] - logZ
		w := (2*float64(x)*float64(mu) - float64(mu*mu)) / (2 * sigma * sigma)
		// log((1−q) + q·e^w), stably
		var lr float64
		if w > 0 {
			lr = w + math.Log(q+(1-q)*math.Exp(-w))
		} else {
			lr = math.Log((1 - q) + q*math.Exp(w))
		}
		f = append(f, lp0+alpha*lr)
		b = append(b, lp0+(1-alpha)*lr)
	}
	return logSumExp(f) / (alpha - 1), logSumExp(b) / (alpha - 1)
}

// TestDiscreteSubsampledRDP checks docs/privacy.md's claims numerically in
// one dimension: for the Poisson-subsampled discrete Gaussian with integer
// shift μ and σ = c·μ, the direction D_α(P‖P₀) equals the continuous
// Sampled Gaussian's RDP (privacy.SampledGaussianRDP(q, c, α), which the accountant uses)
// to relative 1e-9 at integer and fractional orders, and the other
// direction is not larger. Deterministic (no sampling).
func TestDiscreteSubsampledRDP(t *testing.T) {
	for _, c := range []float64{0.8, 1, 2, 4.8828125, 9} {
		for _, mu := range []int{3, 8} {
			sigma := c * float64(mu)
			for _, alpha := range []float64{2, 3.5, 10, 10.9, 32, 63} {
				for _, q := range []float64{0.01, 0.25} {
					want := privacy.SampledGaussianRDP(q, c, alpha)
					fwd, rev := discreteSubsampledRDP(q, sigma, mu, alpha)
					if math.IsInf(want, 1) || want > 50 {
						continue // beyond any useful order: exp overflows the direct sum
					}
					if math.Abs(fwd-want) > 1e-9*math.Max(want, 1e-12)+1e-15 {
						t.Errorf("c=%v μ=%d α=%v q=%v: discrete D_α(P‖P₀) = %.15g, continuous %.15g", c, mu, alpha, q, fwd, want)
					}
					if rev > want*(1+1e-9)+1e-15 {
						t.Errorf("c=%v μ=%d α=%v q=%v: discrete D_α(P₀‖P) = %.15g above the accountant's %.15g", c, mu, alpha, q, rev, want)
					}
				}
			}
		}
	}
}
