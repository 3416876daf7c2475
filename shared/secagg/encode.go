package secagg

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/privacy"
)

// An Encoder turns an LHA's update into the integer vector it shares: the
// update is clipped to S, rounded to the lattice γℤᵈ of privacy.Lattice
// (the grid of the exact discrete Gaussian sampler), and its squared norm
// is checked in integers against B² with B = ⌊S/γ⌋, rescaling and
// rounding again until it holds (privacy.Lattice.Round). The sensitivity
// of the sum is then exactly B lattice steps; naive rounding would inflate
// it to about S/γ + √d/2 (Kairouz, Liu, Steinke 2021, Theorem 1).
//
// An Encoder is immutable and safe for concurrent use.
type Encoder struct {
	clip float64
	lat  privacy.Lattice // NormBound2 lowered to B²
}

// NewEncoder returns the encoder for clip bound S and noise multiplier c
// (the ranges of privacy.NewLattice).
func NewEncoder(clip, c float64) (*Encoder, error) {
	lat, err := privacy.NewLattice(clip, c)
	if err != nil {
		return nil, fmt.Errorf("secagg: %w", err)
	}
	e := &Encoder{clip: clip, lat: *lat}
	e.lat.NormBound2 = uint64(lat.MaxCoord) * uint64(lat.MaxCoord) // B² ≤ ⌊(S/γ)²⌋
	return e, nil
}

// Gamma returns the lattice step γ.
func (e *Encoder) Gamma() float64 { return e.lat.Gamma }

// B returns the norm bound B = ⌊S/γ⌋ in lattice steps.
func (e *Encoder) B() int64 { return e.lat.MaxCoord }

// Sigma2 returns each server's noise variance in steps², ⌈(c·S/γ)²⌉.
func (e *Encoder) Sigma2() uint64 { return e.lat.Sigma2 }

// Noise returns the discrete Gaussian N_ℤ(0, Sigma2) each server adds.
func (e *Encoder) Noise() *privacy.DiscreteGaussian { return e.lat.Noise() }

// Encode writes to dst the integer encoding k of update u: Σk_j² ≤ B²,
// |k_j| ≤ B. u is not modified. An update with a NaN or ±Inf entry
// encodes as zero. It panics if the lengths differ.
func (e *Encoder) Encode(dst []int64, u []float64) {
	if len(dst) != len(u) {
		panic("secagg: Encode: lengths differ")
	}
	buf := append([]float64(nil), u...)
	privacy.ClipL2(buf, e.clip)
	e.lat.Round(dst, buf)
}

// CheckEncoded reports whether k is a valid encoding: every |k_j| ≤ B and
// Σk_j² ≤ B², checked exactly in integers. A server cannot run this check
// on a shared update (it sees only a share); an LHA runs it on its own
// encoding before sharing, and tests use it.
func (e *Encoder) CheckEncoded(k []int64) error {
	b := e.lat.MaxCoord
	b2 := uint64(b) * uint64(b)
	var acc uint64
	for j, z := range k {
		if z < -b || z > b {
			return fmt.Errorf("secagg: coordinate %d is %d lattice steps, beyond B = %d", j, z, b)
		}
		acc += uint64(z * z)
		if acc > b2 {
			return fmt.Errorf("secagg: squared norm exceeds B² = %d at coordinate %d", b2, j)
		}
	}
	return nil
}
