package privacy_test

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// z1e6OneSided is the one-sided standard normal quantile for 1e-6.
const z1e6OneSided = 4.753424308823

// dgMoments returns the exact pmf of N_ℤ(0, σ²) on [−r, r] (mass outside
// below 1e-30 for r = ⌈12σ⌉+12) with its variance and fourth moment.
func dgMoments(sigma2 float64) (pmf []float64, r int, variance, m4 float64) {
	r = int(math.Ceil(12*math.Sqrt(sigma2))) + 12
	pmf = make([]float64, 2*r+1)
	var z float64
	for x := -r; x <= r; x++ {
		p := math.Exp(-float64(x) * float64(x) / (2 * sigma2))
		pmf[x+r] = p
		z += p
	}
	for x := -r; x <= r; x++ {
		pmf[x+r] /= z
		f := float64(x) * float64(x)
		variance += f * pmf[x+r]
		m4 += f * f * pmf[x+r]
	}
	return pmf, r, variance, m4
}

// TestDiscreteGaussianDistribution draws n = 200,000 samples of N_ℤ(0, σ²)
// from a crypto-seeded stream for small, medium and the paper's lattice σ²,
// and checks against the exact pmf: the mean (z-test), the variance
// (z-test with the exact fourth moment), and a chi-square goodness of fit
// on bins of expected count ≥ 1,000 (tails merged), each at a
// false-rejection rate of 1e-6 (Wilson–Hilferty for the χ² quantile).
func TestDiscreteGaussianDistribution(t *testing.T) {
	lat, err := privacy.NewLattice(0.5, 4.8828125)
	if err != nil {
		t.Fatal(err)
	}
	for _, s2 := range []uint64{1, 2, 7, 1000, lat.Sigma2} {
		g, err := privacy.NewDiscreteGaussian(s2)
		if err != nil {
			t.Fatal(err)
		}
		const n = 200_000
		rng := privacy.NewSecureRand()
		xs := make([]int64, n)
		g.AddTo(xs, rng)
		pmf, r, variance, m4 := dgMoments(float64(s2))
		var sum, ss float64
		for _, x := range xs {
			sum += float64(x)
			ss += float64(x) * float64(x)
		}
		mean := sum / n
		if tol := z1e6 * math.Sqrt(variance/n); math.Abs(mean) > tol {
			t.Errorf("σ²=%d: mean %v, want 0 ± %v", s2, mean, tol)
		}
		if v, tol := ss/n, z1e6*math.Sqrt((m4-variance*variance)/n); math.Abs(v-variance) > tol {
			t.Errorf("σ²=%d: E[X²] %v, want %v ± %v", s2, v, variance, tol)
		}
		// Bins of consecutive integers, each with expected count ≥ 1000.
		var edges []int // bin k holds [edges[k], edges[k+1])
		var mass []float64
		acc := 0.0
		edges = append(edges, -r)
		for x := -r; x <= r; x++ {
			acc += pmf[x+r]
			if acc*n >= 1000 && x < r {
				edges = append(edges, x+1)
				mass = append(mass, acc)
				acc = 0
			}
		}
		mass[len(mass)-1] += acc // the upper tail joins the last bin
		edges[len(edges)-1] = r + 1
		counts := make([]float64, len(mass))
		for _, x := range xs {
			// binary search for the bin
			lo, hi := 0, len(mass)-1
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if int(x) >= edges[mid] {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			counts[lo]++
		}
		var chi2 float64
		for k, p := range mass {
			e := p * n
			chi2 += (counts[k] - e) * (counts[k] - e) / e
		}
		df := float64(len(mass) - 1)
		if df < 1 {
			t.Fatalf("σ²=%d: only %d bins", s2, len(mass))
		}
		if crit := chi2Quantile(df, z1e6OneSided); chi2 > crit {
			t.Errorf("σ²=%d: χ² = %.1f on %v degrees of freedom > %.1f (false-rejection 1e-6)", s2, chi2, df, crit)
		}
	}
}

// TestDiscreteGaussianSeeded: research mode draws the same noise from the
// same seed, and different noise from another.
func TestDiscreteGaussianSeeded(t *testing.T) {
	g, _ := privacy.NewDiscreteGaussian(1 << 28)
	a, b, c := make([]int64, 100), make([]int64, 100), make([]int64, 100)
	g.AddTo(a, rand.New(rand.NewPCG(1, 2)))
	g.AddTo(b, rand.New(rand.NewPCG(1, 2)))
	g.AddTo(c, rand.New(rand.NewPCG(1, 3)))
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different noise at %d: %d vs %d", i, a[i], b[i])
		}
	}
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same > 5 {
		t.Errorf("different seeds agree on %d of 100 draws", same)
	}
}

func TestNewDiscreteGaussianRange(t *testing.T) {
	for _, s2 := range []uint64{0, privacy.MaxDiscreteSigma2 + 1, math.MaxUint64} {
		if _, err := privacy.NewDiscreteGaussian(s2); err == nil {
			t.Errorf("NewDiscreteGaussian(%d) accepted", s2)
		}
	}
	for _, s2 := range []uint64{1, privacy.MaxDiscreteSigma2} {
		g, err := privacy.NewDiscreteGaussian(s2)
		if err != nil || g.Sigma2() != s2 {
			t.Errorf("NewDiscreteGaussian(%d) = %v, %v", s2, g, err)
		}
	}
	// The largest σ² samples without overflow panics, including far tails
	// of the proposal (exercised by many draws).
	g, _ := privacy.NewDiscreteGaussian(privacy.MaxDiscreteSigma2)
	x := make([]int64, 20000)
	g.AddTo(x, rand.New(rand.NewPCG(5, 5)))
}

// TestNewLattice checks the lattice rule on a table of (S, c): γ a power of
// two with σ/γ ∈ [2¹⁴, 2¹⁵), Sigma2 = ⌈(cS/γ)²⌉ and NormBound2 = ⌊(S/γ)²⌋
// exactly (checked with math/big rationals), and the refusals.
func TestNewLattice(t *testing.T) {
	for _, c := range []struct{ s, c float64 }{
		{0.5, 4.8828125}, {0.5, 9.03}, {0.5, 0.7}, {0.5, 1.0 / 1024}, {0.5, 8192}, {1e-3, 2.5}, {1e6, 1.1}, {0.1, 1},
	} {
		l, err := privacy.NewLattice(c.s, c.c)
		if err != nil {
			t.Errorf("NewLattice(%v, %v): %v", c.s, c.c, err)
			continue
		}
		if f, e := math.Frexp(l.Gamma); f != 0.5 {
			t.Errorf("γ = %v (frac %v, exp %d) is not a power of two", l.Gamma, f, e)
		}
		ratio := new(big.Rat).Quo(new(big.Rat).Mul(rat(c.c), rat(c.s)), rat(l.Gamma))
		r2 := new(big.Rat).Mul(ratio, ratio)
		if ratio.Cmp(new(big.Rat).SetInt64(1<<14)) < 0 || ratio.Cmp(new(big.Rat).SetInt64(1<<15)) >= 0 {
			t.Errorf("(%v, %v): σ/γ = %s not in [2¹⁴, 2¹⁵)", c.s, c.c, ratio.FloatString(3))
		}
		if s := new(big.Rat).SetInt(new(big.Int).SetUint64(l.Sigma2)); s.Cmp(r2) < 0 || new(big.Rat).Sub(s, big.NewRat(1, 1)).Cmp(r2) >= 0 {
			t.Errorf("(%v, %v): Sigma2 %d is not ⌈(cS/γ)²⌉ = ⌈%s⌉", c.s, c.c, l.Sigma2, r2.FloatString(3))
		}
		b := new(big.Rat).Quo(rat(c.s), rat(l.Gamma))
		b2 := new(big.Rat).Mul(b, b)
		if nb := new(big.Rat).SetInt(new(big.Int).SetUint64(l.NormBound2)); nb.Cmp(b2) > 0 || new(big.Rat).Add(nb, big.NewRat(1, 1)).Cmp(b2) <= 0 {
			t.Errorf("(%v, %v): NormBound2 %d is not ⌊(S/γ)²⌋ = ⌊%s⌋", c.s, c.c, l.NormBound2, b2.FloatString(3))
		}
		if hi, _ := bits.Mul64(uint64(l.MaxAdds), uint64(l.MaxCoord)); hi != 0 || l.MaxAdds*l.MaxCoord > 1<<62 || l.MaxAdds < 1<<37 {
			t.Errorf("(%v, %v): MaxAdds %d × MaxCoord %d", c.s, c.c, l.MaxAdds, l.MaxCoord)
		}
	}
	for _, c := range []struct{ s, c float64 }{
		{0.5, 1e-4}, {0.5, 1e4}, {0.5, math.NaN()}, {0, 1}, {math.Inf(1), 1}, {-1, 1}, {1e305, 8000}, {1e-310, 1},
	} {
		if _, err := privacy.NewLattice(c.s, c.c); err == nil {
			t.Errorf("NewLattice(%v, %v) accepted", c.s, c.c)
		}
	}
}

func rat(f float64) *big.Rat { return new(big.Rat).SetFloat64(f) }

// normSq returns ‖z‖² exactly (as a big.Int: no overflow whatever z holds).
func normSq(z []int64) *big.Int {
	s := new(big.Int)
	for _, v := range z {
		x := big.NewInt(v)
		s.Add(s, x.Mul(x, x))
	}
	return s
}

// checkRound asserts the lattice invariants of Round on u.
func checkRound(t *testing.T, l *privacy.Lattice, u []float64) []int64 {
	t.Helper()
	z := make([]int64, len(u))
	l.Round(z, u)
	if n2 := normSq(z); n2.Cmp(new(big.Int).SetUint64(l.NormBound2)) > 0 {
		t.Fatalf("‖z‖² = %s > NormBound2 = %d (dim %d)", n2, l.NormBound2, len(u))
	}
	for i, v := range z {
		if v > l.MaxCoord || v < -l.MaxCoord {
			t.Fatalf("|z[%d]| = %d > MaxCoord %d", i, v, l.MaxCoord)
		}
	}
	return z
}

// TestLatticeRoundBound: rounding never leaves the exact norm bound, for
// random clipped updates, the worst case for rounding (every coordinate
// half a step off the lattice, norm exactly S) and extreme inputs; and it
// does not shrink a clipped update by more than 0.1 %.
func TestLatticeRoundBound(t *testing.T) {
	const S = 0.5
	rng := rand.New(rand.NewPCG(4, 4))
	for _, c := range []float64{4.8828125, 9.03, 0.01, 1.0 / 1024, 8000} {
		l, err := privacy.NewLattice(S, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []int{1, 2, 7, 100, 11777} {
			u := make([]float64, d)
			for i := range u {
				u[i] = rng.NormFloat64()
			}
			privacy.ClipL2(u, S)
			z := checkRound(t, l, u)
			if c < 100 { // S/γ ≥ 160 steps: rounding is a hair
				got := math.Sqrt(float64(normSq(z).Uint64())) * l.Gamma
				if got < privacy.L2Norm(u)*(1-1e-3) {
					t.Errorf("c=%v d=%d: rounded norm %v, update norm %v: shrunk by more than 0.1%%", c, d, got, privacy.L2Norm(u))
				}
			}
			// Worst case: all coordinates at k+½ steps, norm ≈ S.
			k := math.Floor(float64(l.MaxCoord) / math.Sqrt(float64(d)))
			for i := range u {
				u[i] = (k + 0.5) * l.Gamma
			}
			checkRound(t, l, u)
		}
		for _, u := range [][]float64{
			{math.NaN(), 1}, {math.Inf(1), 0}, {1e308, -1e308}, {5e-324, -5e-324}, {S, 0}, {-S}, {0, 0, 0},
		} {
			checkRound(t, l, u)
		}
	}
}

// FuzzLatticeRound: whatever floats arrive, the rounded vector is within
// the exact norm bound.
func FuzzLatticeRound(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f}, uint8(0))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint8(3))
	lats := make([]*privacy.Lattice, 0, 4)
	for _, c := range []float64{4.8828125, 0.01, 1.0 / 1024, 8000} {
		l, err := privacy.NewLattice(0.5, c)
		if err != nil {
			f.Fatal(err)
		}
		lats = append(lats, l)
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		u := make([]float64, len(b)/8)
		for i := range u {
			u[i] = math.Float64frombits(uint64(b[8*i]) | uint64(b[8*i+1])<<8 | uint64(b[8*i+2])<<16 | uint64(b[8*i+3])<<24 |
				uint64(b[8*i+4])<<32 | uint64(b[8*i+5])<<40 | uint64(b[8*i+6])<<48 | uint64(b[8*i+7])<<56)
		}
		l := lats[int(which)%len(lats)]
		checkRound(t, l, u)
		// And after the server's clipping, as the aggregator does it.
		privacy.ClipL2(u, 0.5)
		checkRound(t, l, u)
	})
}
