package privacy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A noise schedule gives every round t = 1 … T its own noise multiplier
// c_t (seed 004's "adaptive per-round budgets", done so it can be
// accounted). It is a public study parameter, fixed before the study
// starts: it never depends on the data or on how training goes, so every
// client can recompute the whole study's ε from it before it takes part.
//
// # Syntax (--noise-schedule SPEC, study-file "noise_schedule")
//
//	""  or  constant    c_t = k                       (the default)
//	linear:r            c_t = k·(1 + (r−1)·(t−1)/(T−1)), c_T = r·c_1
//	step:j,r            c_t = k for t ≤ j, r·k for t > j (1 ≤ j < T)
//	geometric:r         c_t = k·r^((t−1)/(T−1)),        c_T = r·c_1
//	c1,c2,…,cT          the multipliers themselves (exactly T of them)
//
// r > 0 is the ratio of the last round's multiplier to the first's: r < 1
// spends more of the budget late (less noise as the model converges),
// r > 1 spends it early. For the named rules the absolute scale k is not
// part of the spec: Calibrate sets it to the smallest value whose
// composed ε meets the target, as NoiseMultiplier does for a constant c.
// An explicit list is taken as written; a study refuses it if its ε
// exceeds the budget.
//
// # Composition
//
// The rounds are composed exactly: the RDP of round t, ξ_t(α) of the
// Sampled Gaussian Mechanism SG(q, c_t), is summed at every order α and the
// sum converted once (RDP.Compose, Balle et al. 2020), or, with the
// PLD accountant, the privacy-loss distributions of all rounds are
// convolved (PLDEpsilon over heterogeneous events). The budget is never
// split into per-round (ε_t, δ_t) and added up: that is valid but loose,
// and seed 004's σ_t = √(2 log(1.25/δ))/ε_t per round is in addition only
// valid for ε_t < 1.
type Schedule struct {
	// Rule is "constant", "linear", "step", "geometric" or "list".
	Rule string
	// Params are the rule's parameters: none (constant), r (linear,
	// geometric), j and r (step), or the multipliers (list).
	Params []float64
}

// Schedule rules.
const (
	RuleConstant  = "constant"
	RuleLinear    = "linear"
	RuleStep      = "step"
	RuleGeometric = "geometric"
	RuleList      = "list"
)

// ErrSchedule is wrapped by every error about a noise schedule's spec.
var ErrSchedule = errors.New("privacy: invalid noise schedule")

// maxScheduleRatio bounds r: a schedule whose last multiplier is more than
// 1000 times (or less than 1/1000 of) the first is almost certainly a typo.
const maxScheduleRatio = 1e3

// ParseSchedule reads a schedule spec (see Schedule for the syntax).
// Surrounding spaces are ignored; "" is the constant schedule.
func ParseSchedule(spec string) (Schedule, error) {
	s := strings.TrimSpace(spec)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s (want constant, linear:r, step:j,r, geometric:r or a list c1,c2,…)",
			ErrSchedule, spec, fmt.Sprintf(format, a...))
	}
	if s == "" || s == RuleConstant {
		return Schedule{Rule: RuleConstant}, nil
	}
	rule, args, named := strings.Cut(s, ":")
	rule = strings.TrimSpace(rule)
	if !named {
		rule, args = RuleList, s
	}
	var nums []float64
	for _, f := range strings.Split(args, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Schedule{}, bad("%q is not a finite number", f)
		}
		nums = append(nums, v)
	}
	ratio := func(r float64) error {
		if !(r > 0 && r >= 1/maxScheduleRatio && r <= maxScheduleRatio) {
			return bad("ratio r = %v, must be in [%g, %g]", r, 1/maxScheduleRatio, float64(maxScheduleRatio))
		}
		return nil
	}
	switch rule {
	case RuleLinear, RuleGeometric:
		if len(nums) != 1 {
			return Schedule{}, bad("%s takes one parameter r, got %d", rule, len(nums))
		}
		if err := ratio(nums[0]); err != nil {
			return Schedule{}, err
		}
	case RuleStep:
		if len(nums) != 2 {
			return Schedule{}, bad("step takes two parameters j,r, got %d", len(nums))
		}
		if j := nums[0]; !(j >= 1 && j <= MaxRounds && j == math.Trunc(j)) {
			return Schedule{}, bad("step round j = %v, must be a whole number ≥ 1", j)
		}
		if err := ratio(nums[1]); err != nil {
			return Schedule{}, err
		}
	case RuleList:
		if named {
			return Schedule{}, bad("write a list without a rule name")
		}
		for i, c := range nums {
			if err := CheckNoiseMultiplier(c); err != nil {
				return Schedule{}, bad("multiplier %d: %v", i+1, err)
			}
		}
	case RuleConstant:
		return Schedule{}, bad("constant takes no parameter")
	default:
		return Schedule{}, bad("unknown rule %q", rule)
	}
	return Schedule{Rule: rule, Params: nums}, nil
}

// String returns the spec of s in the syntax ParseSchedule reads (the
// shortest decimal form of each number, so parsing it gives s back).
func (s Schedule) String() string {
	var b strings.Builder
	if s.Rule == "" || s.Rule == RuleConstant {
		return RuleConstant
	}
	if s.Rule != RuleList {
		b.WriteString(s.Rule)
		b.WriteByte(':')
	}
	for i, v := range s.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return b.String()
}

// IsConstant reports whether s is the constant schedule.
func (s Schedule) IsConstant() bool { return s.Rule == "" || s.Rule == RuleConstant }

// Calibrated reports whether Calibrate chooses the scale of s (every rule
// but an explicit list).
func (s Schedule) Calibrated() bool { return s.Rule != RuleList }

// Shape returns the relative multipliers of rounds 1 … rounds (the
// multipliers at scale k = 1; for a list, the list itself). It fails if the
// schedule does not fit the number of rounds (a list of the wrong length, a
// step after the last round).
func (s Schedule) Shape(rounds int) ([]float64, error) {
	if err := CheckRounds(rounds); err != nil {
		return nil, err
	}
	out := make([]float64, rounds)
	frac := func(t int) float64 { // (t−1)/(T−1), 0 when T = 1
		if rounds == 1 {
			return 0
		}
		return float64(t) / float64(rounds-1)
	}
	switch s.Rule {
	case "", RuleConstant:
		for t := range out {
			out[t] = 1
		}
	case RuleLinear:
		r := s.Params[0]
		for t := range out {
			out[t] = 1 + (r-1)*frac(t)
		}
	case RuleGeometric:
		r := s.Params[0]
		for t := range out {
			out[t] = math.Pow(r, frac(t))
		}
	case RuleStep:
		j, r := int(s.Params[0]), s.Params[1]
		if j >= rounds {
			return nil, fmt.Errorf("%w %q: the step comes after round %d, but the study has %d rounds", ErrSchedule, s.String(), j, rounds)
		}
		for t := range out {
			out[t] = 1
			if t >= j {
				out[t] = r
			}
		}
	case RuleList:
		if len(s.Params) != rounds {
			return nil, fmt.Errorf("%w %q: %d multipliers for %d rounds", ErrSchedule, s.String(), len(s.Params), rounds)
		}
		copy(out, s.Params)
	default:
		return nil, fmt.Errorf("%w: unknown rule %q", ErrSchedule, s.Rule)
	}
	return out, nil
}

// ScheduleEvents returns the privacy events of rounds with noise
// multipliers cs at sampling rate q: one Event per run of consecutive
// rounds with the same multiplier, in round order.
func ScheduleEvents(q float64, cs []float64) []Event {
	var out []Event
	for _, c := range cs {
		if n := len(out); n > 0 && out[n-1].NoiseMultiplier == c {
			out[n-1].Rounds++
			continue
		}
		out = append(out, Event{SampleRate: q, NoiseMultiplier: c, Rounds: 1})
	}
	return out
}

// ScheduleEpsilon returns ε at δ of the rounds with multipliers cs at
// sampling rate q, composed exactly by the accountant named kind (its
// Accountant.Epsilon; see Schedule). Errors wrap ErrInvalidParameter.
func ScheduleEpsilon(kind AccountantKind, q float64, cs []float64, delta float64) (float64, error) {
	a, err := lookupAccountant(kind)
	if err != nil {
		return 0, err
	}
	return scheduleEpsilon(a, q, cs, delta)
}

func scheduleEpsilon(a Accountant, q float64, cs []float64, delta float64) (float64, error) {
	for i, c := range cs {
		if err := CheckNoiseMultiplier(c); err != nil {
			return 0, fmt.Errorf("round %d: %w", i+1, err)
		}
	}
	return a.Epsilon(ScheduleEvents(q, cs), delta)
}

// scheduleRelPrecision is the relative width of Calibrate's final bracket
// on the scale k (both accountants).
const scheduleRelPrecision = 1e-7

// Calibrate returns the multipliers of rounds rounds of schedule s at
// sampling rate q, scaled by the smallest k (to a relative precision of
// 1e-7) for which their composition is (targetEps, delta)-DP by accountant
// kind. The answer is on the safe side: ScheduleEpsilon of the result is
// ≤ targetEps, and scaling it by 1 − 1e-7 misses the target. For the
// constant schedule k is NoiseMultiplierFor's c. An explicit list is not
// scaled: it is returned as it is if it meets the target and refused with
// ErrBudgetExhausted otherwise. targetEps = +Inf (non-DP) returns all zeros.
// Errors wrap ErrSchedule, ErrInvalidParameter, ErrUnreachable or
// ErrBudgetExhausted.
func (s Schedule) Calibrate(kind AccountantKind, targetEps, delta, q float64, rounds int) ([]float64, error) {
	a, err := lookupAccountant(kind)
	if err != nil {
		return nil, err
	}
	if err := CheckEpsilon(targetEps); err != nil {
		return nil, err
	}
	shape, err := s.Shape(rounds)
	if err != nil {
		return nil, err
	}
	if math.IsInf(targetEps, 1) {
		return make([]float64, rounds), nil
	}
	for _, err := range []error{CheckDelta(delta), CheckSampleRate(q)} {
		if err != nil {
			return nil, err
		}
	}
	if !s.Calibrated() {
		eps, err := scheduleEpsilon(a, q, shape, delta)
		if err != nil {
			return nil, err
		}
		if !(eps <= targetEps) {
			return nil, fmt.Errorf("%w: the noise schedule %q spends ε=%.6g at δ=%g (q=%g, %s accountant), above the target ε=%g",
				ErrBudgetExhausted, s.String(), eps, delta, q, kind, targetEps)
		}
		return shape, nil
	}
	if _, rdp := a.(RDPAccountant); rdp && s.IsConstant() {
		// RDP's own calibration of one c is exact for a constant
		// schedule (other accountants search the scale below).
		c, err := a.NoiseMultiplier(targetEps, delta, q, rounds)
		if err != nil {
			return nil, err
		}
		return scaled(shape, c), nil
	}
	maxShape, minShape := 0.0, math.Inf(1)
	for _, v := range shape {
		maxShape, minShape = max(maxShape, v), min(minShape, v)
	}
	lt := math.Log(targetEps)
	// eval reports whether scale k meets the target, and f = log ε(k) −
	// log target (±Inf when ε is 0 or +Inf), used only to place points.
	eval := func(k float64) (bool, float64) {
		eps, err := scheduleEpsilon(a, q, scaled(shape, k), delta)
		if err != nil {
			return false, math.Inf(1)
		}
		return eps <= targetEps, math.Log(eps) - lt
	}
	// Bracket: the constant schedule at the smallest and at the largest
	// relative multiplier bound the answer (ε falls as every c grows), so
	// start from the constant c and widen by factors of 2 if needed.
	c0, err := NoiseMultiplier(targetEps, delta, q, rounds)
	if err != nil {
		return nil, err
	}
	hi, lo := c0/minShape, c0/maxShape
	okHi, fhi := eval(hi)
	for !okHi {
		lo = hi
		hi *= 2
		if hi*maxShape > MaxNoiseMultiplier {
			return nil, fmt.Errorf("%w: schedule %q at ε=%g, δ=%g, q=%g, T=%d needs c > %g",
				ErrUnreachable, s.String(), targetEps, delta, q, rounds, float64(MaxNoiseMultiplier))
		}
		okHi, fhi = eval(hi)
	}
	okLo, flo := eval(lo)
	for okLo {
		hi, fhi = lo, flo
		lo /= 2
		if lo*minShape < minSearchC {
			return scaled(shape, hi), nil
		}
		okLo, flo = eval(lo)
	}
	// ε(lo) > target ≥ ε(hi): regula falsi on (log k, f), Illinois
	// variant, with bisection when the bracket does not halve.
	side, slow := 0, 0
	for hi-lo > scheduleRelPrecision*hi {
		width := hi - lo
		var x float64
		if slow >= 3 || math.IsInf(flo, 0) || math.IsInf(fhi, 0) || !(flo > fhi) {
			x, slow = math.Sqrt(lo*hi), 0
		} else {
			ul, uh := math.Log(lo), math.Log(hi)
			x = math.Exp(ul + flo*(uh-ul)/(flo-fhi))
		}
		m := 0.25 * scheduleRelPrecision * hi
		x = math.Max(lo+m, math.Min(hi-m, x))
		ok, f := eval(x)
		if ok {
			if side == 1 {
				flo /= 2
			}
			hi, fhi, side = x, f, 1
		} else {
			if side == -1 {
				fhi /= 2
			}
			lo, flo, side = x, f, -1
		}
		if hi-lo > width/2 {
			slow++
		} else {
			slow = 0
		}
	}
	return scaled(shape, hi), nil
}

func scaled(shape []float64, k float64) []float64 {
	out := make([]float64, len(shape))
	for i, v := range shape {
		out[i] = k * v
	}
	return out
}

// MultiplierAt returns c_t, the noise multiplier of round t (1-based) of a
// study with noise multiplier c and, if not empty, the calibrated schedule
// (schedule[t−1]; c for a round outside it). The one reading of a study's
// noise: coordinator, LHA and helper all call it.
func MultiplierAt(c float64, schedule []float64, round int) float64 {
	if round >= 1 && round <= len(schedule) {
		return schedule[round-1]
	}
	return c
}

// RoundEvents returns the privacy events of the first rounds rounds of a
// study with sampling rate q, noise multiplier c and, if not empty, the
// calibrated schedule: one Event per run of rounds with the same c_t
// (ScheduleEvents). Composing them is composing the rounds one by one.
func RoundEvents(q, c float64, schedule []float64, rounds int) []Event {
	if len(schedule) == 0 {
		return []Event{{SampleRate: q, NoiseMultiplier: c, Rounds: rounds}}
	}
	return ScheduleEvents(q, schedule[:min(rounds, len(schedule))])
}
