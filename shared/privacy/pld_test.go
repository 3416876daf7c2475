package privacy

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"testing"
)

// analyticGaussianDelta is the exact δ(ε) of the Gaussian mechanism with
// μ = sensitivity/σ (Balle & Wang 2018, Theorem 8):
// δ = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2).
func analyticGaussianDelta(eps, mu float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return phi(-eps/mu+mu/2) - math.Exp(eps)*phi(-eps/mu-mu/2)
}

// analyticGaussianEpsilon inverts analyticGaussianDelta by bisection.
func analyticGaussianEpsilon(delta, mu float64) float64 {
	lo, hi := 0.0, 1.0
	for analyticGaussianDelta(hi, mu) > delta {
		hi *= 2
	}
	for range 200 {
		m := (lo + hi) / 2
		if analyticGaussianDelta(m, mu) > delta {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// For q = 1 both directions are the Gaussian mechanism; T rounds with noise
// c compose to one with μ = √T/c.
func TestPLDMatchesAnalyticGaussian(t *testing.T) {
	for _, tc := range []struct {
		c     float64
		T     int
		delta float64
	}{
		{5, 75, 1e-5}, {10, 75, 1e-5}, {20, 75, 1e-5}, {3, 75, 1e-5}, {8, 75, 1e-8}, {1, 1, 1e-5}, {50, 75, 1e-5},
	} {
		est, err := PLDEpsilon([]Event{{1, tc.c, tc.T}}, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		exact := analyticGaussianEpsilon(tc.delta, math.Sqrt(float64(tc.T))/tc.c)
		t.Logf("c=%g T=%d δ=%g: PLD %.6f [%.6f], exact %.6f, gap %.2e", tc.c, tc.T, tc.delta, est.Epsilon, est.Lower, exact, est.Epsilon-exact)
		if math.Abs(est.Epsilon-exact) > 1e-3 {
			t.Errorf("c=%g T=%d: PLD ε=%.6f, exact %.6f: off by more than 1e-3", tc.c, tc.T, est.Epsilon, exact)
		}
		if est.Epsilon < exact-1e-9 {
			t.Errorf("c=%g T=%d: PLD ε=%.9f below the exact %.9f", tc.c, tc.T, est.Epsilon, exact)
		}
		if est.Lower > exact+1e-9 {
			t.Errorf("c=%g T=%d: optimistic ε=%.9f above the exact %.9f", tc.c, tc.T, est.Lower, exact)
		}
	}
}

// Reference values from Google's dp_accounting (PLD, ADD_OR_REMOVE_ONE,
// pessimistic, value discretisation 1e-4, δ = 1e-5).
var pldReference = []struct {
	q, c float64
	T    int
	eps  float64
}{
	{0.1, 1, 75, 6.1602},
	{0.01, 0.5, 75, 6.0753},
	{1, 5, 10, 2.5944},
}

func TestPLDReferenceValues(t *testing.T) {
	for _, h := range []float64{DefaultPLDInterval, 1e-4} {
		if h == 1e-4 && (testing.Short() || runtime.GOOS == "js") {
			continue // the fine grid takes about a second natively
		}
		for _, r := range pldReference {
			est, err := PLDEpsilonInterval([]Event{{r.q, r.c, r.T}}, 1e-5, h)
			if err != nil {
				t.Fatal(err)
			}
			tol := math.Max(0.005*r.eps, 0.002)
			t.Logf("h=%g q=%g c=%g T=%d: ε=%.5f (ref %.4f, lower %.5f, %s)", h, r.q, r.c, r.T, est.Epsilon, r.eps, est.Lower, est.Direction)
			if math.Abs(est.Epsilon-r.eps) > tol {
				t.Errorf("h=%g q=%g c=%g T=%d: ε=%.5f, reference %.4f ± %.4f", h, r.q, r.c, r.T, est.Epsilon, r.eps, tol)
			}
			if !(est.Lower <= est.Epsilon) {
				t.Errorf("lower %.5f above ε %.5f", est.Lower, est.Epsilon)
			}
		}
	}
}

// RDP is an upper bound on the exact ε, so the PLD's pessimistic ε may
// exceed it only by its discretisation error.
func TestPLDNeverAboveRDP(t *testing.T) {
	for _, q := range []float64{0.01, 0.1, 0.5, 1} {
		for _, c := range []float64{0.8, 1.5, 4} {
			for _, T := range []int{1, 10, 75} {
				for _, delta := range []float64{1e-5, 1e-9} {
					est, err := PLDEpsilon([]Event{{q, c, T}}, delta)
					if err != nil {
						t.Fatal(err)
					}
					rdp, _ := Epsilon(q, c, T, delta)
					if est.Epsilon > rdp+est.DiscretisationError() {
						t.Errorf("q=%g c=%g T=%d δ=%g: PLD ε=%.6f > RDP %.6f + error %.2e", q, c, T, delta, est.Epsilon, rdp, est.DiscretisationError())
					}
					if !(est.Lower <= est.Epsilon) || est.Lower < 0 {
						t.Errorf("q=%g c=%g T=%d δ=%g: bounds [%g, %g]", q, c, T, delta, est.Lower, est.Epsilon)
					}
				}
			}
		}
	}
}

func TestPLDHeterogeneousComposition(t *testing.T) {
	eps := func(evs ...Event) PLDEstimate {
		t.Helper()
		e, err := PLDEpsilon(evs, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := Event{0.1, 1.2, 30}, Event{0.3, 2.5, 45}
	ab, ba := eps(a, b), eps(b, a)
	split := eps(Event{0.1, 1.2, 10}, b, Event{0.1, 1.2, 20})
	if math.Abs(ab.Epsilon-ba.Epsilon) > 1e-9 || math.Abs(ab.Epsilon-split.Epsilon) > 1e-9 {
		t.Errorf("order or split changes ε: %.12f, %.12f, %.12f", ab.Epsilon, ba.Epsilon, split.Epsilon)
	}
	// Each part alone spends less; together more than either.
	if ea, eb := eps(a).Epsilon, eps(b).Epsilon; !(ab.Epsilon > ea && ab.Epsilon > eb) {
		t.Errorf("composition ε=%g not above its parts %g, %g", ab.Epsilon, ea, eb)
	}
	// Gaussians with different noise compose to one Gaussian with
	// μ² = Σ T/c².
	g := eps(Event{1, 4, 20}, Event{1, 8, 55})
	exact := analyticGaussianEpsilon(1e-5, math.Sqrt(20.0/16+55.0/64))
	if math.Abs(g.Epsilon-exact) > 1e-3 || g.Epsilon < exact-1e-9 {
		t.Errorf("heterogeneous Gaussian: ε=%.6f, exact %.6f", g.Epsilon, exact)
	}
	// Rounds = 0 events are no-ops; no rounds spend nothing.
	if z := eps(a, Event{0.5, 1, 0}); z.Epsilon != eps(a).Epsilon {
		t.Errorf("a zero-round event changed ε")
	}
	if z := eps(); z.Epsilon != 0 {
		t.Errorf("no rounds: ε=%g", z.Epsilon)
	}
}

// Under Poisson sampling the add and the remove distributions differ; the
// estimate reports the worse one.
func TestPLDAddRemoveDiffer(t *testing.T) {
	for _, tc := range []struct {
		q, c float64
		T    int
	}{{0.1, 1, 75}, {0.5, 0.7, 3}, {0.9, 0.5, 1}} {
		var pm [][2]lossPMF
		for d := range 2 {
			_ = d
		}
		var ev [2]lossPMF
		for d := range 2 {
			g := lossGrid(tc.q, tc.c, d == 1, DefaultPLDInterval)
			ev[d], _ = g.discretise(false)
		}
		pm = append(pm, ev)
		cp, ok := composePair(pm, []int{tc.T}, DefaultPLDInterval)
		if !ok {
			t.Fatal("grid too large")
		}
		rho := float64(tc.T) * pldRelError
		er, ea := cp[0].epsilon(1e-5, rho, true), cp[1].epsilon(1e-5, rho, true)
		if math.Abs(er-ea) < 1e-3 {
			t.Errorf("q=%g c=%g T=%d: remove ε=%g, add ε=%g: expected them to differ", tc.q, tc.c, tc.T, er, ea)
		}
		est, _ := PLDEpsilon([]Event{{tc.q, tc.c, tc.T}}, 1e-5)
		if est.Epsilon != math.Max(er, ea) {
			t.Errorf("estimate %g is not the worse of %g and %g", est.Epsilon, er, ea)
		}
		t.Logf("q=%g c=%g T=%d: remove %.5f, add %.5f → %s", tc.q, tc.c, tc.T, er, ea, est.Direction)
	}
}

func TestPLDMonotone(t *testing.T) {
	prev := math.Inf(1)
	for _, c := range []float64{0.6, 0.9, 1.3, 2, 3.5, 6} {
		e, _ := PLDEpsilon([]Event{{0.2, c, 40}}, 1e-5)
		if !(e.Epsilon < prev) {
			t.Errorf("ε(c=%g)=%g not below ε at the smaller c (%g)", c, e.Epsilon, prev)
		}
		prev = e.Epsilon
	}
	prev = 0
	for _, T := range []int{1, 5, 20, 80} {
		e, _ := PLDEpsilon([]Event{{0.2, 2, T}}, 1e-5)
		if !(e.Epsilon > prev) {
			t.Errorf("ε(T=%d)=%g not above ε at fewer rounds (%g)", T, e.Epsilon, prev)
		}
		prev = e.Epsilon
	}
}

// The discretisation is a valid distribution: masses ≥ 0 summing to 1
// (the pessimistic one up to its conservative mass at +∞).
func TestPLDDiscretisationMass(t *testing.T) {
	for _, add := range []bool{false, true} {
		for _, q := range []float64{0.01, 0.3, 1} {
			g := lossGrid(q, 1.1, add, 1e-3)
			p, o := g.discretise(true)
			var sp, so float64
			for _, v := range p.m {
				if v < 0 {
					t.Fatalf("negative mass")
				}
				sp += v
			}
			for _, v := range o.m {
				so += v
			}
			if math.Abs(sp+p.inf-1) > 1e-12 || so > 1+1e-12 || so < 1-1e-13 {
				t.Errorf("add=%v q=%g: pessimistic mass %.15g (+∞ %g), optimistic %.15g", add, q, sp, p.inf, so)
			}
		}
	}
}

func TestPLDInvalid(t *testing.T) {
	for _, tc := range []struct {
		evs   []Event
		delta float64
	}{
		{[]Event{{0, 1, 1}}, 1e-5},
		{[]Event{{1.5, 1, 1}}, 1e-5},
		{[]Event{{0.1, 0, 1}}, 1e-5},
		{[]Event{{0.1, math.NaN(), 1}}, 1e-5},
		{[]Event{{0.1, 1, -1}}, 1e-5},
		{[]Event{{0.1, 1, 1}}, 0},
		{[]Event{{0.1, 1, 1}}, 1},
	} {
		if _, err := PLDEpsilon(tc.evs, tc.delta); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%v δ=%g: err %v, want ErrInvalidParameter", tc.evs, tc.delta, err)
		}
	}
	if _, err := PLDEpsilonInterval([]Event{{0.1, 1, 1}}, 1e-5, 0); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("interval 0 accepted")
	}
}

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 8, 64} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		y := append([]complex128(nil), x...)
		fft(y, false)
		for k := range n {
			var s complex128
			for j := range n {
				s += x[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
			if cmplx.Abs(s-y[k]) > 1e-12 {
				t.Fatalf("n=%d k=%d: fft %v, dft %v", n, k, y[k], s)
			}
		}
		fft(y, true)
		for j := range n {
			if cmplx.Abs(y[j]-x[j]) > 1e-13 {
				t.Fatalf("n=%d: inverse does not restore x[%d]", n, j)
			}
		}
	}
}

func TestPLDNoiseMultiplier(t *testing.T) {
	for _, tc := range []struct{ eps, q float64 }{{2, 0.25}, {1, 0.25}, {1, 1}} {
		c, err := PLDNoiseMultiplier(tc.eps, 1e-5, tc.q, 75)
		if err != nil {
			t.Fatal(err)
		}
		crdp, _ := NoiseMultiplier(tc.eps, 1e-5, tc.q, 75)
		at := pldEpsilon([]Event{{tc.q, c, 75}}, 1e-5, DefaultPLDInterval, false).Epsilon
		below := pldEpsilon([]Event{{tc.q, c * (1 - 2*pldRelPrecision), 75}}, 1e-5, DefaultPLDInterval, false).Epsilon
		t.Logf("ε=%g q=%g: PLD c=%.5f (ε %.6f), RDP c=%.5f", tc.eps, tc.q, c, at, crdp)
		if at > tc.eps {
			t.Errorf("ε(c)=%g above the target %g", at, tc.eps)
		}
		if below <= tc.eps {
			t.Errorf("a 2e-5 smaller c still meets the target (ε=%g): not the smallest", below)
		}
		if !(c < crdp) {
			t.Errorf("PLD c=%g not below RDP c=%g", c, crdp)
		}
	}
	if c, err := PLDNoiseMultiplier(math.Inf(1), 1e-5, 0.25, 75); c != 0 || err != nil {
		t.Errorf("non-DP: %v, %v", c, err)
	}
	if _, err := PLDNoiseMultiplier(-1, 1e-5, 0.25, 75); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("negative ε accepted")
	}
}

func TestAccountantKinds(t *testing.T) {
	for _, s := range []string{"", "rdp", "pld"} {
		k, err := ParseAccountantKind(s)
		if err != nil || (s == "" && k != AccountantRDP) || (s != "" && string(k) != s) {
			t.Errorf("Parse(%q) = %q, %v", s, k, err)
		}
	}
	for _, s := range []string{"RDP", "prv", " pld"} {
		if _, err := ParseAccountantKind(s); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	evs := []Event{{0.25, 4.86, 75}}
	r, err1 := EpsilonFor(AccountantRDP, evs, 1e-5)
	p, err2 := EpsilonFor(AccountantPLD, evs, 1e-5)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if want, _ := Epsilon(0.25, 4.86, 75, 1e-5); r != want {
		t.Errorf("EpsilonFor(rdp) = %g, Epsilon = %g", r, want)
	}
	if !(p < r) {
		t.Errorf("PLD ε=%g not below RDP ε=%g", p, r)
	}
	// Heterogeneous RDP: the sum of the parts' RDP.
	a := NewRDP(nil)
	a.Compose(0.1, 1, 10)
	a.Compose(0.2, 2, 5)
	want, _ := a.Epsilon(1e-5)
	if got, _ := EpsilonFor(AccountantRDP, []Event{{0.1, 1, 10}, {0.2, 2, 5}}, 1e-5); got != want {
		t.Errorf("EpsilonFor(rdp, two events) = %g, accountant %g", got, want)
	}
	if _, err := EpsilonFor("x", evs, 1e-5); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("unknown kind accepted")
	}
	for _, k := range []AccountantKind{AccountantRDP, AccountantPLD} {
		c, err := NoiseMultiplierFor(k, 2, 1e-5, 0.25, 75)
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := EpsilonFor(k, []Event{{0.25, c, 75}}, 1e-5); e > 2 {
			t.Errorf("%s: calibrated c=%g gives ε=%g > 2", k, c, e)
		}
	}
}

// A loss range too wide for the grid limits is computed on a coarser grid,
// still pessimistic.
func TestPLDCoarsens(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("a 2²⁰-point FFT: seconds natively, too slow under node")
	}
	est, err := PLDEpsilon([]Event{{0.5, 0.1, 20}}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	rdp, _ := Epsilon(0.5, 0.1, 20, 1e-5)
	t.Logf("h=%g ε=%g [%g], RDP %g", est.Interval, est.Epsilon, est.Lower, rdp)
	if !(est.Interval > DefaultPLDInterval) || math.IsInf(est.Epsilon, 0) || est.Epsilon > rdp+est.DiscretisationError() || !(est.Lower <= est.Epsilon) {
		t.Errorf("coarse grid: %+v, RDP %g", est, rdp)
	}
}

// One round, both directions: the connect-the-dots distribution's δ(ε)
// equals the exact hockey-stick divergence at grid points (up to its mass
// at +∞) and lies above it between them; the rounded-down one lies below.
// The exact δ is integrated numerically over x, independently of the
// thresholds and bin masses the discretisation uses.
func TestPLDSingleRoundCurve(t *testing.T) {
	const q, c, h = 0.3, 0.9, 0.05
	exact := func(eps float64, add bool) float64 {
		// E_P[(1 − e^{ε−L})₊] by the midpoint rule on [−12c, 1+12c].
		pdf := func(x, mu float64) float64 {
			return math.Exp(-(x-mu)*(x-mu)/(2*c*c)) / (c * math.Sqrt(2*math.Pi))
		}
		lo, hi := -12*c, 1+12*c
		n := 200000
		dx := (hi - lo) / float64(n)
		var s float64
		for i := range n {
			x := lo + (float64(i)+0.5)*dx
			p0, p1 := pdf(x, 0), pdf(x, 1)
			mix := (1-q)*p0 + q*p1
			var p, l float64
			if add {
				p, l = p0, math.Log(p0/mix)
			} else {
				p, l = mix, math.Log(mix/p0)
			}
			if l > eps {
				s += p * (1 - math.Exp(eps-l)) * dx
			}
		}
		return s
	}
	deltaOf := func(p lossPMF, eps float64) float64 {
		d := p.inf
		for j, m := range p.m {
			if l := float64(p.k0+j) * h; l > eps {
				d += m * (1 - math.Exp(eps-l))
			}
		}
		return d
	}
	for _, add := range []bool{false, true} {
		g := lossGrid(q, c, add, h)
		pess, opt := g.discretise(true)
		for _, eps := range []float64{0, 0.1, 0.2, 0.35, 0.5, 1, 1.5} {
			if add && eps >= -math.Log1p(-q) {
				continue
			}
			ex := exact(eps, add)
			onGrid := math.Abs(eps/h-math.Round(eps/h)) < 1e-9
			dp, do := deltaOf(pess, eps), deltaOf(opt, eps)
			if dp < ex-1e-9 || do > ex+1e-9 || (onGrid && math.Abs(dp-ex) > 1e-8+pess.inf) {
				t.Errorf("add=%v ε=%g: exact δ %.10g, pessimistic %.10g, optimistic %.10g", add, eps, ex, dp, do)
			}
		}
		// Between grid points the chord is above the curve.
		if eps := 0.325; !add || eps < -math.Log1p(-q) {
			if dp, ex := deltaOf(pess, eps), exact(eps, add); dp < ex-1e-9 {
				t.Errorf("add=%v ε=%g off-grid: pessimistic %.10g below exact %.10g", add, eps, dp, ex)
			}
		}
	}
}
