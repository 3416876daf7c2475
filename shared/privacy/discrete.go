package privacy

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// SamplerName names the noise sampler in privacy events and ledgers:
// Canonne, Kamath and Steinke's exact discrete Gaussian sampler (NeurIPS
// 2020, Algorithms 1–3) over integer σ², driven by uniform integers.
const SamplerName = "discrete-gaussian-cks2020"

// MaxDiscreteSigma2 is the largest σ² a DiscreteGaussian accepts (σ ≤ 2¹⁵).
// It keeps every intermediate of the acceptance test within 64-bit words
// (see NewDiscreteGaussian).
const MaxDiscreteSigma2 = 1 << 30

// discreteTailSteps bounds the geometric part of a discrete Laplace
// proposal: a proposal needing more than 2²⁰ consecutive successes of
// Bernoulli(e⁻¹) (probability e^−1048576) is discarded and redrawn. The
// output is then the discrete Gaussian conditioned on |X| < t·(2²⁰+1),
// t > σ, whose distance in total variation from the untruncated one is below
// e^−549755813888 (see docs/privacy.md); in exchange no intermediate can
// overflow.
const discreteTailSteps = 1 << 20

// DiscreteGaussian samples exactly from the discrete Gaussian N_ℤ(0, σ²)
// on the integers, P[X = x] ∝ exp(−x²/(2σ²)), for an integer σ². It uses
// only uniform integers from the generator (rand.Rand.Uint64N and Uint64,
// which are exact) and integer arithmetic: no floating point touches the
// noise, so its output set and probabilities are exactly those of the
// distribution the privacy analysis assumes (Canonne, Kamath, Steinke 2020).
//
// The number of random draws per sample varies, but only with the random
// bits: it never depends on any data. A DiscreteGaussian is immutable and
// safe for concurrent use with separate generators.
type DiscreteGaussian struct {
	sigma2 uint64 // σ²
	t      uint64 // ⌊σ⌋ + 1, the discrete Laplace scale of the proposal
	den    uint64 // 2σ²t², the denominator of the acceptance exponent
}

// NewDiscreteGaussian returns the sampler of N_ℤ(0, sigma2). sigma2 must be
// in [1, MaxDiscreteSigma2].
//
// Overflow: with σ² ≤ 2³⁰, t = ⌊σ⌋+1 ≤ 2¹⁵+1 and a proposal
// |y| < t·(2²⁰+1), so t·|y| < 2⁵¹ and the exponent's numerator
// (t|y| − σ²)² < 2¹⁰² fits in 128 bits; the denominator 2σ²t² < 2⁶² fits
// in 64; and the integer part of their quotient is below
// t²(2²⁰+1)²/(2σ²) < 2⁴² (t ≤ 2σ), so the 128-by-64-bit division cannot
// overflow.
func NewDiscreteGaussian(sigma2 uint64) (*DiscreteGaussian, error) {
	if sigma2 < 1 || sigma2 > MaxDiscreteSigma2 {
		return nil, fmt.Errorf("privacy: discrete Gaussian σ² = %d, must be in [1, %d]", sigma2, uint64(MaxDiscreteSigma2))
	}
	t := isqrt(sigma2) + 1
	return &DiscreteGaussian{sigma2: sigma2, t: t, den: 2 * sigma2 * t * t}, nil
}

// Sigma2 returns σ².
func (g *DiscreteGaussian) Sigma2() uint64 { return g.sigma2 }

// Sample returns one draw of N_ℤ(0, σ²) (CKS Algorithm 3): propose Y from
// the discrete Laplace distribution with scale t = ⌊σ⌋+1 and accept it with
// probability exp(−(|Y| − σ²/t)²/(2σ²)), an exact Bernoulli of a rational
// exponent (t|Y| − σ²)²/(2σ²t²). The expected number of proposals is below
// 2 for every σ ≥ 1.
func (g *DiscreteGaussian) Sample(rng *rand.Rand) int64 {
	b := bitRand{r: rng}
	return g.sample(&b)
}

func (g *DiscreteGaussian) sample(rng *bitRand) int64 {
	for {
		y, neg := g.laplace(rng)
		// a = |t·|y| − σ²|; a² is the acceptance exponent's numerator.
		a := g.t * y
		if a >= g.sigma2 {
			a -= g.sigma2
		} else {
			a = g.sigma2 - a
		}
		hi, lo := bits.Mul64(a, a)
		q, r := bits.Div64(hi, lo, g.den)
		if bernoulliExp(rng, q, r, g.den) {
			if neg {
				return -int64(y)
			}
			return int64(y)
		}
	}
}

// AddTo adds an independent draw to every entry of dst. The draws use
// rng's words exactly as Sample would, except that single random bits (for
// signs and fair coins) are taken 64 to a word.
func (g *DiscreteGaussian) AddTo(dst []int64, rng *rand.Rand) {
	b := bitRand{r: rng}
	for i := range dst {
		dst[i] += g.sample(&b)
	}
}

// bitRand hands out uniform integers from r, and single fair bits from a
// buffered word.
type bitRand struct {
	r    *rand.Rand
	bits uint64
	n    uint
}

// Uint64N returns a uniform integer in [0, n) (rand.Rand.Uint64N: exact).
func (b *bitRand) Uint64N(n uint64) uint64 { return b.r.Uint64N(n) }

// coin returns a fair random bit.
func (b *bitRand) coin() bool {
	if b.n == 0 {
		b.bits, b.n = b.r.Uint64(), 64
	}
	c := b.bits&1 == 1
	b.bits >>= 1
	b.n--
	return c
}

// laplace draws |Y| and its sign from the discrete Laplace distribution
// P[Y = y] ∝ exp(−|y|/t) (CKS Algorithm 2 with s = 1): U uniform in
// [0, t) kept with probability exp(−U/t), V geometric (the count of
// successes of Bernoulli(e⁻¹) before the first failure), |Y| = U + tV,
// a fair sign, and the draw (U+tV = 0, negative) rejected so that 0 is not
// counted twice. Proposals with V > discreteTailSteps are rejected too.
func (g *DiscreteGaussian) laplace(rng *bitRand) (abs uint64, neg bool) {
	for {
		u := rng.Uint64N(g.t)
		if !bernoulliExpFrac(rng, u, g.t) {
			continue
		}
		v := uint64(0)
		for v <= discreteTailSteps && bernoulliExp1(rng) {
			v++
		}
		if v > discreteTailSteps {
			continue
		}
		abs = u + g.t*v
		neg = rng.coin()
		if neg && abs == 0 {
			continue
		}
		return abs, neg
	}
}

// bernoulliExp returns true with probability exp(−(q + r/d)), 0 ≤ r < d:
// q independent Bernoulli(e⁻¹) trials must all succeed (stopping at the
// first failure, so the expected work is bounded whatever q), then a
// Bernoulli(exp(−r/d)) (CKS Algorithm 1, case γ > 1).
func bernoulliExp(rng *bitRand, q, r, d uint64) bool {
	for ; q > 0; q-- {
		if !bernoulliExp1(rng) {
			return false
		}
	}
	return bernoulliExpFrac(rng, r, d)
}

// bernoulliExpFrac returns true with probability exp(−n/d), 0 ≤ n ≤ d,
// d ≥ 1 (CKS Algorithm 1, case γ ∈ [0, 1]): draw A_k ~ Bernoulli(n/(d·k))
// for k = 1, 2, … until the first A_k = 0, and return whether that k is
// odd. P[K > k] = (n/d)^k/k!, so P[K odd] = Σ (−n/d)^j/j! = exp(−n/d).
func bernoulliExpFrac(rng *bitRand, n, d uint64) bool {
	if n == 0 {
		return true
	}
	k := uint64(1)
	for bernoulliRatio(rng, n, d, k) {
		k++
	}
	return k&1 == 1
}

// bernoulliExp1 returns true with probability e⁻¹ (bernoulliExpFrac with
// n = d = 1: A_k ~ Bernoulli(1/k); A_1 = 1 always, and A_2 is a fair coin).
func bernoulliExp1(rng *bitRand) bool {
	if !rng.coin() {
		return false // K = 2
	}
	k := uint64(3)
	for rng.Uint64N(k) == 0 {
		k++
	}
	return k&1 == 1
}

// bernoulliRatio returns true with probability n/(d·k), n ≤ d: one uniform
// draw in [0, d·k) when d·k fits in 64 bits, otherwise the product of
// Bernoulli(n/d) and Bernoulli(1/k).
func bernoulliRatio(rng *bitRand, n, d, k uint64) bool {
	if hi, lo := bits.Mul64(d, k); hi == 0 {
		return rng.Uint64N(lo) < n
	}
	return rng.Uint64N(d) < n && rng.Uint64N(k) == 0
}

// isqrt returns ⌊√x⌋.
func isqrt(x uint64) uint64 {
	if x < 2 {
		return x
	}
	// Newton's iteration from above, in integers.
	r := uint64(1) << ((bits.Len64(x) + 1) / 2)
	for {
		s := (r + x/r) / 2
		if s >= r {
			return r
		}
		r = s
	}
}
