package privacy

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// Accountant accumulates the Rényi-DP of a sequence of Sampled Gaussian
// releases at a fixed list of orders and converts it to (ε, δ)-DP.
//
// Its state (orders and accumulated RDP per order) is explicit and
// round-trips through MarshalJSON/UnmarshalJSON, so a coordinator can
// persist it beside its privacy ledger. An Accountant is not safe for
// concurrent use; Clone it to hand a copy to another goroutine.
type Accountant struct {
	orders []float64
	rdp    []float64
	plan   *plan
	s      *scratch
	tmp    []float64
}

var defaultPlan = sync.OnceValue(func() *plan { return newPlan(DefaultOrders()) })

// NewAccountant returns an empty accountant over orders (each in
// (1, MaxOrder]; it panics otherwise). nil means DefaultOrders().
func NewAccountant(orders []float64) *Accountant {
	var p *plan
	if orders == nil {
		p = defaultPlan()
	} else {
		p = newPlan(orders)
	}
	return &Accountant{orders: p.orders, rdp: make([]float64, len(p.orders)), plan: p}
}

// Orders returns a copy of the accountant's Rényi orders.
func (a *Accountant) Orders() []float64 { return append([]float64(nil), a.orders...) }

// RDP returns a copy of the accumulated RDP, one value per order.
func (a *Accountant) RDP() []float64 { return append([]float64(nil), a.rdp...) }

// Compose adds steps releases of the Sampled Gaussian Mechanism with
// sampling rate q and noise multiplier c: steps·ξ(α) per order (RDP
// composes additively, also across different (q, c): heterogeneous
// composition). steps = 0 is a no-op. It panics on invalid arguments
// (NaN, q ∉ [0, 1], c < 0, steps < 0): validate them first with the Check
// functions.
func (a *Accountant) Compose(q, c float64, steps int) {
	if !(q >= 0 && q <= 1) || !(c >= 0) || steps < 0 {
		panic(fmt.Sprintf("privacy: Compose(q=%v, c=%v, steps=%d): need q ∈ [0,1], c ≥ 0, steps ≥ 0", q, c, steps))
	}
	if steps == 0 || q == 0 {
		return
	}
	if a.s == nil {
		a.s = newScratch(a.plan)
		a.tmp = make([]float64, len(a.orders))
	}
	a.plan.eval(q, c, a.tmp, a.s)
	for i, r := range a.tmp {
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
func (a *Accountant) Epsilon(delta float64) (eps, order float64) {
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
func (a *Accountant) Clone() *Accountant {
	return &Accountant{orders: a.orders, rdp: a.RDP(), plan: a.plan}
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
func (a *Accountant) MarshalJSON() ([]byte, error) {
	v := accountantJSON{Orders: a.orders, RDP: make([]jsonFloat, len(a.rdp))}
	for i, r := range a.rdp {
		v.RDP[i] = jsonFloat(r)
	}
	return json.Marshal(v)
}

// UnmarshalJSON restores a state written by MarshalJSON. It rejects
// mismatched lengths, orders outside (1, MaxOrder] and RDP values that are
// negative or NaN.
func (a *Accountant) UnmarshalJSON(b []byte) error {
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
	*a = Accountant{orders: p.orders, rdp: rdp, plan: p}
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
// arguments give (NaN, NaN); see Accountant.Epsilon for δ.
func Epsilon(q, c float64, rounds int, delta float64) (eps, order float64) {
	if !(q >= 0 && q <= 1) || !(c >= 0) || rounds < 0 {
		return math.NaN(), math.NaN()
	}
	p := defaultPlan()
	return epsilonOf(p, newScratch(p), make([]float64, len(p.orders)), q, c, rounds, delta)
}

func epsilonOf(p *plan, s *scratch, tmp []float64, q, c float64, rounds int, delta float64) (float64, float64) {
	if rounds == 0 || q == 0 {
		clear(tmp)
	} else {
		p.eval(q, c, tmp, s)
		for i := range tmp {
			tmp[i] *= float64(rounds)
		}
	}
	return epsilonFrom(p, tmp, delta)
}

// Bisection settings of NoiseMultiplier.
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
// for the returned c (it is the upper end of the final bisection bracket).
// targetEps = +Inf (non-DP) returns 0. It returns an error wrapping
// ErrInvalidParameter for invalid arguments and ErrUnreachable when even
// c = MaxNoiseMultiplier does not reach the target.
func NoiseMultiplier(targetEps, delta, q float64, rounds int) (float64, error) {
	if err := CheckEpsilon(targetEps); err != nil {
		return 0, err
	}
	if math.IsInf(targetEps, 1) {
		return 0, nil
	}
	for _, err := range []error{CheckDelta(delta), CheckSampleRate(q), CheckRounds(rounds)} {
		if err != nil {
			return 0, err
		}
	}
	p := defaultPlan()
	s, tmp := newScratch(p), make([]float64, len(p.orders))
	ok := func(c float64) bool {
		e, _ := epsilonOf(p, s, tmp, q, c, rounds, delta)
		return e <= targetEps
	}
	lo, hi := 0.5, 1.0
	if ok(hi) {
		for lo = hi / 2; ok(lo); lo /= 2 {
			hi = lo
			if lo/2 < minSearchC {
				return hi, nil
			}
		}
	} else {
		for lo = hi; !ok(hi); hi *= 2 {
			lo = hi
			if hi*2 > MaxNoiseMultiplier {
				if ok(MaxNoiseMultiplier) {
					hi = MaxNoiseMultiplier
					break
				}
				return 0, fmt.Errorf("%w: ε=%g at δ=%g with q=%g, T=%d needs c > %g",
					ErrUnreachable, targetEps, delta, q, rounds, float64(MaxNoiseMultiplier))
			}
		}
	}
	// Invariant: ok(hi) && !ok(lo).
	for hi-lo > relPrecision*hi {
		mid := math.Sqrt(lo * hi)
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
