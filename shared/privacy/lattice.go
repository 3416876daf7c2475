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

// Round writes to dst an integer vector z ≈ u/γ with ‖z‖² ≤ NormBound2,
// guaranteed by an exact integer check. Rounding to the nearest integer can
// lift a vector of norm ≤ S above the bound: by ‖e‖² ≈ d/12 plus a cross
// term 2⟨u/γ, e⟩ of standard deviation ≈ 0.58·‖u/γ‖ (e the rounding
// error). So a vector close to the bound is first scaled down just enough
// that its rounding fits with high probability (a relative 2.5e-4 at the
// paper's settings); if the check still fails, it is scaled down a little
// further and rounded again, a few times, and then to
// (S/γ − √d/2 − 1)/‖u/γ‖, which always fits after rounding; failing all
// that (or if u has a NaN or ±Inf) z is the zero vector. Round is a
// deterministic function of u. It panics if the lengths differ.
func (l *Lattice) Round(dst []int64, u []float64) {
	if len(dst) != len(u) {
		panic("privacy: Lattice.Round: lengths differ")
	}
	inv := 1 / l.Gamma // a power of two: exact
	b2 := float64(l.NormBound2)
	bound := math.Sqrt(b2)
	d := float64(len(u))
	nv := L2Norm(u) * inv // ‖u/γ‖ in steps
	if !(nv <= math.MaxFloat64) {
		clear(dst) // NaN or ±Inf entries
		return
	}
	s := inv
	if nv > 0 && nv*nv+d/12+1.8*nv > b2 {
		if t := b2 - d/12 - 1.8*bound; t > 0 && math.Sqrt(t) < nv {
			s *= math.Sqrt(t) / nv
		}
	}
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
	if target := bound - math.Sqrt(d)/2 - 1; target > 0 && nv > 0 {
		if fits, _ := l.roundInto(dst, u, inv*(target/nv)); fits {
			return
		}
	}
	clear(dst)
}

// roundMagic is 1.5·2⁵²: for |y| ≤ 2⁵¹, (y + roundMagic) − roundMagic is y
// rounded to the nearest integer (ties to even), exactly, in two additions.
const roundMagic = 0x1.8p52

// roundInto sets dst[i] = round(u[i]·s) and reports whether the result
// is within the bound (exact integer check) and its squared norm in
// floating point (for the next scale; may be +Inf or NaN). An entry with
// |u[i]·s| > MaxCoord makes the vector not fit.
func (l *Lattice) roundInto(dst []int64, u []float64, s float64) (fits bool, n2 float64) {
	var acc uint64 // exact Σz², saturating above NormBound2 (≤ 2⁵⁰ + 2⁵⁰)
	fits = true
	maxc := float64(l.MaxCoord) // ≤ 2²⁵
	for i, v := range u {
		y := v * s
		if !(math.Abs(y) <= maxc) {
			n2 += y * y
			fits = false
			dst[i] = 0
			continue
		}
		x := (y + roundMagic) - roundMagic
		n2 += x * x
		z := int64(x)
		dst[i] = z
		acc += uint64(z * z) // z² ≤ MaxCoord² ≤ NormBound2 ≤ 2⁵⁰
		if acc > l.NormBound2 {
			fits = false
			acc = l.NormBound2 + 1 // saturate: no overflow however long u is
		}
	}
	return fits, n2
}

// AddNoise adds independent N_ℤ(0, Sigma2) draws to every entry of sum.
func (l *Lattice) AddNoise(sum []int64, rng *rand.Rand) { l.noise.AddTo(sum, rng) }
