package privacy

import (
	crand "crypto/rand"
	"fmt"
	"math"
	"math/rand/v2"
)

// L2Norm returns ‖x‖₂ without overflow or underflow in the intermediate
// squares. It is +Inf if an entry is ±Inf or the norm exceeds MaxFloat64,
// NaN if an entry is NaN.
//
// The fast path sums the squares directly: four independent accumulators
// over blocks of 32 entries, block sums added with Kahan compensation (so
// the relative error stays within about 1e-15 at any length). If that sum is
// NaN, infinite, or outside [2⁻⁵⁰⁰, 2⁵⁰⁰] (overflow, underflow of small
// entries, or the zero vector) the result comes from the scaled sum of
// squares of BLAS dnrm2 instead, as before. Both paths are deterministic, so
// L2Norm of the same slice is always the same number.
func L2Norm(x []float64) float64 {
	if s := sumSquares(x); s >= 0x1p-500 && s <= 0x1p500 {
		return math.Sqrt(s)
	}
	return l2NormScaled(x)
}

// l2Block is the number of entries summed in plain arithmetic before the
// block sum joins the compensated total.
const l2Block = 32

// sumSquares returns Σx² in plain floating point (see L2Norm); it may
// overflow, underflow or be NaN. The explicit float64 conversions keep the
// compiler from fusing multiply and add, so the result is the same on
// every architecture.
func sumSquares(x []float64) float64 {
	var sum, comp float64
	for len(x) > 0 {
		b := x[:min(len(x), l2Block)]
		x = x[len(b):]
		var s0, s1, s2, s3 float64
		i := 0
		for ; i+4 <= len(b); i += 4 {
			s0 += float64(b[i] * b[i])
			s1 += float64(b[i+1] * b[i+1])
			s2 += float64(b[i+2] * b[i+2])
			s3 += float64(b[i+3] * b[i+3])
		}
		for ; i < len(b); i++ {
			s0 += float64(b[i] * b[i])
		}
		// Kahan: sum + comp tracks the total of the block sums.
		y := ((s0 + s1) + (s2 + s3)) - comp
		t := sum + y
		comp = (t - sum) - y
		sum = t
	}
	return sum
}

// l2NormScaled is the scaled sum of squares of BLAS dnrm2 (one division
// per entry): slow but safe at every scale.
func l2NormScaled(x []float64) float64 {
	scale, ssq := 0.0, 1.0
	for _, v := range x {
		if v == 0 {
			continue
		}
		if math.IsNaN(v) {
			return math.NaN()
		}
		a := math.Abs(v)
		if math.IsInf(a, 1) {
			return math.Inf(1)
		}
		if scale < a {
			r := scale / a
			ssq = 1 + ssq*r*r
			scale = a
		} else {
			r := a / scale
			ssq += r * r
		}
	}
	return scale * math.Sqrt(ssq)
}

// clipMargin is the relative hair by which ClipL2 undershoots the bound, so
// that rounding in the scaling never leaves a norm above it.
const clipMargin = 1e-12

// ClipL2 scales dst in place to dst/max(1, ‖dst‖₂/clip) (spec §5 step 3) and
// returns the norm before clipping. Afterwards L2Norm(dst) ≤ clip holds
// exactly in floating point: a vector above the bound is scaled to
// clip·(1−1e-12), then re-checked and shrunk further if rounding still left
// it above. A vector with a NaN or ±Inf entry cannot be clipped
// meaningfully: it is set to zero (which is within the bound) and the
// returned norm is NaN or +Inf, so callers can reject it. It panics if clip
// is not finite and > 0.
func ClipL2(dst []float64, clip float64) (norm float64) {
	if !(clip > 0 && clip <= math.MaxFloat64) {
		panic(fmt.Sprintf("privacy: ClipL2 bound %v, must be finite and > 0", clip))
	}
	norm = L2Norm(dst)
	if norm <= clip {
		return norm
	}
	// A finite norm implies finite entries (L2Norm is NaN or +Inf
	// otherwise), so only an infinite norm needs the scan.
	if math.IsNaN(norm) || math.IsInf(norm, 1) && !allFinite(dst) {
		clear(dst)
		return norm
	}
	work := norm
	if math.IsInf(work, 1) {
		// Finite entries whose norm overflows: bring them to max|x| = 1 first.
		m := 0.0
		for _, v := range dst {
			m = max(m, math.Abs(v))
		}
		for i := range dst {
			dst[i] /= m
		}
		work = L2Norm(dst)
	}
	if clip/work < 0x1p-1000 {
		// The factor would be (nearly) subnormal and lose precision: bring
		// the vector to norm ≈ 1 first.
		for i := range dst {
			dst[i] /= work
		}
		work = L2Norm(dst)
	}
	f := clip / work * (1 - clipMargin)
	for shrink := clipMargin; ; shrink *= 16 {
		for i := range dst {
			dst[i] *= f
		}
		if L2Norm(dst) <= clip {
			return norm
		}
		// Rounding (e.g. of subnormal entries) left the norm above the
		// bound: shrink by a growing factor; it reaches 0 after a few
		// dozen steps at worst, and the zero vector is within any bound.
		f = max(0, 1-shrink)
	}
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// AddGaussian adds independent N(0, σ²) noise to every entry of dst, drawn
// from rng with rand.Rand.NormFloat64. σ = 0 leaves dst alone; it panics if
// σ is negative, NaN or infinite.
//
// Not for a study's noise: NormFloat64's outputs lie on a coarse grid (an
// int32 times one of 128 float32 steps), and an adversary who knows the two
// candidate values before noise can test which one the released number is
// reachable from (shared/fl TestFloatNoiseAttack succeeds in > 99 % of
// trials; Mironov, CCS 2012, describes the general problem). DP rounds use
// DiscreteGaussian on a Lattice. AddGaussian remains for that test's
// positive control and for non-private uses.
func AddGaussian(dst []float64, sigma float64, rng *rand.Rand) {
	if !(sigma >= 0 && sigma <= math.MaxFloat64) {
		panic(fmt.Sprintf("privacy: AddGaussian σ = %v, must be finite and ≥ 0", sigma))
	}
	if sigma == 0 {
		return
	}
	for i := range dst {
		dst[i] += sigma * rng.NormFloat64()
	}
}

// NewSecureRand returns a ChaCha8 generator seeded with 32 bytes from
// crypto/rand: a cryptographically secure stream (the generator Go's
// runtime uses for its own secure randomness) for privacy noise and
// sampling. DiscreteGaussian draws exact uniform integers from it, so the
// noise is exact up to ChaCha8 being indistinguishable from random.
func NewSecureRand() *rand.Rand {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		// crypto/rand.Read does not fail on supported platforms (Go ≥ 1.24
		// crashes the program instead); keep the check for clarity.
		panic("privacy: crypto/rand: " + err.Error())
	}
	return rand.New(rand.NewChaCha8(seed))
}
