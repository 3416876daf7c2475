package privacy

import (
	"fmt"
	"math"
)

// A Rényi privacy filter (Feldman & Zrnic 2021, "Individual Privacy
// Accounting via a Rényi Filter", Theorem 3.1) admits an adaptively chosen
// sequence of mechanisms: the next mechanism, its noise and whether there
// is one at all may depend on everything released so far. If, at one order
// α fixed before the first release, the sum of the mechanisms' RDP never
// exceeds a budget B(α) also fixed before the first release, the whole
// adaptive sequence is (α, B(α))-RDP, and so (ε, δ)-DP with ε the budget
// B(α) converts to.
//
// Ordinary composition (RDP, PLD) assumes the number of rounds and
// their noise were fixed in advance. A study whose lifetime budget is
// raised after its results were seen (a top-up) chose its later rounds
// adaptively: it is accounted by a filter at one order, never by PLD, and
// never by minimising over orders after the fact. The filter's budget must
// be fixed before the study starts: an LHA's own limit is, which is why
// each LHA runs the filter with its own limit (shared/session).

// Filter is a Rényi filter at one order with an (ε, δ) budget fixed when it
// is made. It is not safe for concurrent use.
type Filter struct {
	order  float64
	budget float64 // B(α): the RDP at α that converts to ε at δ
	spent  float64 // Σ RDP at α of the admitted mechanisms
	delta  float64
	acct   *RDP // one order: the RDP curve of a (q, c) at α
}

// NewFilter returns an empty filter at order (in (1, MaxOrder]) whose
// fixed overall budget is (eps, delta): it admits mechanisms while their
// RDP at order sums to at most B = ε − log((α−1)/α) + (log δ + log α)/(α−1),
// the RDP whose conversion (Balle et al. 2020, as RDP.Epsilon) is ε.
func NewFilter(eps, delta, order float64) (*Filter, error) {
	if err := firstErr(CheckEpsilon(eps), CheckDelta(delta)); err != nil {
		return nil, err
	}
	if !(order > 1 && order <= MaxOrder) {
		return nil, fmt.Errorf("%w: filter order %v outside (1, %d]", ErrInvalidParameter, order, MaxOrder)
	}
	b := eps - math.Log((order-1)/order) + (math.Log(delta)+math.Log(order))/(order-1)
	return &Filter{order: order, budget: b, delta: delta, acct: NewRDP([]float64{order})}, nil
}

// Cost returns the RDP at the filter's order of rounds releases of the
// Sampled Gaussian Mechanism (q, c). Invalid arguments panic, as Compose.
func (f *Filter) Cost(q, c float64, rounds int) float64 {
	a := NewRDP([]float64{f.order})
	a.Compose(q, c, rounds)
	return a.Curve()[0]
}

// Admits reports whether rounds more releases of (q, c) keep the filter
// within its budget. A NaN anywhere refuses.
func (f *Filter) Admits(q, c float64, rounds int) bool {
	return f.spent+f.Cost(q, c, rounds) <= f.budget
}

// Spend admits rounds releases of (q, c), or returns an error wrapping
// ErrBudgetExhausted and admits nothing when they do not fit.
func (f *Filter) Spend(q, c float64, rounds int) error {
	cost := f.Cost(q, c, rounds)
	if !(f.spent+cost <= f.budget) {
		return fmt.Errorf("%w: %d rounds at q=%.4g, c=%.6g would take the filter at order %v to ε=%.6g, past its budget",
			ErrBudgetExhausted, rounds, q, c, f.order, convert(f.spent+cost, f.order, f.delta))
	}
	f.spent += cost
	return nil
}

// Epsilon returns ε at the filter's δ of what it has admitted, converted at
// its order: the guarantee of the adaptive sequence so far (at most the
// budget). Nothing admitted gives 0.
func (f *Filter) Epsilon() float64 {
	if f.spent == 0 {
		return 0
	}
	return convert(f.spent, f.order, f.delta)
}

// convert is Balle et al.'s conversion of RDP r at order α to ε at δ.
func convert(r, order, delta float64) float64 {
	return max(r+math.Log((order-1)/order)-(math.Log(delta)+math.Log(order))/(order-1), 0)
}

// FilterEpsilon returns ε at δ of events composed at the one order α
// (the guarantee of an adaptive sequence whose filter at α admitted them).
func FilterEpsilon(events []Event, delta, order float64) (float64, error) {
	f, err := NewFilter(math.Inf(1), delta, order)
	if err != nil {
		return 0, err
	}
	for _, e := range events {
		if err := e.check(); err != nil {
			return 0, err
		}
		f.spent += f.Cost(e.SampleRate, e.NoiseMultiplier, e.Rounds)
	}
	return f.Epsilon(), nil
}

// TopUpNoise returns the smallest noise multiplier c' (to a relative
// precision of 1e-7, on the safe side) such that the planned events
// followed by added rounds of (q, c') compose at order to at most newEps at
// δ: the noise of the rounds a top-up adds, calibrated so that the new
// total is the new budget under a filter at order. It returns an error
// wrapping ErrBudgetExhausted when the planned events alone already reach
// newEps at that order, and ErrUnreachable when even MaxNoiseMultiplier
// does not fit.
func TopUpNoise(planned []Event, q float64, added int, newEps, delta, order float64) (float64, error) {
	if err := firstErr(CheckEpsilon(newEps), CheckDelta(delta), CheckSampleRate(q), CheckRounds(added)); err != nil {
		return 0, err
	}
	base, err := FilterEpsilon(planned, delta, order)
	if err != nil {
		return 0, err
	}
	if !(base < newEps) {
		return 0, fmt.Errorf("%w: the planned rounds already spend ε=%.6g at order %v; a top-up must raise the budget above it (asked ε=%.6g)",
			ErrBudgetExhausted, base, order, newEps)
	}
	eps := func(c float64) float64 {
		e, _ := FilterEpsilon(append(planned[:len(planned):len(planned)], Event{SampleRate: q, NoiseMultiplier: c, Rounds: added}), delta, order)
		return e
	}
	hi := 1.0
	for eps(hi) > newEps {
		if hi *= 2; hi > MaxNoiseMultiplier {
			return 0, fmt.Errorf("%w: ε=%v with %d added rounds at q=%v", ErrUnreachable, newEps, added, q)
		}
	}
	lo := hi / 2
	for eps(lo) <= newEps && lo > minSearchC {
		hi, lo = lo, lo/2
	}
	if lo <= minSearchC {
		return hi, nil
	}
	for hi-lo > relPrecision*hi {
		if mid := (lo + hi) / 2; eps(mid) <= newEps {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
