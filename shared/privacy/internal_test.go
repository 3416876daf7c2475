package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLogErfc(t *testing.T) {
	// Where math.Erfc is representable both branches must agree with it.
	for x := -6.0; x <= 26.5; x += 0.01 {
		want := math.Log(math.Erfc(x))
		if got := logErfc(x); math.Abs(got-want) > 1e-13*math.Max(1, math.Abs(want)) {
			t.Fatalf("logErfc(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	// The asymptotic branch at the switch agrees with math.Erfc.
	for _, x := range []float64{25, 25.5, 26, 26.5} {
		if d := logErfc(x) - math.Log(math.Erfc(x)); math.Abs(d) > 1e-13*x*x {
			t.Errorf("switch at %g: diff %g", x, d)
		}
	}
	// Far beyond underflow: log erfc(x) ≈ −x² − log(x√π).
	for _, x := range []float64{30, 100, 1e4} {
		u := 1 / (2 * x * x)
		want := -x*x - math.Log(x*math.SqrtPi) + math.Log1p(-u+3*u*u-15*u*u*u)
		if got := logErfc(x); math.Abs(got-want) > 1e-12*x*x || math.IsInf(got, 0) {
			t.Errorf("logErfc(%g) = %g, want ≈ %g", x, got, want)
		}
	}
}

// The acceleration weights sum alternating moment series to within their
// stated bound: Σ(−1)^k/(k+1) = log 2 and Σ(−1)^k/(2k+1) = π/4.
func TestCRVZ(t *testing.T) {
	for _, tc := range []struct {
		a    func(k int) float64
		want float64
	}{
		{func(k int) float64 { return 1 / float64(k+1) }, math.Ln2},
		{func(k int) float64 { return 1 / float64(2*k+1) }, math.Pi / 4},
		{func(k int) float64 { return math.Pow(0.3, float64(k)) }, 1 / 1.3},
	} {
		for n := 1; n <= tailMax; n++ {
			var s float64
			for k, w := range crvzW[n] {
				s += w * tc.a(k)
			}
			if err := math.Abs(s - tc.want); err > crvzE[n]*tc.a(0)+1e-15 {
				t.Errorf("n=%d: sum %.17g, want %.17g, error %g above bound %g", n, s, tc.want, err, crvzE[n]*tc.a(0))
			}
		}
	}
}

// The fractional plan shares erfc tables per fractional part (the default
// orders need 9) and agrees with RDP evaluated one order at a time (which
// may take the linear or the log path differently, hence 1e-13).
func TestPlanSharing(t *testing.T) {
	p := arguedPlan()
	if len(p.groups) != 9 {
		t.Errorf("%d fractional groups, want 9", len(p.groups))
	}
	s := newScratch(p)
	out := make([]float64, len(p.orders))
	for _, c := range []float64{0.6, 2.3, 8.98} {
		p.eval(0.25, c, out, s)
		for i, a := range p.orders {
			if r := SampledGaussianRDP(0.25, c, a); math.Abs(r-out[i]) > 1e-13*r {
				t.Errorf("c=%g order %v: plan %v, RDP %v", c, a, out[i], r)
			}
		}
	}
	// The proven plan: the same integer orders, fractional ones unbounded
	// at 0 < q < 1 and α/(2c²) at q = 1.
	d := defaultPlan()
	ds := newScratch(d)
	for _, q := range []float64{0.25, 1} {
		d.eval(q, 2.3, out, ds)
		for i, a := range d.orders {
			want := SampledGaussianRDP(q, 2.3, a)
			if q < 1 && a != math.Floor(a) {
				want = math.Inf(1)
			}
			if !(out[i] == want || math.Abs(out[i]-want) <= 1e-13*want) {
				t.Errorf("proven plan q=%g order %v: %v, want %v", q, a, out[i], want)
			}
		}
	}
}

// refNorm is ‖x‖₂ to about 1e-30 relative: x is scaled by a power of two
// (exact) to max|x| ∈ [1, 2), squares are split exactly with FMA and summed
// in double-double arithmetic.
func refNorm(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	if m == 0 {
		return 0
	}
	_, e := math.Frexp(m)
	var hi, lo float64
	for _, v := range x {
		y := math.Ldexp(v, 1-e)
		p := y * y
		pe := math.FMA(y, y, -p)
		s := hi + p
		bv := s - hi
		lo += (hi - (s - bv)) + (p - bv) + pe
		hi = s
	}
	r := math.Sqrt(hi + lo)
	return math.Ldexp(r, e-1)
}

// TestL2NormPaths: 400 seeded random vectors (lengths 1–12,000, entry
// scales 1e-200 … 1e200, so both paths are taken). The fast path is within
// 1e-15 of the exact norm; the scaled path is within 1e-14 (its own
// rounding reaches about 4e-15 at these lengths) and the two agree to
// 1.5e-14. L2Norm takes the fast path exactly when the sum of squares lies
// in [2⁻⁵⁰⁰, 2⁵⁰⁰].
func TestL2NormPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	fast, slow := 0, 0
	worst := 0.0
	for it := range 400 {
		n := 1 + r.IntN(12000)
		if it%2 == 0 {
			n = 1 + r.IntN(40)
		}
		sc := math.Pow(10, -200+400*r.Float64())
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64() * sc
			if r.IntN(50) == 0 {
				x[i] = 0
			}
		}
		want := refNorm(x)
		got := L2Norm(x)
		scaled := l2NormScaled(x)
		if s := sumSquares(x); s >= 0x1p-500 && s <= 0x1p500 {
			fast++
			rel := math.Abs(got-want) / want
			worst = max(worst, rel)
			if !(rel <= 1e-15) {
				t.Errorf("n=%d scale %g: fast path %.17g, exact %.17g (rel %.3g)", n, sc, got, want, rel)
			}
			if !(math.Abs(got-scaled) <= 1.5e-14*want) {
				t.Errorf("n=%d scale %g: fast %.17g, scaled %.17g", n, sc, got, scaled)
			}
		} else {
			slow++
			if got != scaled {
				t.Errorf("n=%d scale %g: L2Norm %g did not fall back to the scaled path %g", n, sc, got, scaled)
			}
		}
		if want > 0 && !(math.Abs(scaled-want) <= 1e-14*want) {
			t.Errorf("n=%d scale %g: scaled path %.17g, exact %.17g", n, sc, scaled, want)
		}
	}
	if fast < 100 || slow < 100 {
		t.Errorf("paths taken: fast %d, scaled %d; want ≥ 100 each", fast, slow)
	}
	t.Logf("fast path %d, scaled path %d; fast path's largest relative error %.3g", fast, slow, worst)
}

// Around the switching sums 2^±500, in the underflow and overflow ranges of
// the squares, with zeros, NaN and ±Inf: L2Norm matches the exact norm and
// the old semantics.
func TestL2NormFallback(t *testing.T) {
	for _, tc := range []struct {
		x   []float64
		tol float64
	}{
		{[]float64{0x1p-250, 0x1p-250}, 4e-16},            // sum 2^-499: fast
		{[]float64{0x1p-251, 0x1p-251}, 4e-16},            // sum 2^-501: scaled
		{[]float64{0x1p250, 0x1p249}, 4e-16},              // sum just above 2^500: scaled
		{[]float64{0x1p249, 0x1p249, 0x1p249, 0}, 4e-16},  // sum 3·2^498: fast
		{[]float64{1e-160, -2e-160, 3e-161}, 4e-16},       // squares underflow
		{[]float64{1e-170, 0, 0, 0, 0, 0, 1e-300}, 4e-16}, // squares subnormal or zero
		{[]float64{1e160, 2e160, -1e155}, 4e-16},          // squares overflow
		{[]float64{3e-320, 4e-320}, 1e-3},                 // subnormal entries
		{[]float64{math.MaxFloat64 / 4, math.MaxFloat64 / 4}, 4e-16},
		{[]float64{0, 0, 0}, 0},
	} {
		got, want := L2Norm(tc.x), refNorm(tc.x)
		if !(math.Abs(got-want) <= tc.tol*want) {
			t.Errorf("L2Norm(%g) = %.17g, exact %.17g", tc.x, got, want)
		}
	}
	if got := L2Norm([]float64{math.MaxFloat64, math.MaxFloat64}); !math.IsInf(got, 1) {
		t.Errorf("overflowing norm %g, want +Inf", got)
	}
	for _, x := range [][]float64{{1, math.NaN()}, {math.Inf(1), math.NaN()}, {math.NaN(), 1e300, 1e300}} {
		if got := L2Norm(x); !math.IsNaN(got) && !(math.IsInf(got, 1) && math.IsInf(x[0], 0)) {
			t.Errorf("L2Norm(%v) = %g", x, got)
		}
	}
	for _, x := range [][]float64{{1, math.Inf(-1)}, {math.Inf(1), 0}, {1e300, 1e300, math.Inf(1)}} {
		if got := L2Norm(x); !math.IsInf(got, 1) {
			t.Errorf("L2Norm(%v) = %g, want +Inf", x, got)
		}
	}
}
