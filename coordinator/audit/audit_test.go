package audit

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// binomTail is P[Bin(r, p) ≥ v] by direct summation of exact binomial
// coefficients (small r only).
func binomTail(r, v int, p float64) float64 {
	s := 0.0
	for j := v; j <= r; j++ {
		c := 1.0
		for i := 0; i < j; i++ {
			c = c * float64(r-i) / float64(i+1)
		}
		s += c * math.Pow(p, float64(j)) * math.Pow(1-p, float64(r-j))
	}
	return s
}

func TestPValue(t *testing.T) {
	// δ = 0: exactly the binomial tail.
	for _, c := range []struct {
		r, v int
		eps  float64
	}{{10, 9, 0}, {10, 10, 1}, {40, 30, 0.5}, {40, 0, 2}, {25, 25, 3}} {
		p := 1 / (1 + math.Exp(-c.eps))
		want := binomTail(c.r, c.v, p)
		if got := PValue(100, c.r, c.v, c.eps, 0); math.Abs(got-want) > 1e-12 {
			t.Errorf("PValue(r=%d, v=%d, ε=%v, δ=0) = %v, want %v", c.r, c.v, c.eps, got, want)
		}
	}
	if got, want := PValue(100, 10, 9, 0, 0), 11.0/1024; math.Abs(got-want) > 1e-15 {
		t.Errorf("10 guesses, 9 right at ε=0: %v, want 11/1024", got)
	}
	// The δ term: β + 2Kδ·max_i P[v−i ≤ Bin < v]/i, by brute force.
	K, r, v, eps, delta := 1000, 30, 24, 0.8, 1e-4
	p := 1 / (1 + math.Exp(-eps))
	alpha := 0.0
	for i := 1; i <= v; i++ {
		alpha = max(alpha, (binomTail(r, v-i, p)-binomTail(r, v, p))/float64(i))
	}
	if got, want := PValue(K, r, v, eps, delta), binomTail(r, v, p)+2*float64(K)*delta*alpha; math.Abs(got-want) > 1e-12 {
		t.Errorf("PValue with δ: %v, want %v", got, want)
	}
	// Increasing in ε.
	prev := 0.0
	for e := 0.0; e < 6; e += 0.25 {
		pv := PValue(5000, 200, 150, e, 1e-5)
		if pv < prev-1e-12 {
			t.Errorf("PValue decreases at ε=%v: %v < %v", e, pv, prev)
		}
		prev = pv
	}
}

func TestEpsilonLowerBound(t *testing.T) {
	// All r guesses right, δ = 0: the bound solves p^r = level, p = e^ε/(1+e^ε).
	for _, r := range []int{10, 100, 500} {
		p := math.Pow(0.05, 1/float64(r))
		want := math.Log(p / (1 - p))
		if got := EpsilonLowerBound(1000, r, r, 0, 0.05); math.Abs(got-want) > 1e-5 {
			t.Errorf("r=%d all right: ε ≥ %v, want %v", r, got, want)
		}
	}
	// Half right is no evidence at all.
	if got := EpsilonLowerBound(1000, 100, 50, 1e-5, 0.05); got != 0 {
		t.Errorf("50 of 100 right: ε ≥ %v, want 0", got)
	}
}

func TestFWHT(t *testing.T) {
	x := []float64{1, -2, 3.5, 0, 0.25, 7, -1, 2, 0, 0, 1, 1, -3, 2, 5, -0.5}
	want := make([]float64, len(x))
	for r := range want {
		for j, v := range x {
			s := 1.0
			for b := r & j; b != 0; b &= b - 1 {
				s = -s
			}
			want[r] += s * v
		}
	}
	fwht(x)
	for i := range x {
		if math.Abs(x[i]-want[i]) > 1e-12 {
			t.Fatalf("fwht[%d] = %v, want %v", i, x[i], want[i])
		}
	}
}

// TestAuditSmall runs the real round engine with K = 1,000 canaries among
// N = 4,000 (q = 0.25, T = 75, d = 1,024) at ε = 2 with fixed seeds, so
// the outcome is reproducible: the honest mechanism's lower bound is below
// the accountant's ε (two seeds), and with the noise cut to a quarter
// (testing only) the audit catches the broken mechanism: its lower bound
// is above the claimed ε.
func TestAuditSmall(t *testing.T) {
	run := func(seed uint64, scale float64) *Result {
		t.Helper()
		res, err := Run(context.Background(), Options{Epsilon: 2, Clients: 4000, Canaries: 1000, Seed: &seed, NoiseScale: scale})
		if err != nil {
			t.Fatal(err)
		}
		if res.Canaries != 1000 || res.Confidence != 0.95 || res.Delta != 1e-5 || res.NoiseScale != scale {
			t.Errorf("echoed options wrong: %+v", res)
		}
		if res.Epsilon > 2 || res.Epsilon < 1.999 {
			t.Errorf("accountant's ε %v, want just below the target 2", res.Epsilon)
		}
		return res
	}
	for _, seed := range []uint64{1, 2} {
		res := run(seed, 1)
		t.Logf("seed %d: ε_lower = %.3f (%d of %d guesses right)", seed, res.EpsilonLower, res.Correct, res.Guesses)
		if res.EpsilonLower > res.Epsilon || res.EpsilonLower <= 0 {
			t.Errorf("seed %d: ε_lower = %v, want in (0, ε = %v]", seed, res.EpsilonLower, res.Epsilon)
		}
		if strings.Contains(res.Method, "TESTING") {
			t.Errorf("honest run labelled as testing: %s", res.Method)
		}
	}
	res := run(1, 0.25)
	t.Logf("noise ×0.25: ε_lower = %.3f (%d of %d guesses right)", res.EpsilonLower, res.Correct, res.Guesses)
	if res.EpsilonLower <= res.Epsilon {
		t.Errorf("noise ×0.25: ε_lower = %v, not above the claimed ε = %v: the audit missed a broken mechanism", res.EpsilonLower, res.Epsilon)
	}
	if !strings.HasPrefix(res.Method, "TESTING ONLY") {
		t.Errorf("broken run not labelled: %s", res.Method)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, o := range []Options{
		{},
		{Epsilon: math.Inf(1)},
		{Epsilon: -1},
		{Epsilon: 2, Delta: 1},
		{Epsilon: 2, Clients: 100, Canaries: 200},
		{Epsilon: 2, Clients: 100, Expected: 101, Canaries: 50},
		{Epsilon: 2, Canaries: 5},
		{Epsilon: 2, NoiseScale: -1},
		{Epsilon: 2, NoiseScale: math.NaN()},
		{Epsilon: 2, Canaries: 1000, Dim: 1000},
		{Epsilon: 2, Canaries: 1000, Dim: 512},
		{Epsilon: 2, Rounds: -3},
	} {
		if _, err := Run(context.Background(), o); !errors.Is(err, ErrOptions) {
			t.Errorf("Run(%+v) = %v, want ErrOptions", o, err)
		}
	}
}

// δ must be below 1/N, as in a study file: δ·N ≥ 1 is refused with a
// message naming both and the bound; δ just below it is accepted.
func TestOptionsDeltaBelowOneOverN(t *testing.T) {
	for _, o := range []Options{
		{Epsilon: 2, Delta: 0.5, Clients: 10},
		{Epsilon: 2, Delta: 0.1, Clients: 10, Canaries: 10},
		{Epsilon: 2, Delta: 1e-4, Clients: 20000},
	} {
		_, err := Run(context.Background(), o)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "must be below 1/N") || !strings.Contains(err.Error(), "delta") {
			t.Errorf("Run(δ=%g, N=%d) = %v, want the δ < 1/N refusal", o.Delta, o.Clients, err)
		}
	}
	seed := uint64(1)
	o := Options{Epsilon: 2, Delta: 0.099, Clients: 10, Canaries: 10, Rounds: 2, Seed: &seed}
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("δ = 0.099 < 1/10: %v", err)
	}
}
