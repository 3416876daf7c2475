package privacy

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// RDP accumulates the Rényi-DP of a sequence of Sampled Gaussian
// releases at a fixed list of orders and converts it to (ε, δ)-DP.
//
// Its state (orders and accumulated RDP per order) is explicit and
// round-trips through MarshalJSON/UnmarshalJSON, so a coordinator can
// persist it beside its privacy ledger. An RDP is not safe for
// concurrent use; Clone it to hand a copy to another goroutine.
type RDP struct {
	orders []float64
	rdp    []float64
	plan   *plan
	s      *scratch // curve of a non-default plan
}

var defaultPlan = sync.OnceValue(func() *plan {
	p := newPlan(DefaultOrders())
	p.planSkips()
	return p
})

// NewRDP returns an empty accountant over orders (each in
// (1, MaxOrder]; it panics otherwise). nil means DefaultOrders().
func NewRDP(orders []float64) *RDP {
	var p *plan
	if orders == nil {
		p = defaultPlan()
	} else {
		p = newPlan(orders)
	}
	return &RDP{orders: p.orders, rdp: make([]float64, len(p.orders)), plan: p}
}

// Orders returns a copy of the accountant's Rényi orders.
func (a *RDP) Orders() []float64 { return append([]float64(nil), a.orders...) }

// Curve returns a copy of the accumulated RDP, one value per order.
func (a *RDP) Curve() []float64 { return append([]float64(nil), a.rdp...) }

// Compose adds steps releases of the Sampled Gaussian Mechanism with
// sampling rate q and noise multiplier c: steps·ξ(α) per order (RDP
// composes additively, also across different (q, c): heterogeneous
// composition). steps = 0 is a no-op. It panics on invalid arguments
// (NaN, q ∉ [0, 1], c < 0, steps < 0): validate them first with the Check
// functions. Accountants over DefaultOrders take the RDP curve from the
// package's cache of recent (q, c) pairs (see Epsilon).
func (a *RDP) Compose(q, c float64, steps int) {
	if !(q >= 0 && q <= 1) || !(c >= 0) || steps < 0 {
		panic(fmt.Sprintf("privacy: Compose(q=%v, c=%v, steps=%d): need q ∈ [0,1], c ≥ 0, steps ≥ 0", q, c, steps))
	}
	if steps == 0 || q == 0 {
		return
	}
	var xi []float64
	if a.plan == defaultPlan() {
		// The coordinator composes the same (q, c) every round: reuse the
		// cached curve.
		e := lockedCurve(q, c)
		defer e.mu.Unlock()
		xi = e.s.fill()
	} else {
		if a.s == nil {
			a.s = newScratch(a.plan)
		}
		a.s.reset(q, c)
		xi = a.s.fill()
	}
	for i, r := range xi {
		a.rdp[i] += float64(steps) * r
	}
}

// Epsilon converts the accumulated RDP into ε of an (ε, δ)-DP guarantee
// with the conversion of Balle et al. (2020, Theorem 21):
//
//	ε = min_α  RDP(α) + log((α−1)/α) − (log δ + log α)/(α−1),
//
// clamped at 0, and returns the minimising order. Orders whose RDP is +Inf
// are skipped. If the RDP is 0 at every order (nothing composed, or only
// q = 0 rounds) the result is (0, NaN): the releases did not depend on
// anyone's data. δ = 0, or no finite order, gives (+Inf, NaN); δ that is NaN,
// negative or ≥ 1 gives (NaN, NaN): the conversion needs δ ∈ (0, 1).
func (a *RDP) Epsilon(delta float64) (eps, order float64) {
	return epsilonFrom(a.plan, a.rdp, delta)
}

func epsilonFrom(p *plan, rdp []float64, delta float64) (eps, order float64) {
	if delta == 0 {
		return math.Inf(1), math.NaN()
	}
	if !(delta > 0 && delta < 1) {
		return math.NaN(), math.NaN()
	}
	zero := true
	for _, r := range rdp {
		zero = zero && r == 0
	}
	if zero {
		return 0, math.NaN() // nothing data-dependent was released
	}
	ld := math.Log(delta)
	eps, order = math.Inf(1), math.NaN()
	for i, r := range rdp {
		if math.IsInf(r, 1) {
			continue
		}
		al := p.orders[i]
		if e := r + p.conv[i] - ld/(al-1); e < eps {
			eps, order = e, al
		}
	}
	return max(eps, 0), order
}

// Clone returns an independent copy of a.
func (a *RDP) Clone() *RDP {
	return &RDP{orders: a.orders, rdp: a.Curve(), plan: a.plan}
}

type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 1) {
		return []byte(`"+Inf"`), nil
	}
	if math.IsNaN(v) || math.IsInf(v, -1) {
		return nil, fmt.Errorf("privacy: cannot encode %v", v)
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if string(b) == `"+Inf"` {
		*f = jsonFloat(math.Inf(1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("privacy: bad number %s", b)
	}
	*f = jsonFloat(v)
	return nil
}

type accountantJSON struct {
	Orders []float64   `json:"orders"`
	RDP    []jsonFloat `json:"rdp"`
}

// MarshalJSON encodes the state as {"orders": [...], "rdp": [...]}; an
// order with unbounded RDP is written as the string "+Inf". Numbers are
// written with the shortest representation that round-trips exactly.
func (a *RDP) MarshalJSON() ([]byte, error) {
	v := accountantJSON{Orders: a.orders, RDP: make([]jsonFloat, len(a.rdp))}
	for i, r := range a.rdp {
		v.RDP[i] = jsonFloat(r)
	}
	return json.Marshal(v)
}

// UnmarshalJSON restores a state written by MarshalJSON. It rejects
// mismatched lengths, orders outside (1, MaxOrder] and RDP values that are
// negative or NaN.
func (a *RDP) UnmarshalJSON(b []byte) error {
	var v accountantJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("privacy: decode accountant: %w", err)
	}
	if len(v.Orders) == 0 || len(v.Orders) != len(v.RDP) {
		return fmt.Errorf("privacy: decode accountant: %d orders, %d rdp values", len(v.Orders), len(v.RDP))
	}
	rdp := make([]float64, len(v.RDP))
	for i, r := range v.RDP {
		if !(r >= 0) {
			return fmt.Errorf("privacy: decode accountant: rdp[%d] = %v, must be ≥ 0", i, float64(r))
		}
		if o := v.Orders[i]; !(o > 1 && o <= MaxOrder) {
			return fmt.Errorf("privacy: decode accountant: order %v outside (1, %d]", o, MaxOrder)
		}
		rdp[i] = float64(r)
	}
	var p *plan
	if d := defaultPlan(); equalOrders(d.orders, v.Orders) {
		p = d
	} else {
		p = newPlan(v.Orders)
	}
	*a = RDP{orders: p.orders, rdp: rdp, plan: p}
	return nil
}

func equalOrders(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Epsilon returns the ε (and the minimising order) of rounds releases of
// the Sampled Gaussian Mechanism (q, c) at δ, over DefaultOrders. Invalid
// arguments give (NaN, NaN); see RDP.Epsilon for δ.
//
// The RDP curves of the last few (q, c) pairs are cached (see
// curveCacheSize), and orders that provably cannot attain the minimum are
// not evaluated; the result is the same as converting the full curve. It is
// safe for concurrent use.
func Epsilon(q, c float64, rounds int, delta float64) (eps, order float64) {
	if !(q >= 0 && q <= 1) || !(c >= 0) || rounds < 0 {
		return math.NaN(), math.NaN()
	}
	if !(delta > 0 && delta < 1) || rounds == 0 || q == 0 {
		// Decided without the curve.
		return epsilonFrom(defaultPlan(), zeroRDP(), delta)
	}
	e := lockedCurve(q, c)
	defer e.mu.Unlock()
	return e.s.epsilon(rounds, delta)
}

var zeroRDP = sync.OnceValue(func() []float64 { return make([]float64, len(defaultPlan().orders)) })

// Search settings of NoiseMultiplier.
const (
	// minSearchC is the smallest c NoiseMultiplier returns; a target met
	// already at this c returns it (a valid, slightly conservative answer).
	minSearchC = 1e-3
	// relPrecision is the relative width of the final bracket on c.
	relPrecision = 1e-7
)

// NoiseMultiplier returns the smallest noise multiplier c (to a relative
// precision of 1e-7) such that rounds releases of the Sampled Gaussian
// Mechanism with rate q are (targetEps, delta)-DP over DefaultOrders. The
// answer is on the safe side: Epsilon(q, c, rounds, delta) ≤ targetEps holds
// for the returned c, which is the upper end of a final bracket [lo, c] of
// relative width ≤ 1e-7 whose lower end misses the target.
// targetEps = +Inf (non-DP) returns 0. It returns an error wrapping
// ErrInvalidParameter for invalid arguments and ErrUnreachable when even
// c = MaxNoiseMultiplier does not reach the target.
//
// The search works on log c and log ε (ε falls roughly like a power of c):
// secant steps find a bracket, then a safeguarded regula falsi (Illinois
// variant, with bisection when the bracket does not halve) narrows it; every
// step keeps ε(hi) ≤ target < ε(lo), decided by comparing ε itself with the
// target. About 8 evaluations of ε instead of about 30 for bisection.
func NoiseMultiplier(targetEps, delta, q float64, rounds int) (float64, error) {
	if none, err := calibrationArgs(targetEps, delta, q, rounds); none || err != nil {
		return 0, err
	}
	s := newScratch(defaultPlan())
	lt := math.Log(targetEps)
	// eval returns whether c meets the target and f = log ε(c) − log target
	// (±Inf when ε is 0 or +Inf), used only to place the next point.
	eval := func(c float64) (ok bool, f float64) {
		s.reset(q, c)
		e, _ := s.epsilon(rounds, delta)
		return e <= targetEps, math.Log(e) - lt
	}
	unreachable := func() error {
		return fmt.Errorf("%w: ε=%g at δ=%g with q=%g, T=%d needs c > %g",
			ErrUnreachable, targetEps, delta, q, rounds, float64(MaxNoiseMultiplier))
	}

	// Bracketing: from c = 1, secant steps on (log c, f) with the slope
	// clamped to [−4, −1/4] (−1 to start) and a 10% overshoot, each moving
	// by a factor between 2 and 1000, until the target is crossed.
	var lo, hi, flo, fhi float64
	c := 1.0
	ok, f := eval(c)
	slope := -1.0
	for {
		pc, pf := c, f
		var step float64 // in log c
		if math.IsInf(f, 0) || math.IsNaN(f) {
			step = math.Ln2 * 4
			if f < 0 {
				step = -step
			}
		} else {
			step = math.Max(math.Ln2, math.Min(math.Log(1000), 1.1*math.Abs(f/slope)))
			if ok {
				step = -step
			}
		}
		next := c * math.Exp(step)
		if next > MaxNoiseMultiplier {
			next = MaxNoiseMultiplier
		}
		if next < minSearchC {
			next = minSearchC
		}
		nok, nf := eval(next)
		if nok != ok {
			if nok {
				lo, flo, hi, fhi = c, f, next, nf
			} else {
				lo, flo, hi, fhi = next, nf, c, f
			}
			break
		}
		if nok && next == minSearchC {
			return minSearchC, nil
		}
		if !nok && next == MaxNoiseMultiplier {
			return 0, unreachable()
		}
		if d := math.Log(next / pc); !math.IsInf(nf, 0) && !math.IsInf(pf, 0) && d != 0 {
			slope = math.Max(-4, math.Min(-0.25, (nf-pf)/d))
		}
		c, ok, f = next, nok, nf
	}

	// Narrowing. Invariant: ε(hi) ≤ target < ε(lo), flo ≥ 0 ≥ fhi (up to
	// rounding of the logarithms). Points closer than a quarter of the final
	// tolerance to an end are moved inward, so once the root is located the
	// next point falls just beyond it and closes the bracket.
	side, slow := 0, 0
	for hi-lo > relPrecision*hi {
		ulo, uhi := math.Log(lo), math.Log(hi)
		width := hi - lo
		var x float64
		if slow >= 4 || math.IsInf(flo, 0) || math.IsInf(fhi, 0) || !(flo > fhi) {
			x = math.Sqrt(lo * hi) // bisection on log c
			slow = 0
		} else {
			x = math.Exp(ulo + flo*(uhi-ulo)/(flo-fhi))
		}
		m := 0.25 * relPrecision * hi
		x = math.Max(lo+m, math.Min(hi-m, x))
		ok, f := eval(x)
		// Anderson–Björck: an end kept twice in a row has its f scaled
		// down, so the next point moves past the root.
		if ok {
			if side == 1 {
				flo *= scaleAB(f, fhi)
			}
			hi, fhi, side = x, f, 1
		} else {
			if side == -1 {
				fhi *= scaleAB(f, flo)
			}
			lo, flo, side = x, f, -1
		}
		if hi-lo > width/2 {
			slow++
		} else {
			slow = 0
		}
	}
	return hi, nil
}

// calibrationArgs checks a calibration's arguments; none is true when the
// target is ε = ∞, which needs no noise (multiplier 0).
func calibrationArgs(targetEps, delta, q float64, rounds int) (none bool, err error) {
	if err := CheckEpsilon(targetEps); err != nil {
		return false, err
	}
	if math.IsInf(targetEps, 1) {
		return true, nil
	}
	for _, err := range []error{CheckDelta(delta), CheckSampleRate(q), CheckRounds(rounds)} {
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// scaleAB is the Anderson–Björck factor 1 − f/fOld for the kept end of the
// bracket (f, fOld: the new and previous value at the moving end), or ½ if
// that is not in (0, 1).
func scaleAB(f, fOld float64) float64 {
	if m := 1 - f/fOld; m > 0 && m < 1 {
		return m
	}
	return 0.5
}
