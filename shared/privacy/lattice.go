package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
)

// The lattice mechanism's limits on the noise multiplier c. Below
// MinLatticeNoiseMultiplier the clip bound would span more than 2²⁵ lattice
// steps and the integer sums would need more than 64 bits for large studies;
// above MaxLatticeNoiseMultiplier it would span fewer than 2. Both are far
// outside any useful study (c = 2⁻¹⁰ gives no meaningful privacy, c = 2¹³ no
// meaningful model).
const (
	MinLatticeNoiseMultiplier = 1.0 / 1024
	MaxLatticeNoiseMultiplier = 8192
)

// latticeSigmaLog2 fixes the lattice step: γ is the power of two with
// c·S/γ ∈ [2¹⁴, 2¹⁵), the largest noise scale (in steps) the
// DiscreteGaussian sampler handles in 64-bit words.
const latticeSigmaLog2 = 14

// A Lattice is the integer grid γℤᵈ on which a DP round is aggregated
// (docs/privacy.md): each re-clipped update is rounded to an integer vector
// in units of γ whose squared norm is at most NormBound2 ≤ (S/γ)², the
// vectors are summed exactly in int64, and discrete Gaussian noise of
// variance Sigma2 ≥ (c·S/γ)² is added to every coordinate of the sum. The
// noise-to-sensitivity ratio on the lattice is therefore at least c, the
// noise multiplier the accountant uses.
type Lattice struct {
	// Gamma is the step γ, a power of two with c·S/γ ∈ [2¹⁴, 2¹⁵), so that
	// σ/γ ≥ 2¹⁴ and scaling by 1/γ is exact in floating point.
	Gamma float64
	// Sigma2 is the noise variance in steps², ⌈(c·S/γ)²⌉ computed exactly
	// (rounding up only adds noise).
	Sigma2 uint64
	// NormBound2 is ⌊(S/γ)²⌋, computed exactly: the largest squared norm
	// of a rounded update. The L2 sensitivity of the integer sum is
	// √NormBound2 ≤ S/γ.
	NormBound2 uint64
	// MaxCoord is ⌊S/γ⌋ ≥ |z_i| for every coordinate of a rounded update.
	MaxCoord int64
	// MaxAdds is the number of updates an int64 sum can hold with room for
	// the noise: MaxAdds·MaxCoord ≤ 2⁶² and every noise draw is below 2³⁶ in
	// absolute value (t·(2²⁰+1) with t ≤ 2¹⁵+1).
	MaxAdds int64

	noise *DiscreteGaussian
}

// NewLattice returns the lattice for clip bound S and noise multiplier c,
// with c in [MinLatticeNoiseMultiplier, MaxLatticeNoiseMultiplier].
func NewLattice(clip, c float64) (*Lattice, error) {
	if err := CheckClipNorm(clip); err != nil {
		return nil, err
	}
	if !(c >= MinLatticeNoiseMultiplier && c <= MaxLatticeNoiseMultiplier) {
		return nil, bad("noise multiplier c", c, fmt.Sprintf("[%g, %g] for the lattice mechanism", MinLatticeNoiseMultiplier, float64(MaxLatticeNoiseMultiplier)))
	}
	cs := new(big.Float).SetPrec(256).Mul(big.NewFloat(c), big.NewFloat(clip)) // exact: 106 bits suffice
	// γ = 2^e with c·S/γ ∈ [2¹⁴, 2¹⁵): c·S = mant·2^exp, mant ∈ [½, 1).
	e := cs.MantExp(nil) - 1 - latticeSigmaLog2
	if e < -1022 || e > 1023-latticeSigmaLog2 {
		return nil, bad("clip norm S", clip, "a range where the lattice step c·S/2¹⁴ is a normal float64")
	}
	l := &Lattice{Gamma: math.Ldexp(1, e)}
	// σ/γ and S/γ exactly, then ⌈(σ/γ)²⌉ and ⌊(S/γ)²⌋.
	sg := new(big.Float).SetPrec(256).SetMantExp(cs, -e)
	sb := new(big.Float).SetPrec(256).SetMantExp(big.NewFloat(clip), -e)
	sq := func(x *big.Float, ceil bool) uint64 {
		x2 := new(big.Float).SetPrec(512).Mul(x, x) // exact
		i, acc := x2.Int(nil)                       // truncates toward zero
		if ceil && acc == big.Below {
			i.Add(i, big.NewInt(1))
		}
		return i.Uint64()
	}
	l.Sigma2 = sq(sg, true)
	l.NormBound2 = sq(sb, false)
	l.MaxCoord = int64(isqrt(l.NormBound2))
	if l.MaxCoord < 2 {
		return nil, bad("noise multiplier c", c, "a value for which the clip bound spans at least 2 lattice steps")
	}
	l.MaxAdds = (1 << 62) / l.MaxCoord
	var err error
	if l.noise, err = NewDiscreteGaussian(l.Sigma2); err != nil {
		return nil, err
	}
	return l, nil
}

// Noise returns the lattice's discrete Gaussian N_ℤ(0, Sigma2).
func (l *Lattice) Noise() *DiscreteGaussian { return l.noise }

// Round writes to dst the integer vector z ≈ u/γ (rounded to nearest) with
// ‖z‖² ≤ NormBound2 guaranteed by an exact integer check. Rounding can
// lift a vector of norm ≤ S above the bound (by up to √d/2 steps); then u
// is scaled down slightly and rounded again, a few times, and if that
// still does not fit, scaled to (S/γ − √d/2 − 1)/‖u/γ‖, which always fits
// after rounding; failing all that (or if u has a NaN or ±Inf) z is the
// zero vector. Round is deterministic: the same u always gives the same z.
// It panics if the lengths differ.
func (l *Lattice) Round(dst []int64, u []float64) {
	if len(dst) != len(u) {
		panic("privacy: Lattice.Round: lengths differ")
	}
	inv := 1 / l.Gamma // a power of two: exact
	bound := math.Sqrt(float64(l.NormBound2))
	s := inv
	for k := 0; k < 6; k++ {
		fits, n2 := l.roundInto(dst, u, s)
		if fits {
			return
		}
		if !(n2 > 0 && n2 <= math.MaxFloat64) {
			break
		}
		// Aim just inside the bound; the margin doubles each attempt.
		s *= bound / math.Sqrt(n2) * (1 - math.Ldexp(1, k-16))
	}
	nu := L2Norm(u) * inv
	if target := bound - math.Sqrt(float64(len(u)))/2 - 1; target > 0 && nu > 0 && nu <= math.MaxFloat64 {
		if fits, _ := l.roundInto(dst, u, inv*(target/nu)); fits {
			return
		}
	}
	clear(dst)
}

// roundInto sets dst[i] = round(u[i]·s) and reports whether the result
// is within the bound (exact integer check) and its squared norm in
// floating point (for the next scale; may be +Inf or NaN).
func (l *Lattice) roundInto(dst []int64, u []float64, s float64) (fits bool, n2 float64) {
	var acc uint64 // exact Σz², saturating above NormBound2 (≤ 2⁵⁰ + 2⁵⁰)
	fits = true
	maxc := float64(l.MaxCoord)
	for i, v := range u {
		x := math.Round(v * s)
		n2 += x * x
		if !(math.Abs(x) <= maxc) {
			fits = false
			dst[i] = 0
			continue
		}
		z := int64(x)
		dst[i] = z
		if fits {
			acc += uint64(z * z) // z² ≤ MaxCoord² ≤ NormBound2 ≤ 2⁵⁰
			if acc > l.NormBound2 {
				fits = false
			}
		}
	}
	return fits, n2
}

// AddNoise adds independent N_ℤ(0, Sigma2) draws to every entry of sum.
func (l *Lattice) AddNoise(sum []int64, rng *rand.Rand) { l.noise.AddTo(sum, rng) }
