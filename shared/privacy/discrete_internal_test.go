package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// zInternal is the two-sided standard normal quantile for a
// false-rejection rate of 1e-6 per check.
const zInternal = 4.891638475699

// TestBernoulliExp checks the exact Bernoulli(exp(−x)) samplers against
// exp(−x) with n = 200,000 draws per case, a normal-approximation test at
// false-rejection rate 1e-6 each (8 cases). The cases cover x = 0, x ≤ 1,
// x > 1 (integer part by Bernoulli(e⁻¹) trials), a denominator near 2⁶²,
// and bernoulliRatio's product path (d·k above 64 bits).
func TestBernoulliExp(t *testing.T) {
	rng := &bitRand{r: rand.New(rand.NewPCG(7, 7))}
	const n = 200_000
	cases := []struct {
		name string
		q, r uint64
		d    uint64
	}{
		{"x=0", 0, 0, 1},
		{"x=1/3", 0, 1, 3},
		{"x=5/7", 0, 5, 7},
		{"x=1", 1, 0, 1},
		{"x=2+1/3", 2, 1, 3},
		{"x=(2^61-1)/2^61", 0, 1<<61 - 1, 1 << 61},
		{"x=0.4, huge d", 0, 2 * (1 << 60) / 5, 1 << 60},
	}
	for _, c := range cases {
		hits := 0
		for i := 0; i < n; i++ {
			if bernoulliExp(rng, c.q, c.r, c.d) {
				hits++
			}
		}
		p := math.Exp(-(float64(c.q) + float64(c.r)/float64(c.d)))
		if tol := zInternal * math.Sqrt(p*(1-p)/n); math.Abs(float64(hits)/n-p) > tol+1e-12 {
			t.Errorf("%s: frequency %v, want exp(−x) = %v ± %v", c.name, float64(hits)/n, p, tol)
		}
	}
	// Product path: d·k overflows 64 bits, P = n/(d·k) = 3/8.
	hits := 0
	for i := 0; i < n; i++ {
		if bernoulliRatio(rng, 3<<60, 1<<62, 2) {
			hits++
		}
	}
	if p, tol := 3.0/8, zInternal*math.Sqrt(3.0/8*5/8/n); math.Abs(float64(hits)/n-p) > tol {
		t.Errorf("bernoulliRatio product path: frequency %v, want %v ± %v", float64(hits)/n, p, tol)
	}
}

func TestIsqrt(t *testing.T) {
	for _, x := range []uint64{0, 1, 2, 3, 4, 15, 16, 17, 1 << 30, 1<<30 + 1, 1<<62 - 1, 1 << 62, math.MaxUint64} {
		r := isqrt(x)
		if hi, lo := mul(r, r); hi != 0 || lo > x {
			t.Errorf("isqrt(%d) = %d: square above x", x, r)
		}
		if hi, lo := mul(r+1, r+1); hi == 0 && lo <= x {
			t.Errorf("isqrt(%d) = %d: (r+1)² ≤ x", x, r)
		}
	}
	rng := rand.New(rand.NewPCG(1, 9))
	for i := 0; i < 10000; i++ {
		x := rng.Uint64() >> rng.UintN(64)
		r := isqrt(x)
		if hi, lo := mul(r, r); hi != 0 || lo > x {
			t.Fatalf("isqrt(%d) = %d too large", x, r)
		}
		if hi, lo := mul(r+1, r+1); hi == 0 && lo <= x {
			t.Fatalf("isqrt(%d) = %d too small", x, r)
		}
	}
}

func mul(a, b uint64) (hi, lo uint64) {
	// (r+1)² for r = 2³²−1 overflows: report it via hi.
	if a != 0 && b > math.MaxUint64/a {
		return 1, 0
	}
	return 0, a * b
}
