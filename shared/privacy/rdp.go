package privacy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
)

// MaxOrder is the largest Rényi order an RDP state or SampledGaussianRDP accepts.
const MaxOrder = 1 << 16

// DefaultOrders returns the Rényi orders fedcast accounts at (spec §6):
// 1.1, 1.2, …, 10.9 (step 0.1), 11, 12, …, 63 (step 1), then 64, 128, 256,
// 512 and 1024. The slice is freshly allocated. The accountants use the
// fractional ones only while every release is unsampled (q = 1); see
// proven.go.
//
// The fractional orders are n + f_d with f_d = d/10 rounded to a multiple of
// 2⁻⁴⁹, so that orders with the same tenth share their fractional part bit
// for bit and the fractional series shares its erfc tables across them
// (about 9 tables instead of 21). They differ from the decimal n.d by less
// than 1e-15; any list of orders gives a valid bound.
func DefaultOrders() []float64 {
	o := make([]float64, 0, 99+53+5)
	for n := 1; n <= 10; n++ {
		for d := 0; d <= 9; d++ {
			if n == 1 && d == 0 {
				continue
			}
			f := math.Ldexp(math.Round(math.Ldexp(float64(d)/10, 49)), -49)
			o = append(o, float64(n)+f)
		}
	}
	for a := 11; a <= 63; a++ {
		o = append(o, float64(a))
	}
	return append(o, 64, 128, 256, 512, 1024)
}

// SampledGaussianRDP returns ξ(α), the Rényi-DP of order α of ONE application of the
// Sampled Gaussian Mechanism with Poisson sampling rate q and noise
// multiplier c (noise standard deviation in units of the L2 sensitivity):
//
//	ξ(α) = log(A_α)/(α−1),  A_α = E_{z∼N(0,c²)}[((1−q) + q·e^{(2z−1)/(2c²)})^α].
//
// Integer α sums the binomial expansion, fractional α the two-sided erfc
// series (see the package documentation). Special cases: q = 0 → 0;
// q = 1 → α/(2c²); c = 0 (with q > 0) → +Inf. If the fractional series
// cannot be certified to relative accuracy 1e-12 the order is reported as
// +Inf (RDP.Epsilon then skips it). Invalid arguments (NaN, q outside
// [0, 1], c < 0, α ≤ 1 or α > MaxOrder) give NaN.
//
// For fractional α with 0 < q < 1 the value is that of the formula, which
// bounds the mechanism's Rényi-DP only by an argument (Mironov et al. 2019
// prove it for integer α): the accountants, the calibration and the budget
// gate never use it (see ArguedEpsilon).
func SampledGaussianRDP(q, c, alpha float64) float64 {
	if !(alpha > 1 && alpha <= MaxOrder) || !(q >= 0 && q <= 1) || !(c >= 0) {
		return math.NaN()
	}
	p := newPlan([]float64{alpha})
	p.argued = true
	var out [1]float64
	p.eval(q, c, out[:], newScratch(p))
	return out[0]
}

// tailMax caps the number of terms of the alternating tail of the
// fractional series; with the Cohen–Rodriguez Villegas–Zagier acceleration
// n terms bound the tail's error by 2a₀/(3+√8)ⁿ ≈ 2a₀·5.83⁻ⁿ.
const tailMax = 24

// Relative tolerances of the fractional series: the tail length is chosen so
// that the acceleration's error bound is below tailTol times the head (the
// bound is then ADDED to A_α, so the result errs on the safe side); an order
// whose bound exceeds convTol times A_α is reported as +Inf.
const (
	tailTol = 1e-16
	convTol = 1e-12
)

// linMax is the largest log-value kept in linear tables (e^600 leaves room
// for sums of many terms below MaxFloat64 ≈ e^709).
const linMax = 600

// crvzW[n] holds the weights w_k (k < n) with Σ(−1)^k a_k ≈ Σ w_k a_k, and
// crvzE[n] = 2/(3+√8)ⁿ, the error factor: Algorithm 1 of Cohen, Rodriguez
// Villegas and Zagier, "Convergence acceleration of alternating series",
// Experimental Mathematics 9 (2000): for a_k = ∫₀¹ tᵏ dμ(t), μ ≥ 0, the
// error is at most 2S/(3+√8)ⁿ ≤ 2a₀/(3+√8)ⁿ.
var crvzW, crvzE = func() ([tailMax + 1][]float64, [tailMax + 1]float64) {
	var w [tailMax + 1][]float64
	var e [tailMax + 1]float64
	for n := 1; n <= tailMax; n++ {
		d := math.Pow(3+math.Sqrt(8), float64(n))
		e[n] = 2 / d
		d = (d + 1/d) / 2
		b, c := -1.0, -d
		w[n] = make([]float64, n)
		for k := range n {
			c = b - c
			w[n][k] = c / d
			fk, fn := float64(k), float64(n)
			b = (fk + fn) * (fk - fn) * b / ((fk + 0.5) * (fk + 1))
		}
	}
	return w, e
}()

var log3p8 = math.Log(3 + math.Sqrt(8))

// plan holds everything about a list of orders that does not depend on
// (q, c): binomials, grouping of fractional orders by fractional part, the
// constants of the RDP→DP conversion, and the anchors and candidates used
// to skip orders in the conversion (see scratch.epsilon).
type plan struct {
	orders []float64
	ints   []intOrder
	fracs  []fracOrder
	groups []fracGroup
	maxInt int // largest integer order
	maxG1  int // largest integer argument of G1 needed by fractional orders
	maxN   int // largest ⌊α⌋ of fractional orders
	conv   []float64
	// where[i] ≥ 0 indexes ints, where[i] < 0 indexes fracs[−1−where[i]].
	where []int
	// anchors are the integer orders ≤ hlinMax (cheap binomial sums), always
	// evaluated by the conversion; cands are the other orders, each with the
	// anchors that bound it from below by convexity.
	anchors []int
	cands   []cand
	skips   bool // planSkips was run
	// argued: fractional orders of a subsampled curve (0 < q < 1) are
	// evaluated (their bound is argued, not proven); otherwise they are
	// +Inf there and the conversion skips them (see proven.go).
	argued bool
}

// Anchor references of a cand: an order index, or one of these.
const (
	anchorZero = -1 // α = 0: log A₀ = 0
	anchorOne  = -2 // α = 1: log A₁ = 0
	anchorNone = -3 // no anchor on that side
)

// cand is an order the conversion may skip: lo1 < lo2 < α are the two
// nearest anchors below it, α < hi1 < hi2 the two nearest above.
type cand struct {
	idx                int
	lo1, lo2, hi1, hi2 int
	inv                float64 // 1/(α−1)
}

type intOrder struct {
	idx  int
	lb   []float64 // log C(α, k), k = 0..α
	clin []float64 // C(α, k) when all fit comfortably in a float64, else nil
}

type fracOrder struct {
	idx   int
	alpha float64
	n     int       // ⌊α⌋
	g     int       // index into plan.groups
	lb    []float64 // log C(α, k), k = 0..n (positive coefficients)
	clin  []float64 // C(α, k), k = 0..n, or nil when they may overflow
	ctail [tailMax]float64
	// ctail[i] = |C(α, n+1+i)|; the sign of C(α, n+1+i) is (−1)^i.
}

// fracGroup collects fractional orders with the same fractional part f
// (bit for bit): G2 is needed at x = f + m for integers m ∈ [−tailMax, maxN],
// and f + m rounds to exactly the same double as α − k (both are the
// correctly rounded value of the same real number, since f = α − ⌊α⌋ is
// exact), so the table is shared.
type fracGroup struct {
	f    float64
	maxN int
}

func newPlan(orders []float64) *plan {
	p := &plan{
		orders: append([]float64(nil), orders...),
		conv:   make([]float64, len(orders)),
		where:  make([]int, len(orders)),
	}
	for i, a := range orders {
		if !(a > 1 && a <= MaxOrder) {
			panic(fmt.Sprintf("privacy: order %v outside (1, %d]", a, MaxOrder))
		}
		p.conv[i] = math.Log1p(-1/a) - math.Log(a)/(a-1)
		n := math.Floor(a)
		ni := int(n)
		if n == a {
			o := intOrder{idx: i, lb: logBinoms(a, ni)}
			o.clin = linear(o.lb)
			p.where[i] = len(p.ints)
			p.ints = append(p.ints, o)
			p.maxInt = max(p.maxInt, ni)
			continue
		}
		f := a - n // exact (Sterbenz)
		g := -1
		for j, gr := range p.groups {
			if gr.f == f {
				g = j
				break
			}
		}
		if g < 0 {
			g = len(p.groups)
			p.groups = append(p.groups, fracGroup{f: f})
		}
		p.groups[g].maxN = max(p.groups[g].maxN, ni)
		o := fracOrder{idx: i, alpha: a, n: ni, g: g, lb: logBinoms(a, ni)}
		o.clin = linear(o.lb)
		for j := range o.ctail {
			o.ctail[j] = math.Exp(logBinom(a, float64(ni+1+j)))
		}
		p.where[i] = -1 - len(p.fracs)
		p.fracs = append(p.fracs, o)
		p.maxG1 = max(p.maxG1, ni+tailMax)
		p.maxN = max(p.maxN, ni)
	}
	return p
}

// planSkips splits the orders into anchors (integer orders ≤ hlinMax) and
// candidates, and finds each candidate's neighbouring anchors, counting the
// virtual anchors α = 0 and α = 1 (log A = 0 at both). Only plans used with
// scratch.epsilon need it (defaultPlan).
func (p *plan) planSkips() {
	p.skips = true
	type pt struct {
		a   float64
		ref int
	}
	pts := []pt{{0, anchorZero}, {1, anchorOne}}
	for i, a := range p.orders {
		if a == math.Floor(a) && a <= hlinMax && !slices.ContainsFunc(pts, func(x pt) bool { return x.a == a }) {
			pts = append(pts, pt{a, i})
			p.anchors = append(p.anchors, i)
		}
	}
	slices.SortFunc(pts, func(x, y pt) int { return cmp.Compare(x.a, y.a) })
	for i, a := range p.orders {
		if slices.Contains(p.anchors, i) {
			continue
		}
		c := cand{idx: i, lo1: anchorNone, lo2: anchorNone, hi1: anchorNone, hi2: anchorNone, inv: 1 / (a - 1)}
		j := sort.Search(len(pts), func(j int) bool { return pts[j].a >= a })
		if j >= 2 {
			c.lo1, c.lo2 = pts[j-2].ref, pts[j-1].ref
		}
		if j < len(pts) && pts[j].a == a {
			j++ // a duplicate of an anchor: bound it by the anchors around it
		}
		if j+1 < len(pts) {
			c.hi1, c.hi2 = pts[j].ref, pts[j+1].ref
		}
		p.cands = append(p.cands, c)
	}
}

func logBinoms(a float64, n int) []float64 {
	lb := make([]float64, n+1)
	for k := range lb {
		lb[k] = logBinom(a, float64(k))
	}
	return lb
}

// linear returns exp of every entry, or nil if one exceeds e^100 (then the
// products with the G tables might overflow and the log path is used).
func linear(lb []float64) []float64 {
	out := make([]float64, len(lb))
	for k, l := range lb {
		if l > 100 {
			return nil
		}
		out[k] = math.Exp(l)
	}
	return out
}

// logBinom returns log|C(a, k)| for real a > 0 and integer k ≥ 0, from
// math.Lgamma (C(a,k) = Γ(a+1)/(Γ(k+1)Γ(a−k+1)); Γ(a−k+1) can be negative,
// which only changes the sign, and has poles only at integer a < k, where
// the callers never ask).
func logBinom(a, k float64) float64 {
	l1, _ := math.Lgamma(a + 1)
	l2, _ := math.Lgamma(k + 1)
	l3, _ := math.Lgamma(a - k + 1)
	return l1 - l2 - l3
}

// Kinds of (q, c) pairs.
const (
	kindZero  = iota // q = 0: ξ = 0
	kindInf          // c = 0, or 1/(2c²) overflows: ξ = +Inf
	kindGauss        // q = 1: ξ = α/(2c²)
	kindSGM          // 0 < q < 1, c > 0: the series
)

// scratch is the RDP curve of one (q, c) pair over the orders of a plan,
// evaluated lazily: ξ of an order is computed on first use and kept, and so
// are the per-(q, c) tables it needs (e^{h(k)}, G1, the G2 tables of its
// fractional group). Lazy table entries use NaN for "not computed yet". An
// order's value does not depend on which other orders were evaluated
// before it, so a partly evaluated curve gives the same numbers as a full
// one.
type scratch struct {
	p    *plan
	q, c float64
	kind int
	e    sgm
	xi   []float64 // ξ per order, valid where done
	done []bool

	hN    int       // h[k] valid for k < hN; 0: nothing computed yet
	h     []float64 // h(k), k = 0..maxInt
	hlin  []float64 // e^{h(k)}, k = 0..min(maxInt, 63), valid if linOK
	linOK bool
	g1    []float64   // lazy: G1(k) (linear, ≤ 1), k = 0..maxG1
	gInit []bool      // per group: g2log, g2lin, g2ok and p0 computed
	g2log [][]float64 // per group: log G2(f+m), m = 0..maxN
	g2lin [][]float64 // per group: G2(f+m) (linear), m = 0..maxN, valid if g2ok
	g2ok  []bool
	g2t   [][]float64 // lazy, per group: G2(f−1−i) (linear, ≤ 1), i = 0..tailMax−1
	tail  [tailMax]float64
	zeros [tailMax]float64
	head  []float64
	tmp   []float64
	p0    float64 // ½erfc(z₀/(√2c)) ≥ G2(x) for x ≤ 0
	p0ok  bool
	// Skipping bounds of plan.cands (scratch.bounds), valid if boundsOK.
	candL, candErr []float64
	boundsOK       bool
}

const hlinMax = 63

// newScratch returns an empty curve for p (call reset before use). The
// float tables share one allocation.
func newScratch(p *plan) *scratch {
	ng := len(p.groups)
	nh := min(p.maxInt, hlinMax) + 1
	size := 2*len(p.orders) + 2*len(p.cands) + p.maxInt + 1 + nh + p.maxG1 + 1 + p.maxN + 1 + ng*tailMax
	for _, g := range p.groups {
		size += 2 * (g.maxN + 1)
	}
	buf := make([]float64, size)
	take := func(n int) []float64 {
		s := buf[:n:n]
		buf = buf[n:]
		return s
	}
	s := &scratch{
		p:       p,
		xi:      take(len(p.orders)),
		tmp:     take(len(p.orders)),
		candL:   take(len(p.cands)),
		candErr: take(len(p.cands)),
		done:    make([]bool, len(p.orders)),
		h:       take(p.maxInt + 1),
		hlin:    take(nh),
		g1:      take(p.maxG1 + 1),
		head:    take(p.maxN + 1),
		gInit:   make([]bool, ng),
		g2log:   make([][]float64, ng),
		g2lin:   make([][]float64, ng),
		g2ok:    make([]bool, ng),
		g2t:     make([][]float64, ng),
	}
	for i, g := range p.groups {
		s.g2log[i] = take(g.maxN + 1)
		s.g2lin[i] = take(g.maxN + 1)
		s.g2t[i] = take(tailMax)
	}
	return s
}

// reset forgets every value and table and sets the curve to (q, c), which
// must satisfy q ∈ [0, 1], c ≥ 0 (not NaN).
func (s *scratch) reset(q, c float64) {
	s.q, s.c = q, c
	clear(s.done)
	s.hN, s.p0ok, s.boundsOK = 0, false, false
	clear(s.gInit)
	switch {
	case q == 0:
		s.kind = kindZero
		return
	case c == 0:
		s.kind = kindInf
		return
	case q == 1:
		s.kind = kindGauss
		return
	}
	s.e = newSGM(q, c)
	if math.IsInf(s.e.s2, 0) || math.IsInf(s.e.z0, 0) {
		// c so small that 1/(2c²) overflows: every order is unbounded.
		s.kind = kindInf
		return
	}
	s.kind = kindSGM
	for k := range s.g1 {
		s.g1[k] = math.NaN()
	}
}

// order returns ξ of order i, computing it on first use.
func (s *scratch) order(i int) float64 {
	if s.done[i] {
		return s.xi[i]
	}
	var v float64
	switch s.kind {
	case kindZero:
		v = 0
	case kindInf:
		v = math.Inf(1)
	case kindGauss:
		v = s.p.orders[i] / (2 * s.c * s.c)
	default:
		if w := s.p.where[i]; w >= 0 {
			o := &s.p.ints[w]
			s.ensureH(len(o.lb) - 1)
			v = intRDP(&s.e, o, s, s.linOK)
		} else if !s.p.argued {
			v = math.Inf(1) // not proven for 0 < q < 1: skipped
		} else {
			o := &s.p.fracs[-1-w]
			s.ensureGroup(o.g)
			v = s.p.fracRDP(&s.e, o, s)
		}
	}
	s.xi[i], s.done[i] = v, true
	return v
}

// fill evaluates every order and returns the curve (owned by s).
func (s *scratch) fill() []float64 {
	for i := range s.xi {
		s.order(i)
	}
	return s.xi
}

// ensureH computes h(k) for k ≤ n; the first call also fixes whether the
// linear table e^{h(k)}, k ≤ 63, is usable (max h ≤ linMax) and fills it.
func (s *scratch) ensureH(n int) {
	e := &s.e
	if s.hN == 0 {
		hmax := math.Inf(-1)
		for k := range s.hlin {
			s.h[k] = e.h(float64(k))
			hmax = max(hmax, s.h[k])
		}
		s.linOK = hmax <= linMax
		if s.linOK {
			for k := range s.hlin {
				s.hlin[k] = math.Exp(s.h[k])
			}
		}
		s.hN = len(s.hlin)
	}
	for ; s.hN <= n; s.hN++ {
		s.h[s.hN] = e.h(float64(s.hN))
	}
}

// ensureGroup computes the G2 tables of fractional group g.
func (s *scratch) ensureGroup(g int) {
	if s.gInit[g] {
		return
	}
	e := &s.e
	if !s.p0ok {
		s.p0 = math.Exp(logErfc(e.z0*e.inv) - math.Ln2)
		s.p0ok = true
	}
	gr := s.p.groups[g]
	ok := true
	for m := range s.g2log[g] {
		l := e.logG2(gr.f + float64(m))
		s.g2log[g][m] = l
		ok = ok && l <= linMax
	}
	s.g2ok[g] = ok
	if ok {
		for m, l := range s.g2log[g] {
			s.g2lin[g][m] = math.Exp(l)
		}
	}
	for i := range s.g2t[g] {
		s.g2t[g][i] = math.NaN()
	}
	s.gInit[g] = true
}

// sgm holds the constants of one (q, c) pair with 0 < q < 1, c > 0.
//
// With r(z) = q·e^{(2z−1)/(2c²)}/(1−q), A_α = (1−q)^α·E[(1+r)^α] splits at
// z₀ = ½ + c²·log(1/q − 1), where r = 1. Expanding (1+r)^α below z₀ and
// r^α(1+1/r)^α above gives A_α = (1−q)^α Σ_k C(α,k)[G1(k) + G2(α−k)] with
//
//	G1(x) = e^{h(x)}·½erfc((x−z₀)/(√2c)),  G2(x) = e^{h(x)}·½erfc((z₀−x)/(√2c)),
//	h(x)  = x·log(q/(1−q)) + (x²−x)/(2c²).
//
// G1(x) = ∫_{z<z₀} N(z; 0, c²)·r(z)^x dz ≤ 1 for x ≥ 0, and
// G2(x) = ∫_{z>z₀} N(z; 0, c²)·r(z)^x dz ≤ 1 for x ≤ 0.
type sgm struct {
	lq1, lr, s2, z0, inv float64
}

func newSGM(q, c float64) sgm {
	lq1 := math.Log1p(-q)
	lr := math.Log(q) - lq1
	return sgm{lq1: lq1, lr: lr, s2: 1 / (2 * c * c), z0: 0.5 - c*c*lr, inv: 1 / (math.Sqrt2 * c)}
}

func (e *sgm) h(x float64) float64 { return x*e.lr + (x*x-x)*e.s2 }

func (e *sgm) logG1(x float64) float64 { return e.h(x) + logErfc((x-e.z0)*e.inv) - math.Ln2 }

func (e *sgm) logG2(x float64) float64 { return e.h(x) + logErfc((e.z0-x)*e.inv) - math.Ln2 }

// g returns G1(x) (first) or G2(x) in linear arithmetic, for arguments
// where the result is at most 1 (G1 with x ≥ 0, G2 with x ≤ 0). It avoids
// the logarithm when e^{h(x)} and erfc are both representable.
func (e *sgm) g(x float64, first bool) float64 {
	arg := (e.z0 - x) * e.inv
	if first {
		arg = -arg
	}
	if h := e.h(x); h < 700 && h > -700 && arg < 25 {
		return 0.5 * math.Exp(h) * math.Erfc(arg)
	}
	if first {
		return math.Exp(e.logG1(x))
	}
	return math.Exp(e.logG2(x))
}

// eval writes ξ(α) of one SGM step for every order of p into dst, using s
// (a scratch of p) for the tables.
func (p *plan) eval(q, c float64, dst []float64, s *scratch) {
	s.reset(q, c)
	copy(dst, s.fill())
}

// intRDP: log A_α = α·log(1−q) + log Σ_{k=0}^{α} C(α,k)·e^{h(k)}, in linear
// arithmetic when every term is representable, else by log-sum-exp.
func intRDP(e *sgm, o *intOrder, s *scratch, linOK bool) float64 {
	a := float64(len(o.lb) - 1)
	if linOK && o.clin != nil && len(o.clin) <= len(s.hlin) {
		var sum float64
		for k, c := range o.clin {
			sum += c * s.hlin[k]
		}
		return finish(a, a*e.lq1+math.Log(sum))
	}
	m := math.Inf(-1)
	for k, l := range o.lb {
		if v := l + s.h[k]; v > m {
			m = v
		}
	}
	var sum float64
	for k, l := range o.lb {
		if d := l + s.h[k] - m; d > -45 {
			sum += math.Exp(d)
		}
	}
	return finish(a, a*e.lq1+m+math.Log(sum))
}

// finish converts log A_α to ξ(α), clamping the rounding noise below 0
// (A_α ≥ 1 by Jensen) and mapping an unrepresentable result to +Inf.
func finish(a, logA float64) float64 {
	r := logA / (a - 1)
	if math.IsNaN(r) {
		return math.Inf(1)
	}
	return max(r, 0)
}

func (s *scratch) G1(e *sgm, k int) float64 {
	v := s.g1[k]
	if v != v {
		v = e.g(float64(k), true)
		s.g1[k] = v
	}
	return v
}

// fracRDP evaluates the two-sided series for a fractional order:
//
//	A_α/(1−q)^α = Σ_{k=0}^{n} C(α,k)[G1(k) + G2(α−k)] + Σ_{i≥0} (−1)^i a_i,
//	a_i = |C(α,n+1+i)|·[G1(n+1+i) + G2(α−n−1−i)],
//
// keeping the signs of the terms. The a_i form a Hausdorff moment sequence
// (|C(α,k)| for k > α is a Beta integral in k, G1 and G2 are integrals of
// tᵏ with t ∈ (0,1)), so the alternating tail is summed with the CRVZ
// acceleration and its proven error bound is added (safe side).
func (p *plan) fracRDP(e *sgm, o *fracOrder, s *scratch) float64 {
	g := o.g
	f := p.groups[g].f
	var h1 float64 // Σ C·G1 (all G1 ≤ 1)
	for k := 0; k <= o.n; k++ {
		if o.clin != nil {
			h1 += o.clin[k] * s.G1(e, k)
		} else {
			h1 += math.Exp(o.lb[k] + math.Log(s.G1(e, k)))
		}
	}
	// Σ C·G2 over the head, scaled by e^{−mx}.
	mx := 0.0
	var h2 float64
	if s.g2ok[g] && o.clin != nil {
		for k := 0; k <= o.n; k++ {
			h2 += o.clin[k] * s.g2lin[g][o.n-k]
		}
	} else {
		for k := 0; k <= o.n; k++ {
			v := o.lb[k] + s.g2log[g][o.n-k]
			s.head[k] = v
			mx = max(mx, v)
		}
		for k := 0; k <= o.n; k++ {
			h2 += math.Exp(s.head[k] - mx)
		}
	}
	sc := 1.0 // scale of the linear parts (G1 head, tail)
	if mx > 0 {
		sc = math.Exp(-mx)
	}
	hs := h1*sc + h2
	// G2(x) ≤ P0 = ½erfc(z₀/(√2c)) for x ≤ 0. When the G2 part of the tail,
	// itself an alternating moment series and so bounded by its first term
	// ctail[0]·G2(f−1) ≤ ctail[0]·P0, is below tolerance, it is replaced by
	// that bound (added below) instead of being evaluated.
	var bound float64
	g2t := s.g2t[g]
	if b := o.ctail[0] * s.p0 * sc; b <= tailTol*hs {
		g2t = s.zeros[:]
		bound = b
	}
	a := func(i int) float64 {
		v := g2t[i]
		if v != v {
			v = e.g(f-1-float64(i), false)
			g2t[i] = v
		}
		return o.ctail[i] * (s.G1(e, o.n+1+i) + v) * sc
	}
	a0 := a(0)
	var tail float64
	if a0 > 0 {
		n := 1
		for n < tailMax && crvzE[n]*a0 > tailTol*hs {
			n++
		}
		s.tail[0] = a0
		for i := 1; i < n; i++ {
			s.tail[i] = a(i)
		}
		for i, w := range crvzW[n] {
			tail += w * s.tail[i]
		}
		bound += crvzE[n] * a0
	}
	total := hs + tail + bound
	if !(bound <= convTol*total) {
		return math.Inf(1) // series not certified: skip this order
	}
	return finish(o.alpha, o.alpha*e.lq1+mx+math.Log(total))
}

// logErfc returns log(erfc(x)) without underflow: math.Erfc below x = 25,
// where it keeps full relative precision, and the asymptotic series
// erfc(x) = e^{−x²}/(x√π)·Σ_n (−1)ⁿ(2n−1)!!/(2x²)ⁿ above (12 terms; the
// first omitted term is below 1e-22 for x ≥ 25).
func logErfc(x float64) float64 {
	if x < 25 {
		return math.Log(math.Erfc(x))
	}
	z := 1 / (2 * x * x)
	s, t := 1.0, 1.0
	for n := 1; n <= 12; n++ {
		t *= -float64(2*n-1) * z
		s += t
	}
	return -x*x - math.Log(x*math.SqrtPi) + math.Log(s)
}
