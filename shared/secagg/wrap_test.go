package secagg

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// wrapRound sums n LHAs whose every coordinate is sign·b, with both
// servers' noise forced to sign·t·σ, in ring r, and returns the decoded
// sum and the true one.
func wrapRound(r Ring, n int, b int64, sigma2 uint64, sign int64) (got, want []int64) {
	const d = 3
	sigma := int64(1)
	for sigma*sigma < int64(sigma2) {
		sigma++
	}
	ls, hs := NewSum(r, d), NewSum(r, d)
	k := []int64{sign * b, sign * b, sign * b}
	lshare, mask := make([]uint64, d), make([]uint64, d)
	for i := range n {
		for j := range mask {
			mask[j] = r.Reduce(uint64(i)*0x9e3779b97f4a7c15 + uint64(j)*0xbf58476d1ce4e5b9)
		}
		Split(lshare, k, mask, r)
		ls.Add(lshare)
		hs.Add(mask)
	}
	noise := []int64{sign * WrapTails * sigma, sign * WrapTails * sigma, sign * WrapTails * sigma}
	ls.AddNoiseVector(noise)
	hs.AddNoiseVector(noise)
	got = make([]int64, d)
	Combine(got, ls.Share(), hs.Share(), r)
	w := int64(n)*sign*b + 2*noise[0]
	return got, []int64{w, w, w}
}

func TestWrapAround500LHAsAtTheBound(t *testing.T) {
	e := testEncoder(t)
	const n = 500
	if err := CheckWrap(Ring64, n, e.B(), e.Sigma2()); err != nil {
		t.Fatal(err)
	}
	for _, sign := range []int64{1, -1} {
		got, want := wrapRound(Ring64, n, e.B(), e.Sigma2(), sign)
		if !slices.Equal(got, want) {
			t.Errorf("ℤ_2^64, sign %d: decoded %v, want %v", sign, got, want)
		}
	}
	// The smallest ring CheckWrap admits for these parameters decodes
	// exactly; one bit less is refused, and would indeed wrap.
	bits := 2
	for ; bits <= 64; bits++ {
		r, _ := NewRing(bits)
		if CheckWrap(r, n, e.B(), e.Sigma2()) == nil {
			break
		}
	}
	tight, _ := NewRing(bits)
	small, _ := NewRing(bits - 1)
	for _, sign := range []int64{1, -1} {
		if got, want := wrapRound(tight, n, e.B(), e.Sigma2(), sign); !slices.Equal(got, want) {
			t.Errorf("ℤ_2^%d, sign %d: decoded %v, want %v", bits, sign, got, want)
		}
	}
	if err := CheckWrap(small, n, e.B(), e.Sigma2()); !errors.Is(err, ErrWrap) {
		t.Fatalf("ℤ_2^%d admitted: %v", bits-1, err)
	}
	if got, want := wrapRound(small, n, e.B(), e.Sigma2(), 1); slices.Equal(got, want) {
		t.Errorf("ℤ_2^%d decoded exactly although CheckWrap refuses it: the check is far from tight", bits-1)
	}
	t.Logf("500 LHAs at B = %d, σ² = %d: smallest ring ℤ_2^%d", e.B(), e.Sigma2(), bits)
}

func TestCheckStudyRefusesASmallModulus(t *testing.T) {
	if err := CheckStudy(500, 0.5, 1); err != nil {
		t.Fatalf("500 LHAs at S = 0.5, c = 1: %v", err)
	}
	// c = 2⁻¹⁰ makes B about 2²⁴ steps: 2⁴⁰ LHAs could wrap around 2⁶⁴.
	err := CheckStudy(1<<40, 0.5, 1, 1.0/1024)
	if !errors.Is(err, ErrWrap) {
		t.Fatalf("2^40 LHAs at c = 2^-10: %v, want ErrWrap", err)
	}
	for _, w := range []string{"1099511627776 LHAs", "enrol fewer LHAs"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if err := CheckStudy(10, 0.5); err == nil {
		t.Error("CheckStudy without a noise multiplier: no error")
	}
	if err := CheckStudy(10, -1, 1); err == nil {
		t.Error("CheckStudy with S = -1: no error")
	}
}

func TestRing(t *testing.T) {
	for _, bits := range []int{1, 0, 65} {
		if _, err := NewRing(bits); err == nil {
			t.Errorf("NewRing(%d): no error", bits)
		}
	}
	r, _ := NewRing(8)
	for _, c := range []struct {
		x    uint64
		want int64
	}{{0, 0}, {127, 127}, {128, -128}, {255, -1}, {256 + 3, 3}} {
		if got := r.Lift(c.x); got != c.want {
			t.Errorf("Lift_8(%d) = %d, want %d", c.x, got, c.want)
		}
	}
	if got := Ring64.Lift(1 << 63); got != -1<<63 {
		t.Errorf("Lift_64(2^63) = %d", got)
	}
	if r.FromInt(-1) != 255 {
		t.Errorf("FromInt_8(-1) = %d", r.FromInt(-1))
	}
}
