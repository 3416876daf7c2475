package secagg

import (
	"crypto/rand"
	"crypto/sha3"
	"encoding/binary"
)

// SeedSize is the length of a share seed in bytes.
const SeedSize = 32

// A Seed is the 32 random bytes from which the helper's share of one report
// is expanded (Expand). It is what the LHA seals to the helper's key.
type Seed [SeedSize]byte

// NewSeed returns a seed from crypto/rand.
func NewSeed() Seed {
	var s Seed
	rand.Read(s[:]) // never returns an error (crypto/rand)
	return s
}

// xofCustom separates this XOF's outputs from every other use of cSHAKE128.
const xofCustom = "fedcast secagg helper share v1"

// Expand writes to dst the helper's share expanded from seed: cSHAKE128
// (FIPS 202 / SP 800-185, customisation "fedcast secagg helper share v1")
// of the seed, read as little-endian 64-bit words, each reduced into r.
// The words are uniform in r and, without the seed, indistinguishable
// from independent uniform draws (the XOF modelled as a random oracle).
func Expand(dst []uint64, seed Seed, r Ring) {
	x := sha3.NewCSHAKE128(nil, []byte(xofCustom))
	x.Write(seed[:])
	var buf [8 * 256]byte
	for i := 0; i < len(dst); i += 256 {
		n := min(256, len(dst)-i)
		x.Read(buf[:8*n])
		for j := range n {
			dst[i+j] = r.Reduce(binary.LittleEndian.Uint64(buf[8*j:]))
		}
	}
}

// Split writes to leader the leader's share k − mask (mod 2^Bits), where
// mask is the helper's share. The two shares sum to k in r; each alone is
// uniform whatever k is. It panics if the lengths differ.
func Split(leader []uint64, k []int64, mask []uint64, r Ring) {
	if len(leader) != len(k) || len(mask) != len(k) {
		panic("secagg: Split: lengths differ")
	}
	for j, z := range k {
		leader[j] = r.Reduce(r.FromInt(z) - mask[j])
	}
}

// Share writes to leader the leader's share of k for the helper's share
// expanded from seed: Split(leader, k, Expand(seed), r). It panics if the
// lengths differ.
func Share(leader []uint64, k []int64, seed Seed, r Ring) {
	if len(leader) != len(k) {
		panic("secagg: Share: lengths differ")
	}
	Expand(leader, seed, r)
	for j, z := range k {
		leader[j] = r.Reduce(r.FromInt(z) - leader[j])
	}
}
