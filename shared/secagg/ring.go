package secagg

import (
	"errors"
	"fmt"
	"math/big"
)

// A Ring is ℤ_{2^Bits}, the ring the shares live in. Ring64 is the one a
// study uses; smaller rings exist for tests that enumerate every mask.
// Elements are held in uint64 words, reduced (bits above Bits are zero).
type Ring struct {
	bits uint
}

// Ring64 is ℤ_{2^64}: additions wrap around in uint64 for free.
var Ring64 = Ring{bits: 64}

// NewRing returns ℤ_{2^bits} for bits in [2, 64].
func NewRing(bits int) (Ring, error) {
	if bits < 2 || bits > 64 {
		return Ring{}, fmt.Errorf("secagg: ring of 2^%d elements: the exponent must be in [2, 64]", bits)
	}
	return Ring{bits: uint(bits)}, nil
}

// mask returns 2^Bits − 1.
func (r Ring) mask() uint64 { return ^uint64(0) >> (64 - r.bits) }

// Reduce returns x mod 2^Bits.
func (r Ring) Reduce(x uint64) uint64 { return x & r.mask() }

// FromInt returns z mod 2^Bits (two's complement, then reduced).
func (r Ring) FromInt(z int64) uint64 { return uint64(z) & r.mask() }

// Lift returns the centred lift of x ∈ ℤ_{2^Bits}: the integer in
// [−2^(Bits−1), 2^(Bits−1)) congruent to x. It is the true value of a sum
// whenever the sum's absolute value is below 2^(Bits−1) (CheckWrap).
func (r Ring) Lift(x uint64) int64 {
	x &= r.mask()
	if r.bits == 64 {
		return int64(x) // two's complement is the centred lift
	}
	if x >= 1<<(r.bits-1) {
		return int64(x) - int64(1)<<r.bits
	}
	return int64(x)
}

// WrapTails is t, the number of standard deviations of each server's noise
// that CheckWrap leaves room for. A discrete Gaussian exceeds tσ with
// probability below 2·e^(−t²/2) = 2·e^−800 per coordinate.
const WrapTails = 40

// ErrWrap is returned by CheckWrap for a study whose sums could wrap
// around the ring.
var ErrWrap = errors.New("secagg: the sum could wrap around")

// CheckWrap returns nil if a sum of n updates of at most b lattice steps
// per coordinate, plus two servers' discrete Gaussian noise of variance
// sigma2 (steps²), decodes exactly in r: n·b + 2·t·σ < 2^(Bits−1) with
// t = WrapTails and σ = √sigma2 rounded up. Otherwise the error wraps
// ErrWrap and says what to change.
func CheckWrap(r Ring, n int, b int64, sigma2 uint64) error {
	if n < 0 || b < 0 {
		return fmt.Errorf("secagg: CheckWrap: negative count %d or bound %d", n, b)
	}
	sigma := new(big.Int).Sqrt(new(big.Int).SetUint64(sigma2))
	if new(big.Int).Mul(sigma, sigma).Cmp(new(big.Int).SetUint64(sigma2)) != 0 {
		sigma.Add(sigma, big.NewInt(1)) // ⌈√σ²⌉
	}
	total := new(big.Int).Mul(big.NewInt(int64(n)), big.NewInt(b))
	total.Add(total, new(big.Int).Mul(big.NewInt(2*WrapTails), sigma))
	limit := new(big.Int).Lsh(big.NewInt(1), r.bits-1)
	if total.Cmp(limit) >= 0 {
		return fmt.Errorf("%w: %d LHAs × %d lattice steps + 2 × %d × σ (σ = %s steps) = %s, which is not below 2^%d; "+
			"enrol fewer LHAs or use a larger noise multiplier", ErrWrap, n, b, WrapTails, sigma, total, r.bits-1)
	}
	return nil
}

// CheckStudy is the wrap-around check `fedcast study new` runs for a study
// with a helper: for N = clients LHAs, clip bound S and every noise
// multiplier the study uses (c, or each c_t of a noise schedule), the
// encoder's B and σ² must pass CheckWrap in ℤ_{2^64}.
func CheckStudy(clients int, clip float64, noiseMultipliers ...float64) error {
	if len(noiseMultipliers) == 0 {
		return errors.New("secagg: CheckStudy: no noise multiplier")
	}
	for _, c := range noiseMultipliers {
		e, err := NewEncoder(clip, c)
		if err != nil {
			return err
		}
		if err := CheckWrap(Ring64, clients, e.B(), e.Sigma2()); err != nil {
			return err
		}
	}
	return nil
}
