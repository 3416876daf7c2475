package privacy

import (
	"fmt"
	"math"
	"math/bits"
)

// Event is a run of Rounds releases of the Sampled Gaussian Mechanism with
// Poisson sampling rate SampleRate (q) and noise multiplier
// NoiseMultiplier (c). A study's privacy history is a list of events.
type Event struct {
	SampleRate      float64 `json:"q"`
	NoiseMultiplier float64 `json:"c"`
	Rounds          int     `json:"rounds"`
}

// check validates e with the package's parameter checks.
func (e Event) check() error {
	if e.Rounds == 0 {
		// A run of no rounds is allowed (and releases nothing).
		return firstErr(CheckSampleRate(e.SampleRate), CheckNoiseMultiplier(e.NoiseMultiplier))
	}
	for _, err := range []error{CheckSampleRate(e.SampleRate), CheckNoiseMultiplier(e.NoiseMultiplier), CheckRounds(e.Rounds)} {
		if err != nil {
			return err
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// DefaultPLDInterval is the default width h of the privacy-loss grid of the
// PLD accountant (Google's dp_accounting calls it the value discretisation
// interval).
const DefaultPLDInterval = 1e-3

// Limits of the PLD accountant's grids. A composition whose loss range
// would need more points is computed on a coarser grid (still pessimistic;
// PLDEstimate.Interval reports the width used).
const (
	maxPLDFFT    = 1 << 20 // points of the composed grid (FFT size; 16 MB per array)
	maxPLDSingle = 1 << 21 // points of one round's grid
)

// Numerical allowances of the PLD accountant (see the package doc).
const (
	// pldTail bounds the probability mass left out at each end: per round
	// below the grid and, for the composition, outside the Chernoff window.
	pldTail = 1e-15
	// pldTailZ is the standard normal quantile with tail mass < pldTail.
	pldTailZ = 8.0
	// pldFFTUnit is the per-stage relative error of the FFT used in the
	// rounding allowance (see composePair): the normwise bound of radix-2
	// Cooley–Tukey with accurately computed twiddles is log₂n·η·‖x‖₂ with
	// η ≈ 5u + γ₄ ≈ 6u (Higham, Accuracy and Stability of Numerical
	// Algorithms, §24.1); 2e-15 ≈ 18u leaves a margin of 3.
	pldFFTUnit = 2e-15
	// pldRelError bounds the relative rounding error of one round's masses
	// (bin masses are differences of erfc values: ≈ 1e-12 relative; the
	// connect-the-dots weights divide by e^h − 1 ≈ h: ≈ 1e-8 relative).
	// Masses compose multiplicatively, so a composition of T rounds is
	// inflated by T·pldRelError.
	pldRelError = 1e-7
)

// PLDEstimate is the result of the PLD accountant: ε of the composition at
// δ under add/remove adjacency.
type PLDEstimate struct {
	// Epsilon is the pessimistic ε: an upper bound on the exact ε of the
	// composition (the value to report and to check budgets against).
	Epsilon float64
	// Lower is the optimistic ε: a lower bound on the exact ε. The exact ε
	// lies in [Lower, Epsilon].
	Lower float64
	// Interval is the loss grid width h used.
	Interval float64
	// Direction is the adjacency direction that attains Epsilon: "remove"
	// (the data set with the person vs. without) or "add".
	Direction string
}

// DiscretisationError returns Epsilon − Lower, an upper bound on how far
// Epsilon is above the exact ε.
func (e PLDEstimate) DiscretisationError() float64 { return e.Epsilon - e.Lower }

// PLDEpsilon returns ε at δ of the composition of events under add/remove
// adjacency, from the privacy-loss distributions of the Poisson-subsampled
// Gaussian on a grid of width DefaultPLDInterval (see the package doc).
// Events with Rounds = 0 are skipped; no rounds at all gives ε = 0. It
// returns an error wrapping ErrInvalidParameter for invalid arguments.
func PLDEpsilon(events []Event, delta float64) (PLDEstimate, error) {
	return PLDEpsilonInterval(events, delta, DefaultPLDInterval)
}

// PLDEpsilonInterval is PLDEpsilon on a grid of width h ∈ [1e-7, 1].
func PLDEpsilonInterval(events []Event, delta, h float64) (PLDEstimate, error) {
	if err := checkPLDArgs(events, delta, h); err != nil {
		return PLDEstimate{}, err
	}
	return pldEpsilon(events, delta, h, true), nil
}

func checkPLDArgs(events []Event, delta, h float64) error {
	if err := CheckDelta(delta); err != nil {
		return err
	}
	if !(h >= 1e-7 && h <= 1) {
		return bad("PLD interval h", h, "[1e-7, 1]")
	}
	for i, e := range events {
		if err := e.check(); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	return nil
}

// pldEpsilon computes the estimate for valid arguments; with lower=false it
// skips the optimistic bound (Lower is then NaN).
func pldEpsilon(events []Event, delta, h float64, lower bool) PLDEstimate {
	var evs []Event
	for _, e := range events {
		if e.Rounds > 0 {
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		return PLDEstimate{Epsilon: 0, Lower: 0, Interval: h, Direction: "remove"}
	}
	for {
		res, ok := pldTry(evs, delta, h, lower)
		if ok {
			return res
		}
		h *= 2
	}
}

// pldTry runs the computation on grid h; ok is false if a grid would exceed
// the size limits.
func pldTry(evs []Event, delta, h float64, lower bool) (PLDEstimate, bool) {
	// Per-event discretisations: [event][direction] for each family.
	pess := make([][2]lossPMF, len(evs))
	var opt [][2]lossPMF
	if lower {
		opt = make([][2]lossPMF, len(evs))
	}
	for i, e := range evs {
		for d := range 2 {
			g := lossGrid(e.SampleRate, e.NoiseMultiplier, d == 1, h)
			if g.k1-g.k0+1 > maxPLDSingle {
				return PLDEstimate{}, false
			}
			p, o := g.discretise(lower)
			pess[i][d] = p
			if lower {
				opt[i][d] = o
			}
		}
	}
	counts := make([]int, len(evs))
	total := 0
	for i, e := range evs {
		counts[i] = e.Rounds
		total += e.Rounds
	}
	rho := float64(total) * pldRelError

	pc, ok := composePair(pess, counts, h)
	if !ok {
		return PLDEstimate{}, false
	}
	res := PLDEstimate{Interval: h, Lower: math.NaN()}
	er := pc[0].epsilon(delta, rho, true)
	ea := pc[1].epsilon(delta, rho, true)
	res.Epsilon, res.Direction = er, "remove"
	if ea > er {
		res.Epsilon, res.Direction = ea, "add"
	}
	if lower {
		oc, ok := composePair(opt, counts, h)
		if !ok {
			return PLDEstimate{}, false
		}
		res.Lower = max(oc[0].epsilon(delta, rho, false), oc[1].epsilon(delta, rho, false))
	}
	return res, true
}

// lossPMF is a discrete privacy-loss distribution: mass m[j] at loss
// (k0+j)·h, and mass inf at +∞.
type lossPMF struct {
	k0  int
	m   []float64
	inf float64
}

// grid describes one round's privacy loss L in one direction.
//
// remove: P = (1−q)N(0, s²) + qN(1, s²), Q = N(0, s²), L(x) = log(dP/dQ)
// is increasing in x; add: P = N(0, s²), Q = (1−q)N(0, s²) + qN(1, s²),
// L is decreasing in x.
type grid struct {
	q, s   float64
	add    bool
	h      float64
	k0, k1 int // grid points k·h, k0 ≤ k ≤ k1
}

// loss returns L(x).
func (g *grid) loss(x float64) float64 {
	// log((1−q) + q·exp((2x−1)/(2s²))) without overflow.
	a := (2*x - 1) / (2 * g.s * g.s)
	l := logAddExp(math.Log1p(-g.q), math.Log(g.q)+a)
	if g.add {
		return -l
	}
	return l
}

func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// threshold returns x_ε: {L > ε} = {x > x_ε} (remove) or {x < x_ε} (add),
// possibly ±Inf.
func (g *grid) threshold(eps float64) float64 {
	var u float64
	if g.add {
		u = math.Expm1(-eps) / g.q
	} else {
		u = math.Expm1(eps) / g.q
	}
	if u <= -1 {
		// add: L never exceeds eps ({x < −∞} is empty); remove: L always
		// does ({x > −∞} is everything).
		return math.Inf(-1)
	}
	return g.s*g.s*math.Log1p(u) + 0.5
}

// lossGrid chooses the grid of one round: from the loss at which the mass
// of P below is < pldTail (or the least loss) to the loss above which P
// has mass < pldTail (or the greatest loss).
func lossGrid(q, c float64, add bool, h float64) grid {
	g := grid{q: q, s: c, add: add, h: h}
	z := pldTailZ * c
	var lo, hi float64
	if add {
		// P = N(0, s²); L decreasing in x.
		lo = g.loss(z)
		hi = g.loss(-z)
		if q < 1 {
			hi = math.Min(hi, -math.Log1p(-q))
		}
	} else {
		// P ≥ …; the mixture's mass below −z is < tail, above 1+z too.
		lo = g.loss(-z)
		hi = g.loss(1 + z)
	}
	g.k0 = int(math.Floor(lo / h))
	g.k1 = int(math.Ceil(hi / h))
	if g.k1 <= g.k0 {
		g.k1 = g.k0 + 1
	}
	return g
}

// normal tails at z, each computed where it is small.
func tails(z float64) (up, low float64) {
	if z >= 0 {
		up = 0.5 * math.Erfc(z/math.Sqrt2)
		return up, 1 - up
	}
	low = 0.5 * math.Erfc(-z/math.Sqrt2)
	return 1 - low, low
}

// massBetween returns the standard normal mass in (za, zb) for za ≤ zb,
// given the tails at each end.
func massBetween(za, upA, lowA, zb, upB, lowB float64) float64 {
	switch {
	case za >= 0:
		return math.Max(upA-upB, 0)
	case zb <= 0:
		return math.Max(lowB-lowA, 0)
	default:
		return math.Max(1-lowA-upB, 0)
	}
}

// discretise returns the pessimistic (connect-the-dots) and, if opt, the
// optimistic (rounded-down) discretisation of the round's privacy loss.
//
// With t_k = e^{kh}, P_k and Q_k the masses of P and Q on the loss bin
// (ε_k, ε_{k+1}], and r_k = (t_{k+1}Q_k − P_k)/(t_{k+1} − t_k) ∈ [0, Q_k],
// the connect-the-dots masses (Doroshenko et al. 2022, Theorem 4.1, written
// in bin masses so that no second difference of δ is formed) are
//
//	ω_{k0} = P(L ≤ ε_{k0}) + t_{k0}·r_{k0},
//	ω_k    = t_k·(Q_{k−1} − r_{k−1} + r_k),         k0 < k < k1,
//	ω_{k1} = t_{k1}·(Q_{k1−1} − r_{k1−1} + Q(L > ε_{k1})),
//	ω_∞    = P(L > ε_{k1}) ≥ δ(ε_{k1}).
//
// Its hockey-stick curve δ(ε), as a function of e^ε, is the piecewise
// linear interpolation of the exact curve at the grid points, which lies
// above the exact (convex) curve; below ε_{k0} it is the chord to (0, 1).
func (g *grid) discretise(opt bool) (pess, low lossPMF) {
	n := g.k1 - g.k0 + 1
	// Tails at each grid point: zA = x/s (component N(0, s²)) and
	// zB = (x−1)/s (component N(1, s²)).
	type pt struct{ zA, upA, lowA, zB, upB, lowB float64 }
	pts := make([]pt, n)
	for j := range pts {
		x := g.threshold(float64(g.k0+j) * g.h)
		var p pt
		p.zA, p.zB = x/g.s, (x-1)/g.s
		p.upA, p.lowA = tails(p.zA)
		p.upB, p.lowB = tails(p.zB)
		pts[j] = p
	}
	q := g.q
	// Bin masses of P and Q on (ε_j, ε_{j+1}], j < n−1.
	pb := make([]float64, n-1)
	qb := make([]float64, n-1)
	for j := range n - 1 {
		a, b := pts[j], pts[j+1]
		var mA, mB float64
		if g.add {
			// {ε_j < L ≤ ε_{j+1}} = [x_{j+1}, x_j)
			mA = massBetween(b.zA, b.upA, b.lowA, a.zA, a.upA, a.lowA)
			mB = massBetween(b.zB, b.upB, b.lowB, a.zB, a.upB, a.lowB)
			pb[j] = mA
			qb[j] = (1-q)*mA + q*mB
		} else {
			mA = massBetween(a.zA, a.upA, a.lowA, b.zA, b.upA, b.lowA)
			mB = massBetween(a.zB, a.upB, a.lowB, b.zB, b.upB, b.lowB)
			qb[j] = mA
			pb[j] = (1-q)*mA + q*mB
		}
	}
	// Tails of P and Q at the ends: P(L ≤ ε_{k0}), P(L > ε_{k1}), Q(L > ε_{k1}).
	first, last := pts[0], pts[n-1]
	var pBelow, pAbove, qAbove float64
	if g.add {
		pBelow = first.upA
		pAbove = last.lowA
		qAbove = (1-q)*last.lowA + q*last.lowB
	} else {
		pBelow = (1-q)*first.lowA + q*first.lowB
		pAbove = (1-q)*last.upA + q*last.upB
		qAbove = last.upA
	}

	em1 := math.Expm1(g.h)
	t := func(j int) float64 { return math.Exp(float64(g.k0+j) * g.h) }
	r := make([]float64, n-1)
	for j := range r {
		tj := t(j)
		tn := tj * (1 + em1)
		v := (tn*qb[j] - pb[j]) / (tj * em1)
		r[j] = math.Max(0, math.Min(qb[j], v))
	}
	pm := make([]float64, n)
	pm[0] = pBelow + t(0)*r[0]
	for j := 1; j < n-1; j++ {
		pm[j] = t(j) * (qb[j-1] - r[j-1] + r[j])
	}
	pm[n-1] = t(n-1) * (qb[n-2] - r[n-2] + qAbove)
	pess = lossPMF{k0: g.k0, m: pm, inf: pAbove}
	if opt {
		om := make([]float64, n)
		copy(om, pb)
		om[n-1] = pAbove
		low = lossPMF{k0: g.k0, m: om}
	}
	return pess, low
}

// logMGF returns log Σ_j m_j·e^{λ(k0+j)h} (finite part only), computed
// from the end where e^{λℓ} is largest with a running factor e^{−|λ|h}.
func (p *lossPMF) logMGF(lambda, h float64) float64 {
	n := len(p.m)
	f := math.Exp(-math.Abs(lambda) * h)
	s, w := 0.0, 1.0
	var top float64
	if lambda > 0 {
		top = float64(p.k0+n-1) * h
		for j := n - 1; j >= 0 && w > 0; j-- {
			s += p.m[j] * w
			w *= f
		}
	} else {
		top = float64(p.k0) * h
		for j := 0; j < n && w > 0; j++ {
			s += p.m[j] * w
			w *= f
		}
	}
	// The running factor's relative error is below n·u; 1e-9 covers it.
	return math.Log(s*(1+1e-9)) + lambda*top
}

// composed is a composition in one direction: mass m[j] at loss
// (kl+j)·h, mass inf at +∞, and an additive allowance on δ (tails left out
// of the window, FFT rounding).
type composed struct {
	h         float64
	kl        int
	m         []float64
	inf       float64
	allowance float64
}

var chernoffLambdas = []float64{0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64}

// composePair composes per-event PMFs (pmfs[i][0] remove, [1] add), each
// counts[i] times, with one FFT pair: the two real sequences are packed
// into one complex one.
func composePair(pmfs [][2]lossPMF, counts []int, h float64) ([2]composed, bool) {
	var out [2]composed
	w, ok := pldWindow(pmfs, counts, h)
	if !ok {
		return out, false
	}
	n := 2
	for n < w.width {
		n <<= 1
	}
	fftErr := fftAllowance(pmfs, counts, n)
	buf := spectraProduct(pmfs, counts, n)
	var infP [2]float64
	for d := range 2 {
		keep := 1.0
		for i, p := range pmfs {
			keep *= math.Pow(1-p[d].inf, float64(counts[i]))
		}
		infP[d] = 1 - keep
	}
	for d := range 2 {
		m := make([]float64, w.ku[d]-w.kl[d]+1)
		off := ((w.kl[d]-w.base[d])%n + n) % n
		for j := range m {
			z := buf[(off+j)%n]
			v := real(z)
			if d == 1 {
				v = imag(z)
			}
			m[j] = math.Max(v, 0)
		}
		out[d] = composed{
			h: h, kl: w.kl[d], m: m, inf: infP[d],
			// Mass outside the window (≤ 2·pldTail, possibly aliased into
			// it) and the FFT's rounding: Σ|err| ≤ √n·‖err‖₂.
			allowance: 2*pldTail + math.Sqrt(float64(n))*fftErr,
		}
	}
	return out, true
}

// composeWindow is the composed grid's window per direction (0 remove, 1
// add): loss indices kl … ku, the index base of the composed grid's first
// point, and the widest window.
type composeWindow struct {
	base, kl, ku [2]int
	width        int
}

// pldWindow finds the Chernoff window of the composition: the finite
// part's mass above it and below it is < pldTail each. ok is false when
// the window needs more than maxPLDFFT points.
func pldWindow(pmfs [][2]lossPMF, counts []int, h float64) (w composeWindow, ok bool) {
	for d := range 2 {
		hiMax, loMin := 0, 0
		for i, p := range pmfs {
			w.base[d] += counts[i] * p[d].k0
			hiMax += counts[i] * (p[d].k0 + len(p[d].m) - 1)
			loMin += counts[i] * p[d].k0
		}
		up, lo := math.Inf(1), math.Inf(-1)
		lt := math.Log(pldTail)
		for _, lam := range chernoffLambdas {
			var su, sl float64
			for i, p := range pmfs {
				su += float64(counts[i]) * p[d].logMGF(lam, h)
				sl += float64(counts[i]) * p[d].logMGF(-lam, h)
			}
			up = math.Min(up, (su-lt)/lam)
			lo = math.Max(lo, -(sl-lt)/lam)
		}
		w.ku[d] = hiMax
		if !math.IsInf(up, 0) && !math.IsNaN(up) && up/h < float64(hiMax) {
			w.ku[d] = int(math.Ceil(up / h))
		}
		w.kl[d] = loMin
		if !math.IsInf(lo, 0) && !math.IsNaN(lo) && lo/h > float64(loMin) {
			w.kl[d] = int(math.Floor(lo / h))
		}
		if w.kl[d] > w.ku[d] {
			w.kl[d] = w.ku[d]
		}
		if float64(w.ku[d])-float64(w.kl[d]) >= maxPLDFFT {
			return w, false
		}
		w.width = max(w.width, w.ku[d]-w.kl[d]+1)
	}
	return w, true
}

// fftAllowance is the rounding allowance of an FFT composition of size n:
// each forward transform errs by at most log₂n·pldFFTUnit·‖y‖₂ (norms of
// the unnormalised transform divided by √n); the spectra have modulus
// ≤ 1, so raising to the power T and multiplying multiplies the relative
// error by at most the number of factors; the inverse adds its own
// log₂n·pldFFTUnit.
func fftAllowance(pmfs [][2]lossPMF, counts []int, n int) float64 {
	logn := float64(bits.Len(uint(n)) - 1)
	var l2 float64
	total := 0
	for i, p := range pmfs {
		var s float64
		for d := range 2 {
			for _, v := range p[d].m {
				s += v * v
			}
		}
		l2 = math.Max(l2, math.Sqrt(s))
		total += counts[i]
	}
	return (float64(total)*(logn+4) + logn + 4) * pldFFTUnit * math.Max(l2, 1e-3)
}

// spectraProduct returns the inverse FFT of the product of the events'
// spectra, each raised to its count: the remove composition in the real
// parts, the add composition in the imaginary parts, loss index K at
// (K − base) mod n.
func spectraProduct(pmfs [][2]lossPMF, counts []int, n int) []complex128 {
	accA := make([]complex128, n) // product of the remove spectra
	accB := make([]complex128, n) // product of the add spectra
	for k := range accA {
		accA[k], accB[k] = 1, 1
	}
	buf := make([]complex128, n)
	for i, p := range pmfs {
		clear(buf)
		// Index j of an event's grid goes to j mod n: the cyclic
		// convolution then holds the composed mass of loss index K at
		// (K − base) mod n.
		for j, v := range p[0].m {
			buf[j%n] += complex(v, 0)
		}
		for j, v := range p[1].m {
			buf[j%n] += complex(0, v)
		}
		fft(buf, false)
		for k := range n/2 + 1 {
			z, zc := buf[k], buf[(n-k)%n]
			// X = FFT(a + ib) gives A_k = (X_k + conj X_{n−k})/2 and
			// B_k = (X_k − conj X_{n−k})/(2i); A_{n−k} = conj A_k.
			sum, diff := z+cmplxConj(zc), z-cmplxConj(zc)
			a := complex(real(sum)/2, imag(sum)/2)
			b := complex(imag(diff)/2, -real(diff)/2) // diff/(2i)
			a, b = cpow(a, counts[i]), cpow(b, counts[i])
			accA[k] *= a
			accB[k] *= b
			if m := (n - k) % n; m != k {
				accA[m] *= cmplxConj(a)
				accB[m] *= cmplxConj(b)
			}
		}
	}
	for k := range buf {
		buf[k] = accA[k] + complex(0, 1)*accB[k]
	}
	fft(buf, true)
	return buf
}

func cmplxConj(z complex128) complex128 { return complex(real(z), -imag(z)) }

// epsilon returns the smallest ε ≥ 0 with δ(ε) ≤ delta for the pessimistic
// (pess) or optimistic reading of c: the pessimistic δ is
// (1+ρ)·δ_c(ε) + inf + allowance, the optimistic one
// (1−ρ)·δ_c(ε) − allowance, where δ_c(ε) = Σ_{ℓ>ε} m_ℓ·(1 − e^{ε−ℓ}).
// +Inf if no ε meets delta.
func (c *composed) epsilon(delta, rho float64, pess bool) float64 {
	var target float64
	if pess {
		target = (delta - c.inf - c.allowance) / (1 + rho)
	} else {
		target = (delta + c.allowance) / (1 - rho)
	}
	if !(target > 0) {
		return math.Inf(1)
	}
	// Scan down: with A = Σ_{j≥J} m_j and B = Σ_{j≥J} m_j·e^{ℓ_J−ℓ_j}
	// (scaled at ℓ_J so that no exponential overflows or underflows),
	// δ_c(ε) = A − e^{ε−ℓ_J}·B on [ℓ_{J−1}, ℓ_J].
	var a, b float64
	decay := math.Exp(-c.h)
	for j := len(c.m) - 1; j >= 0; j-- {
		l := float64(c.kl+j) * c.h
		if l <= 0 {
			break
		}
		a += c.m[j]
		b = b*decay + c.m[j]
		lower := math.Max(l-c.h, 0)
		if j == 0 {
			lower = 0
		}
		if a-math.Exp(lower-l)*b > target {
			return math.Max(l+math.Log((a-target)/b), lower)
		}
	}
	return 0
}

// cpow returns z^n (n ≥ 1) by binary exponentiation.
func cpow(z complex128, n int) complex128 {
	r := complex(1, 0)
	for n > 0 {
		if n&1 == 1 {
			r *= z
		}
		z *= z
		n >>= 1
	}
	return r
}
