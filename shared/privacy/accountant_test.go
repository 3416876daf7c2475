package privacy_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// The paper's setting (q = 0.25, T = 75, δ = 1e-5) and the noise multipliers
// its accountant produced. Both bounds matter: an ε below the lower bound
// would be a privacy bug, above the upper a loss of utility. With integer
// orders only (the proven bound) c = 4.8828125 gives 1.990715 at order 10
// (fractional orders argued 1.990551 at order 9.9).
func TestEpsilonPaper(t *testing.T) {
	for _, tc := range []struct {
		c        float64
		lo, hi   float64
		minOrder float64
	}{
		{4.8828125, 1.9906, 1.9908, 1},
		{8.984375, 0.9955, 0.9964, 1},
	} {
		eps, order := privacy.Epsilon(0.25, tc.c, 75, 1e-5)
		if !(eps >= tc.lo && eps <= tc.hi) {
			t.Errorf("Epsilon(0.25, %g, 75, 1e-5) = %.6f, want in [%g, %g]", tc.c, eps, tc.lo, tc.hi)
		}
		t.Logf("c = %g: ε = %.6f at order %.4g", tc.c, eps, order)
	}
}

func TestNoiseMultiplierPaper(t *testing.T) {
	for _, tc := range []struct{ eps, paper float64 }{{1, 8.98}, {2, 4.88}, {5, 2.30}} {
		c, err := privacy.NoiseMultiplier(tc.eps, 1e-5, 0.25, 75)
		if err != nil {
			t.Fatal(err)
		}
		// Ours is at most 0.5% above the paper's (rounded) value and at most
		// 1% below it (finer search, more orders).
		if !(c >= tc.paper*0.99 && c <= tc.paper*1.005) {
			t.Errorf("NoiseMultiplier(ε=%g) = %.6f, paper ≈ %g", tc.eps, c, tc.paper)
		}
		if e, _ := privacy.Epsilon(0.25, c, 75, 1e-5); !(e <= tc.eps) {
			t.Errorf("ε(c=%.9g) = %.9g exceeds target %g: not on the safe side", c, e, tc.eps)
		}
		// Minimal to 1e-6 relative: a slightly smaller c misses the target.
		if e, _ := privacy.Epsilon(0.25, c*(1-1e-6), 75, 1e-5); !(e > tc.eps) {
			t.Errorf("ε(c·(1−1e-6)) = %.9g still ≤ %g: c=%.9g not minimal", e, tc.eps, c)
		}
		t.Logf("ε = %g: c = %.6f (paper %g)", tc.eps, c, tc.paper)
	}
}

func TestNoiseMultiplierGrid(t *testing.T) {
	for _, eps := range []float64{0.2, 0.3, 0.5, 0.75, 1.5, 3, 10} {
		for _, q := range []float64{0.01, 0.25, 1} {
			for _, T := range []int{1, 75, 1000} {
				c, err := privacy.NoiseMultiplier(eps, 1e-5, q, T)
				if err != nil {
					t.Fatalf("ε=%g q=%g T=%d: %v", eps, q, T, err)
				}
				if e, _ := privacy.Epsilon(q, c, T, 1e-5); !(e <= eps) {
					t.Errorf("ε=%g q=%g T=%d: c=%g gives %g", eps, q, T, c, e)
				}
				if e, _ := privacy.Epsilon(q, c*(1-1e-6), T, 1e-5); !(e > eps) && c > 1.001e-3 {
					t.Errorf("ε=%g q=%g T=%d: c=%g not minimal (c(1−1e-6) gives %g)", eps, q, T, c, e)
				}
			}
		}
	}
}

func TestNoiseMultiplierErrors(t *testing.T) {
	for _, tc := range []struct {
		name          string
		eps, delta, q float64
		T             int
		want          error
	}{
		{"unreachable", 1e-3, 1e-5, 0.25, 75, privacy.ErrUnreachable},
		{"eps NaN", math.NaN(), 1e-5, 0.25, 75, privacy.ErrInvalidParameter},
		{"eps 0", 0, 1e-5, 0.25, 75, privacy.ErrInvalidParameter},
		{"eps -Inf", math.Inf(-1), 1e-5, 0.25, 75, privacy.ErrInvalidParameter},
		{"delta 0", 1, 0, 0.25, 75, privacy.ErrInvalidParameter},
		{"delta 1", 1, 1, 0.25, 75, privacy.ErrInvalidParameter},
		{"q 0", 1, 1e-5, 0, 75, privacy.ErrInvalidParameter},
		{"q 1.5", 1, 1e-5, 1.5, 75, privacy.ErrInvalidParameter},
		{"T 0", 1, 1e-5, 0.25, 0, privacy.ErrInvalidParameter},
	} {
		_, err := privacy.NoiseMultiplier(tc.eps, tc.delta, tc.q, tc.T)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if c, err := privacy.NoiseMultiplier(math.Inf(1), 1e-5, 0.25, 75); c != 0 || err != nil {
		t.Errorf("non-DP target: c=%g err=%v, want 0, nil", c, err)
	}
}

func TestEpsilonMonotone(t *testing.T) {
	prev := math.Inf(1)
	for c := 0.5; c <= 30; c *= 1.1 {
		e, _ := privacy.Epsilon(0.25, c, 75, 1e-5)
		if !(e <= prev) {
			t.Errorf("ε not decreasing in c at c=%g: %g after %g", c, e, prev)
		}
		prev = e
	}
	prev = 0
	for q := 0.001; q <= 1; q *= 1.3 {
		e, _ := privacy.Epsilon(q, 3, 75, 1e-5)
		if !(e >= prev) {
			t.Errorf("ε not increasing in q at q=%g: %g after %g", q, e, prev)
		}
		prev = e
	}
	prev = 0
	for _, T := range []int{1, 2, 5, 10, 75, 100, 1000} {
		e, _ := privacy.Epsilon(0.25, 3, T, 1e-5)
		if !(e >= prev) {
			t.Errorf("ε not increasing in T at T=%d: %g after %g", T, e, prev)
		}
		prev = e
	}
}

// Rényi divergence is nondecreasing in the order: this ties the fractional
// series to the integer sums across the whole default grid.
func TestRDPMonotoneInOrder(t *testing.T) {
	orders := privacy.DefaultOrders()
	for _, q := range []float64{1e-4, 0.01, 0.25, 0.5, 0.9, 0.999} {
		for _, c := range []float64{0.3, 0.7, 1, 2.3, 4.88, 8.98, 50} {
			prev := 0.0
			for _, a := range orders {
				r := privacy.SampledGaussianRDP(q, c, a)
				if math.IsInf(r, 1) {
					prev = r
					continue
				}
				if !(r >= prev*(1-1e-9)) {
					t.Errorf("q=%g c=%g: RDP(%v) = %.12g < RDP(previous) = %.12g", q, c, a, r, prev)
				}
				prev = r
			}
		}
	}
}

// Across an integer order the fractional series must join the binomial sum.
func TestRDPContinuityAtIntegers(t *testing.T) {
	for _, n := range []float64{2, 3, 7, 10} {
		for _, tc := range []struct{ q, c float64 }{{0.25, 2.3}, {0.5, 0.5}, {0.01, 4}, {0.9, 1}} {
			mid := privacy.SampledGaussianRDP(tc.q, tc.c, n)
			lo, hi := privacy.SampledGaussianRDP(tc.q, tc.c, n-1e-7), privacy.SampledGaussianRDP(tc.q, tc.c, n+1e-7)
			if !(lo <= mid*(1+1e-9) && mid <= hi*(1+1e-9)) || math.Abs(hi-lo) > 1e-5*mid {
				t.Errorf("q=%g c=%g around α=%g: %.12g %.12g %.12g", tc.q, tc.c, n, lo, mid, hi)
			}
		}
	}
}

func TestRDPSpecialCases(t *testing.T) {
	for _, a := range []float64{1.5, 2, 10.9, 64, 1024} {
		for _, c := range []float64{0.1, 1, 7} {
			if got, want := privacy.SampledGaussianRDP(1, c, a), a/(2*c*c); math.Abs(got-want) > 1e-15*want {
				t.Errorf("RDP(1, %g, %g) = %g, want α/(2c²) = %g", c, a, got, want)
			}
			// q → 1 approaches the closed form.
			if got, want := privacy.SampledGaussianRDP(1-1e-9, c, a), a/(2*c*c); math.Abs(got-want) > 1e-6*want {
				t.Errorf("RDP(1−1e-9, %g, %g) = %g, want ≈ %g", c, a, got, want)
			}
		}
		if got := privacy.SampledGaussianRDP(0, 1, a); got != 0 {
			t.Errorf("RDP(q=0) = %g", got)
		}
		if got := privacy.SampledGaussianRDP(0.1, 0, a); !math.IsInf(got, 1) {
			t.Errorf("RDP(c=0) = %g, want +Inf", got)
		}
		if got := privacy.SampledGaussianRDP(0.1, 1e-200, a); !math.IsInf(got, 1) {
			t.Errorf("RDP(c=1e-200) = %g, want +Inf", got)
		}
	}
	for _, tc := range [][3]float64{
		{math.NaN(), 1, 2}, {0.1, math.NaN(), 2}, {0.1, 1, math.NaN()},
		{-0.1, 1, 2}, {1.1, 1, 2}, {0.1, -1, 2}, {0.1, 1, 1}, {0.1, 1, 0.5}, {0.1, 1, math.Inf(1)},
	} {
		if got := privacy.SampledGaussianRDP(tc[0], tc[1], tc[2]); !math.IsNaN(got) {
			t.Errorf("RDP(%v) = %g, want NaN", tc, got)
		}
	}
	// Extreme but valid parameters give a finite, nonnegative value.
	for _, tc := range [][3]float64{{1e-12, 1, 3.5}, {0.5, 0.05, 2.5}, {1e-6, 1e5, 1.1}, {0.999999, 0.2, 10.9}} {
		if got := privacy.SampledGaussianRDP(tc[0], tc[1], tc[2]); !(got >= 0) || math.IsNaN(got) {
			t.Errorf("RDP(%v) = %g", tc, got)
		}
	}
}

func TestEpsilonEdgeCases(t *testing.T) {
	if e, o := privacy.Epsilon(0.25, 1, 75, 0); !math.IsInf(e, 1) || !math.IsNaN(o) {
		t.Errorf("δ=0: (%g, %g), want (+Inf, NaN)", e, o)
	}
	for _, d := range []float64{1, 2, -1e-5, math.NaN()} {
		if e, _ := privacy.Epsilon(0.25, 1, 75, d); !math.IsNaN(e) {
			t.Errorf("δ=%g: ε=%g, want NaN", d, e)
		}
	}
	if e, _ := privacy.Epsilon(0.25, 0, 75, 1e-5); !math.IsInf(e, 1) {
		t.Errorf("c=0: ε=%g, want +Inf", e)
	}
	if e, _ := privacy.Epsilon(0, 1, 75, 1e-5); e != 0 {
		t.Errorf("q=0: ε=%g, want 0", e)
	}
	if e, _ := privacy.Epsilon(0.25, 1, 0, 1e-5); e != 0 {
		t.Errorf("T=0: ε=%g, want 0 (clamped)", e)
	}
	for _, tc := range [][2]float64{{math.NaN(), 1}, {0.25, math.NaN()}, {-1, 1}, {0.25, -1}} {
		if e, _ := privacy.Epsilon(tc[0], tc[1], 75, 1e-5); !math.IsNaN(e) {
			t.Errorf("Epsilon(%v) = %g, want NaN", tc, e)
		}
	}
	// q = 1: the plain Gaussian mechanism; compare with the conversion
	// applied to the closed form at the best default order.
	c, T, delta := 20.0, 10, 1e-5
	want := math.Inf(1)
	for _, a := range privacy.DefaultOrders() {
		want = math.Min(want, float64(T)*a/(2*c*c)+math.Log((a-1)/a)-(math.Log(delta)+math.Log(a))/(a-1))
	}
	if got, _ := privacy.Epsilon(1, c, T, delta); math.Abs(got-want) > 1e-12 {
		t.Errorf("q=1: ε = %.15g, closed form %.15g", got, want)
	}
}

func TestComposeHeterogeneous(t *testing.T) {
	a := privacy.NewRDP(nil)
	a.Compose(0.25, 4, 30)
	a.Compose(0.25, 4, 45)
	b := privacy.NewRDP(nil)
	b.Compose(0.25, 4, 75)
	ea, oa := a.Epsilon(1e-5)
	eb, ob := b.Epsilon(1e-5)
	if math.Abs(ea-eb) > 1e-12*eb || oa != ob {
		t.Errorf("30+45 rounds: (%g, %g), 75 rounds: (%g, %g)", ea, oa, eb, ob)
	}
	e, _ := privacy.Epsilon(0.25, 4, 75, 1e-5)
	if math.Abs(e-eb) > 1e-12*e {
		t.Errorf("package Epsilon %g vs accountant %g", e, eb)
	}
	// Mixed (q, c): RDP adds order by order.
	m := privacy.NewRDP([]float64{1.5, 2, 8, 32.5})
	m.Compose(0.1, 2, 3)
	m.Compose(0.5, 6, 2)
	m.Compose(0, 1, 100) // nothing released about anyone
	m.Compose(0.3, 1, 0) // zero steps
	m.Compose(1, 3, 2)   // unsampled rounds: every order proven
	for i, o := range m.Orders() {
		want := 3*privacy.SampledGaussianRDP(0.1, 2, o) + 2*privacy.SampledGaussianRDP(0.5, 6, o) + 2*privacy.SampledGaussianRDP(1, 3, o)
		if o != math.Floor(o) {
			// Fractional orders of subsampled releases are not proven:
			// the accountant keeps them unbounded (skipped by Epsilon).
			want = math.Inf(1)
		}
		if got := m.Curve()[i]; !(math.Abs(got-want) <= 1e-13*want || got == want) {
			t.Errorf("order %g: RDP %g, want %g", o, got, want)
		}
	}
	// A c = 0 round makes every order infinite: ε = +Inf.
	m.Compose(0.1, 0, 1)
	if e, o := m.Epsilon(1e-5); !math.IsInf(e, 1) || !math.IsNaN(o) {
		t.Errorf("after c=0: (%g, %g)", e, o)
	}
}

func TestComposePanics(t *testing.T) {
	for _, tc := range []struct {
		q, c  float64
		steps int
	}{{math.NaN(), 1, 1}, {1.5, 1, 1}, {-0.1, 1, 1}, {0.1, math.NaN(), 1}, {0.1, -1, 1}, {0.1, 1, -1}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "privacy: ") {
					t.Errorf("Compose(%v, %v, %d): panic %v", tc.q, tc.c, tc.steps, r)
				}
			}()
			privacy.NewRDP(nil).Compose(tc.q, tc.c, tc.steps)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("NewRDP with order 1 did not panic")
		}
	}()
	privacy.NewRDP([]float64{1, 2})
}

func TestAccountantJSONRoundTrip(t *testing.T) {
	for _, orders := range [][]float64{nil, {1.25, 2, 7.5, 100}} {
		a := privacy.NewRDP(orders)
		a.Compose(0.25, 4.8828125, 40)
		a.Compose(0.1, 1.3, 7)
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var back privacy.RDP
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		ra, rb := a.Curve(), back.Curve()
		for i := range ra {
			if ra[i] != rb[i] || a.Orders()[i] != back.Orders()[i] {
				t.Fatalf("round trip changed order %d: %v/%v → %v/%v", i, a.Orders()[i], ra[i], back.Orders()[i], rb[i])
			}
		}
		// The restored accountant keeps composing.
		a.Compose(0.25, 3, 5)
		back.Compose(0.25, 3, 5)
		ea, _ := a.Epsilon(1e-5)
		eb, _ := back.Epsilon(1e-5)
		if ea != eb {
			t.Errorf("after restore: %g vs %g", ea, eb)
		}
	}
	// +Inf survives the round trip.
	a := privacy.NewRDP([]float64{2, 3})
	a.Compose(0.5, 0, 1)
	b, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(b), `"+Inf"`) {
		t.Fatalf("marshal +Inf: %s, %v", b, err)
	}
	var back privacy.RDP
	if err := json.Unmarshal(b, &back); err != nil || !math.IsInf(back.Curve()[0], 1) {
		t.Fatalf("unmarshal +Inf: %v %v", back.Curve(), err)
	}
	for _, bad := range []string{
		`{"orders":[2,3],"rdp":[1]}`,
		`{"orders":[],"rdp":[]}`,
		`{"orders":[1,3],"rdp":[1,2]}`,
		`{"orders":[2,3],"rdp":[-1,2]}`,
		`{"orders":[2,3],"rdp":["-Inf",2]}`,
		`{"orders":[2,3],"rdp":["x",2]}`,
		`[1,2]`,
	} {
		var a privacy.RDP
		if err := json.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		} else if !strings.HasPrefix(err.Error(), "privacy: ") {
			t.Errorf("Unmarshal(%s): error %q lacks prefix", bad, err)
		}
	}
}

func TestClone(t *testing.T) {
	a := privacy.NewRDP(nil)
	a.Compose(0.25, 4, 10)
	b := a.Clone()
	b.Compose(0.25, 4, 10)
	ea, _ := a.Epsilon(1e-5)
	eb, _ := b.Epsilon(1e-5)
	if !(eb > ea) {
		t.Errorf("clone not independent: %g vs %g", ea, eb)
	}
	if e, _ := privacy.Epsilon(0.25, 4, 10, 1e-5); e != ea {
		t.Errorf("original changed: %g vs %g", ea, e)
	}
}

func TestDefaultOrders(t *testing.T) {
	o := privacy.DefaultOrders()
	if len(o) != 99-9+53+5+9 {
		t.Fatalf("%d orders", len(o))
	}
	for i := 1; i < len(o); i++ {
		if !(o[i] > o[i-1]) {
			t.Fatalf("orders not increasing at %d: %v, %v", i, o[i-1], o[i])
		}
	}
	for i := 11; i <= 109; i++ {
		want := float64(i) / 10
		if d := math.Abs(o[i-11] - want); d > 2e-15 {
			t.Errorf("order %d = %.17g, want ≈ %g", i-11, o[i-11], want)
		}
	}
	for _, want := range []float64{11, 40, 63, 64, 128, 256, 512, 1024} {
		found := false
		for _, v := range o {
			found = found || v == want
		}
		if !found {
			t.Errorf("order %g missing", want)
		}
	}
	o[0] = 99 // the caller's copy
	if privacy.DefaultOrders()[0] == 99 {
		t.Error("DefaultOrders shares its slice")
	}
}

// TestEpsilonGolden compares ArguedEpsilon (fractional orders included) with
// ε values of the implementation before the speed-up
// (testdata/epsilon_golden.txt: 720 cases, q from 1e-9 to 1, c from 0.05 to
// 1e4, T up to 2³⁰, δ = 1e-10 and 1e-5): same order, same ε to 1e-12
// relative. The proven Epsilon is at least as large, equal where q is 0 or 1
// or the argued minimum is at an integer order, and its order is an integer
// when 0 < q < 1.
func TestEpsilonGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/epsilon_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("line %d: %d fields", i+1, len(f))
		}
		var v [6]float64
		for j, s := range f {
			if v[j], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
		}
		q, c, T, delta, want, wantOrder := v[0], v[1], int(v[2]), v[3], v[4], v[5]
		got, order := privacy.ArguedEpsilon(q, c, T, delta)
		if !(math.Abs(got-want) <= 1e-12*want) || !(order == wantOrder || math.IsNaN(order) && math.IsNaN(wantOrder)) {
			t.Errorf("ArguedEpsilon(%g, %g, %d, %g) = (%.17g, %v), before (%.17g, %v)", q, c, T, delta, got, order, want, wantOrder)
		}
		proven, po := privacy.Epsilon(q, c, T, delta)
		same := q == 1 || q == 0 || wantOrder == math.Floor(wantOrder) || math.IsNaN(wantOrder)
		switch {
		case !(proven >= got*(1-1e-12)):
			t.Errorf("Epsilon(%g, %g, %d, %g) = %.17g below the argued %.17g", q, c, T, delta, proven, got)
		case same && !(math.Abs(proven-got) <= 1e-12*got):
			t.Errorf("Epsilon(%g, %g, %d, %g) = %.17g, argued %.17g at order %v: should agree", q, c, T, delta, proven, got, wantOrder)
		case q > 0 && q < 1 && !math.IsNaN(po) && !privacy.Proven(q, po):
			t.Errorf("Epsilon(%g, %g, %d, %g) attained at fractional order %v", q, c, T, delta, po)
		}
		n++
	}
	if n != 720 {
		t.Errorf("%d cases, want 720", n)
	}
}

// The calibration's guarantee on a grid with other δ: the returned c meets
// the target, c·(1−1e-6) does not.
func TestNoiseMultiplierBracket(t *testing.T) {
	for _, delta := range []float64{1e-10, 1e-3} {
		for _, eps := range []float64{0.1, 0.8, 4, 20} {
			for _, q := range []float64{1e-3, 0.05, 0.6} {
				for _, T := range []int{3, 300, 30000} {
					c, err := privacy.NoiseMultiplier(eps, delta, q, T)
					if err != nil {
						t.Fatalf("ε=%g δ=%g q=%g T=%d: %v", eps, delta, q, T, err)
					}
					if e, _ := privacy.Epsilon(q, c, T, delta); !(e <= eps) {
						t.Errorf("ε=%g δ=%g q=%g T=%d: c=%.10g gives %.10g", eps, delta, q, T, c, e)
					}
					if e, _ := privacy.Epsilon(q, c*(1-1e-6), T, delta); !(e > eps) && c > 1.001e-3 {
						t.Errorf("ε=%g δ=%g q=%g T=%d: c=%.10g not minimal (c(1−1e-6) gives %.10g)", eps, delta, q, T, c, e)
					}
				}
			}
		}
	}
}
