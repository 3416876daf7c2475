package privacy

import (
	"math"
	"sync"
)

// What is proven. Mironov, Talwar and Zhang (2019, "Rényi Differential
// Privacy of the Sampled Gaussian Mechanism") prove that A_α (see RDP)
// bounds the Rényi divergence of the Sampled Gaussian Mechanism in both
// directions of add/remove adjacency for INTEGER orders α; for fractional
// orders the same formula is supported by numerical evidence and an
// argument, not a proof. Without sampling (q = 1) the mechanism is the
// Gaussian mechanism, whose Rényi-DP α/(2c²) is proven for every real α.
//
// So every ε that gates, calibrates or is shown (RDP, Epsilon,
// NoiseMultiplier, EpsilonFor, ScheduleEpsilon, and through them the study
// file, the budget gate, the page's recomputation and simulate) uses the
// integer orders of DefaultOrders when 0 < q < 1 and every order when
// q = 1: a fractional order's RDP of a subsampled release is +Inf in the
// accumulated curve, so the conversion skips it. ArguedEpsilon keeps the
// previous behaviour (fractional orders included) for display beside the
// proven figure, labelled "argued".

// arguedPlan is DefaultOrders with the fractional orders of subsampled
// releases evaluated.
var arguedPlan = sync.OnceValue(func() *plan {
	p := newPlan(DefaultOrders())
	p.argued = true
	p.planSkips()
	return p
})

// ArguedEpsilon is Epsilon with the fractional orders of DefaultOrders also
// used at 0 < q < 1 (the series of the package documentation). The result
// is at most Epsilon's and rests on the unproven part of the analysis of
// the Sampled Gaussian Mechanism: show it only beside the proven value, as
// "argued", never gate or calibrate with it. Invalid arguments give
// (NaN, NaN).
func ArguedEpsilon(q, c float64, rounds int, delta float64) (eps, order float64) {
	if !(q >= 0 && q <= 1) || !(c >= 0) || rounds < 0 {
		return math.NaN(), math.NaN()
	}
	s := newScratch(arguedPlan())
	s.reset(q, c)
	return s.epsilon(rounds, delta)
}

// Proven reports whether order α of one release with sampling rate q has a
// proven Rényi-DP bound: every α when q is 0 or 1, integer α otherwise.
func Proven(q, alpha float64) bool {
	return q == 0 || q == 1 || alpha == math.Floor(alpha)
}
