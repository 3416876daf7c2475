package privacy

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// curveGrid returns (q, c) pairs covering the regimes of the series:
// extreme and typical q, noise from far below 1 to far above, and seeded
// random pairs in between.
func curveGrid() [][2]float64 {
	var g [][2]float64
	for _, q := range []float64{1e-9, 1e-4, 0.01, 0.1, 0.25, 0.5, 0.9, 0.999999} {
		for _, c := range []float64{0.05, 0.3, 0.7, 1, 2.3, 4.8828125, 8.984375, 30, 300, 1e4} {
			g = append(g, [2]float64{q, c})
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 100 {
		g = append(g, [2]float64{math.Pow(10, -6*r.Float64()), math.Pow(10, -1+4*r.Float64())})
	}
	return g
}

// fullEpsilon converts the fully evaluated curve, as the code did before
// orders were skipped.
func fullEpsilon(q, c float64, rounds int, delta float64) (float64, float64) {
	p := defaultPlan()
	rdp := make([]float64, len(p.orders))
	if rounds > 0 {
		p.eval(q, c, rdp, newScratch(p))
		for i := range rdp {
			rdp[i] *= float64(rounds)
		}
	}
	return epsilonFrom(p, rdp, delta)
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// Skipping orders must not change ε or the order, bit for bit: on fresh
// curves, on partly evaluated ones (another T and δ first) and through the
// cache. 180 (q, c) pairs × 4 T × 3 δ.
func TestEpsilonSkippingExact(t *testing.T) {
	p := defaultPlan()
	skipped := 0
	for _, qc := range curveGrid() {
		q, c := qc[0], qc[1]
		reused := newScratch(p)
		reused.reset(q, c)
		for _, T := range []int{1, 75, 10000, 1 << 30} {
			for _, d := range []float64{1e-10, 1e-5, 0.1} {
				we, wo := fullEpsilon(q, c, T, d)
				s := newScratch(p)
				s.reset(q, c)
				ge, gord := s.epsilon(T, d)
				if !same(ge, we) || !same(gord, wo) {
					t.Errorf("q=%g c=%g T=%d δ=%g: skipping gives (%.17g, %v), full curve (%.17g, %v)", q, c, T, d, ge, gord, we, wo)
				}
				for _, done := range s.done {
					if !done {
						skipped++
					}
				}
				if ge, gord := reused.epsilon(T, d); !same(ge, we) || !same(gord, wo) {
					t.Errorf("q=%g c=%g T=%d δ=%g: reused curve gives (%.17g, %v), want (%.17g, %v)", q, c, T, d, ge, gord, we, wo)
				}
				if ge, gord := Epsilon(q, c, T, d); !same(ge, we) || !same(gord, wo) {
					t.Errorf("q=%g c=%g T=%d δ=%g: Epsilon gives (%.17g, %v), want (%.17g, %v)", q, c, T, d, ge, gord, we, wo)
				}
			}
		}
	}
	// The test must exercise skipping, not just the fallback.
	if skipped == 0 {
		t.Fatal("no order was ever skipped")
	}
	t.Logf("%d order evaluations skipped", skipped)
}

// The premise of skipping: the convexity bound minus its slack is below the
// computed log A_α of every candidate order (180 (q, c) pairs × 95 orders),
// with room to spare.
func TestSkipBoundsHold(t *testing.T) {
	p := defaultPlan()
	s := newScratch(p)
	worst := math.Inf(-1) // largest (L − log A)/slack
	for _, qc := range curveGrid() {
		s.reset(qc[0], qc[1])
		s.bounds()
		xi := s.fill()
		for j, cd := range p.cands {
			x := xi[cd.idx]
			if math.IsInf(x, 1) || math.IsInf(s.candL[j], -1) {
				continue
			}
			logA := x * (p.orders[cd.idx] - 1)
			// The bound may exceed the computed value only by rounding,
			// and by far less than the slack (a 100× margin at least).
			if over := s.candL[j] - logA; !(over <= 0.01*s.candErr[j]) {
				t.Errorf("q=%g c=%g α=%v: bound %.17g (slack %.3g) above log A = %.17g", qc[0], qc[1], p.orders[cd.idx], s.candL[j], s.candErr[j], logA)
			}
			if s.candErr[j] > 0 {
				worst = max(worst, (s.candL[j]-logA)/s.candErr[j])
			}
		}
	}
	t.Logf("largest (bound − log A)/slack: %.3g (≤ 0.01 required, < 1 suffices for exactness)", worst)
}

// The chord bounds are tight enough to matter: at the paper's ε = 1 noise
// level the minimiser is the integer order 18 and no fractional order needs
// its series.
func TestSkippingPaper(t *testing.T) {
	p := defaultPlan()
	s := newScratch(p)
	s.reset(0.25, 8.984375)
	s.epsilon(75, 1e-5)
	for _, o := range p.fracs {
		if s.done[o.idx] {
			t.Errorf("fractional order %v evaluated", o.alpha)
		}
	}
}

// Concurrent callers with more (q, c) pairs than the cache holds get the
// same answers as sequential fresh evaluation.
func TestEpsilonCacheConcurrent(t *testing.T) {
	type key struct {
		c float64
		T int
	}
	want := map[key][2]float64{}
	cs := []float64{0.7, 1, 1.5, 2.3, 3, 4.8828125, 6, 8.984375, 12, 20, 40, 80}
	Ts := []int{1, 75, 1000}
	for _, c := range cs {
		for _, T := range Ts {
			e, o := fullEpsilon(0.25, c, T, 1e-5)
			want[key{c, T}] = [2]float64{e, o}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 300 {
				k := key{cs[r.IntN(len(cs))], Ts[r.IntN(len(Ts))]}
				e, o := Epsilon(0.25, k.c, k.T, 1e-5)
				if w := want[k]; e != w[0] || o != w[1] {
					select {
					case errs <- "mismatch":
						t.Errorf("c=%g T=%d: (%v, %v), want %v", k.c, k.T, e, o, w)
					default:
					}
					return
				}
				if r.IntN(10) == 0 {
					NewRDP(nil).Compose(0.25, k.c, 1)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(curveCache.list); n > curveCacheSize {
		t.Errorf("cache holds %d curves, limit %d", n, curveCacheSize)
	}
}

// Special (q, c) pairs, T = 0 and invalid δ take the full conversion and
// agree with it.
func TestCurveSpecialCases(t *testing.T) {
	p := defaultPlan()
	s := newScratch(p)
	inf := math.Inf(1)
	for _, qc := range [][2]float64{{0, 1}, {0.3, 0}, {1, 2}, {0.3, 1e-200}, {0.3, inf}, {1, inf}, {0.25, 4}} {
		for _, T := range []int{0, 1, 75} {
			for _, d := range []float64{0, 1e-5, 0.5, 1, math.NaN()} {
				s.reset(qc[0], qc[1])
				ge, gord := s.epsilon(T, d)
				we, wo := fullEpsilon(qc[0], qc[1], T, d)
				if !same(ge, we) || !same(gord, wo) {
					t.Errorf("q=%g c=%g T=%d δ=%g: curve (%v, %v), full (%v, %v)", qc[0], qc[1], T, d, ge, gord, we, wo)
				}
				if ge, gord := Epsilon(qc[0], qc[1], T, d); !same(ge, we) || !same(gord, wo) {
					t.Errorf("q=%g c=%g T=%d δ=%g: Epsilon (%v, %v), full (%v, %v)", qc[0], qc[1], T, d, ge, gord, we, wo)
				}
			}
		}
	}
}
