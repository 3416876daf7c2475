package secagg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// testStudy is a fixed study hash for tests.
var testStudy = [32]byte{1, 2, 3, 4, 5, 6, 7, 8}

// testEncoder returns the encoder of the paper's S = 0.5 at c = 1.
func testEncoder(t testing.TB) *Encoder {
	t.Helper()
	e, err := NewEncoder(0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// testKey returns a fresh helper key.
func testKey(t testing.TB) *PrivateKey {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// randomUpdate returns an update of dimension d and L2 norm about norm.
func randomUpdate(rng *rand.Rand, d int, norm float64) []float64 {
	u := make([]float64, d)
	var s float64
	for i := range u {
		u[i] = rng.NormFloat64()
		s += u[i] * u[i]
	}
	if s == 0 {
		return u
	}
	f := norm / math.Sqrt(s)
	for i := range u {
		u[i] *= f
	}
	return u
}

// seedFor returns a fixed seed for tests.
func seedFor(i int) Seed {
	var s Seed
	for j := range s {
		s[j] = byte(i*31 + j)
	}
	return s
}

// idFor returns a fixed report ID for LHA i.
func idFor(i int) ReportID {
	var id ReportID
	id[3] = byte(i)
	id[2] = byte(i >> 8)
	id[15] = 0xaa
	return id
}
