package privacy

import (
	"math"
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
	p := defaultPlan()
	if len(p.groups) != 9 {
		t.Errorf("%d fractional groups, want 9", len(p.groups))
	}
	s := newScratch(p)
	out := make([]float64, len(p.orders))
	for _, c := range []float64{0.6, 2.3, 8.98} {
		p.eval(0.25, c, out, s)
		for i, a := range p.orders {
			if r := RDP(0.25, c, a); math.Abs(r-out[i]) > 1e-13*r {
				t.Errorf("c=%g order %v: plan %v, RDP %v", c, a, out[i], r)
			}
		}
	}
}
