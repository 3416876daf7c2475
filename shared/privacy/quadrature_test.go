package privacy_test

// An independent check of the accountant: the Rényi divergence of the
// sampled Gaussian is integrated numerically, sharing no code with the
// implementation (own log-sum-exp, own densities, own Gauss–Legendre rule).

import (
	"math"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// gaussLegendre returns the n-point Gauss–Legendre nodes and weights on
// [−1, 1] (Newton iteration on P_n from Chebyshev starting points).
func gaussLegendre(n int) (x, w []float64) {
	x, w = make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		t := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(n) + 0.5))
		var dp float64
		for it := 0; it < 100; it++ {
			p0, p1 := 1.0, t
			for k := 2; k <= n; k++ {
				p0, p1 = p1, (float64(2*k-1)*t*p1-float64(k-1)*p0)/float64(k)
			}
			dp = float64(n) * (t*p1 - p0) / (t*t - 1)
			dt := p1 / dp
			t -= dt
			if math.Abs(dt) < 1e-16 {
				p0, p1 = 1.0, t
				for k := 2; k <= n; k++ {
					p0, p1 = p1, (float64(2*k-1)*t*p1-float64(k-1)*p0)/float64(k)
				}
				dp = float64(n) * (t*p1 - p0) / (t*t - 1)
				break
			}
		}
		x[i], w[i] = t, 2/((1-t*t)*dp*dp)
	}
	return x, w
}

func lae(a, b float64) float64 { // log(e^a + e^b)
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// renyiQuad returns D_α(P‖Q) = log(∫ Q·(P/Q)^α dx)/(α−1), where forward
// selects P = μ = (1−q)N(0,c²) + qN(1,c²), Q = ν = N(0,c²), and !forward
// the reverse. The integral is evaluated with 20-point Gauss–Legendre on
// panels of width min(c, c²)/2 over [−45c, α+45c] (beyond which the
// integrand is below e^{−1000} of its peak), in log space.
func renyiQuad(q, c, alpha float64, forward bool) float64 {
	gx, gw := gaussLegendre(20)
	logNorm := -math.Log(c * math.Sqrt(2*math.Pi))
	f := func(x float64) float64 {
		lnu := logNorm - x*x/(2*c*c)
		lmu := lae(math.Log1p(-q)+lnu, math.Log(q)+logNorm-(x-1)*(x-1)/(2*c*c))
		if forward {
			return lnu + alpha*(lmu-lnu)
		}
		return lmu + alpha*(lnu-lmu)
	}
	lo, hi := -45*c, alpha+45*c
	h := math.Min(c, c*c) / 2
	panels := int(math.Ceil((hi - lo) / h))
	h = (hi - lo) / float64(panels)
	vals := make([]float64, 0, panels*len(gx))
	ws := make([]float64, 0, panels*len(gx))
	m := math.Inf(-1)
	for p := 0; p < panels; p++ {
		a := lo + float64(p)*h
		for i := range gx {
			v := f(a + h/2*(gx[i]+1))
			vals = append(vals, v)
			ws = append(ws, gw[i]*h/2)
			m = math.Max(m, v)
		}
	}
	var s, comp float64 // Neumaier summation
	for i, v := range vals {
		t := ws[i] * math.Exp(v-m)
		if y := s + t; math.Abs(s) >= math.Abs(t) {
			comp += (s - y) + t
			s = y
		} else {
			comp += (t - y) + s
			s = y
		}
	}
	return (m + math.Log(s+comp)) / (alpha - 1)
}

func TestRDPAgainstQuadrature(t *testing.T) {
	worst := 0.0
	for _, alpha := range []float64{1.5, 2, 3.7, 8, 32, 128} {
		for _, q := range []float64{0.01, 0.1, 0.5} {
			for _, c := range []float64{0.5, 1, 4} {
				got := privacy.SampledGaussianRDP(q, c, alpha)
				want := renyiQuad(q, c, alpha, true)
				rel := math.Abs(got-want) / want
				worst = math.Max(worst, rel)
				if !(rel <= 1e-6) {
					t.Errorf("RDP(q=%g, c=%g, α=%g) = %.12g, quadrature %.12g, rel diff %.3g > 1e-6", q, c, alpha, got, want, rel)
				}
				// Mironov et al.: the forward direction dominates, so RDP
				// also bounds D_α(ν‖μ).
				if rev := renyiQuad(q, c, alpha, false); !(rev <= got*(1+1e-9)) {
					t.Errorf("q=%g c=%g α=%g: D(ν‖μ) = %.12g above RDP %.12g", q, c, alpha, rev, got)
				}
			}
		}
	}
	t.Logf("largest relative difference RDP vs quadrature over 54 cases: %.3g", worst)
}

// Orders between the default grid, including ones with long alternating
// tails (q = 0.5, small c) and a large fractional order.
func TestRDPFractionalAgainstQuadrature(t *testing.T) {
	for _, tc := range []struct{ q, c, alpha float64 }{
		{0.25, 2.3, 1.05}, {0.25, 2.3, 4.8}, {0.5, 0.7, 2.25}, {0.9, 1, 5.5},
		{0.25, 8.984375, 17.5}, {0.01, 0.3, 6.3}, {0.3, 3, 100.5},
	} {
		got := privacy.SampledGaussianRDP(tc.q, tc.c, tc.alpha)
		want := renyiQuad(tc.q, tc.c, tc.alpha, true)
		if rel := math.Abs(got-want) / want; !(rel <= 1e-6) {
			t.Errorf("RDP(%g, %g, %g) = %.12g, quadrature %.12g (rel %.3g)", tc.q, tc.c, tc.alpha, got, want, rel)
		}
	}
}
