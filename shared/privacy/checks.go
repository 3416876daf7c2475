package privacy

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors. Every error returned by a Check function wraps
// ErrInvalidParameter; test with errors.Is.
var (
	// ErrBudgetExhausted reports that a release would take the spent ε
	// above the study's budget.
	ErrBudgetExhausted = errors.New("privacy: budget exhausted")
	// ErrInvalidParameter is wrapped by every parameter check failure.
	ErrInvalidParameter = errors.New("privacy: invalid parameter")
	// ErrUnreachable reports that no noise multiplier in the search bracket
	// achieves the requested ε (the target is below what the orders of the
	// accountant can certify, or would need c above MaxNoiseMultiplier).
	ErrUnreachable = errors.New("privacy: target epsilon unreachable")
)

// ParamError names a parameter that failed a check, its value and the range
// it must lie in. It wraps ErrInvalidParameter.
type ParamError struct {
	Name  string  // parameter, e.g. "delta"
	Value float64 // offending value
	Range string  // allowed range, e.g. "(0, 1)"
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("privacy: %s = %v, must be in %s", e.Name, e.Value, e.Range)
}

// Unwrap returns ErrInvalidParameter.
func (e *ParamError) Unwrap() error { return ErrInvalidParameter }

// MaxNoiseMultiplier bounds the noise multipliers CheckNoiseMultiplier
// accepts and NoiseMultiplier searches.
const MaxNoiseMultiplier = 1e6

// MaxRounds bounds the number of rounds CheckRounds accepts.
const MaxRounds = 1 << 30

func bad(name string, v float64, rng string) error {
	return &ParamError{Name: name, Value: v, Range: rng}
}

// CheckEpsilon checks a target ε: finite and > 0, or math.Inf(1), which
// means "non-DP" (no clipping, no noise) and is allowed only where a caller
// documents it (Params.Validate does).
func CheckEpsilon(eps float64) error {
	if math.IsInf(eps, 1) {
		return nil
	}
	if math.IsNaN(eps) || eps <= 0 || math.IsInf(eps, -1) {
		return bad("epsilon", eps, "(0, +Inf) or +Inf for non-DP")
	}
	return nil
}

// CheckDelta checks δ ∈ (0, 1).
func CheckDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return bad("delta", delta, "(0, 1)")
	}
	return nil
}

// CheckSampleRate checks the Poisson sampling rate q ∈ (0, 1].
func CheckSampleRate(q float64) error {
	if !(q > 0 && q <= 1) {
		return bad("sample rate q", q, "(0, 1]")
	}
	return nil
}

// CheckNoiseMultiplier checks c ∈ (0, MaxNoiseMultiplier].
func CheckNoiseMultiplier(c float64) error {
	if !(c > 0 && c <= MaxNoiseMultiplier) {
		return bad("noise multiplier c", c, fmt.Sprintf("(0, %g]", float64(MaxNoiseMultiplier)))
	}
	return nil
}

// CheckClipNorm checks the L2 clipping bound S: finite and > 0.
func CheckClipNorm(s float64) error {
	if !(s > 0 && s <= math.MaxFloat64) {
		return bad("clip norm S", s, "(0, +Inf)")
	}
	return nil
}

// CheckRounds checks the number of rounds T ∈ [1, MaxRounds].
func CheckRounds(t int) error {
	if t < 1 || t > MaxRounds {
		return bad("rounds T", float64(t), fmt.Sprintf("[1, %d]", MaxRounds))
	}
	return nil
}

// Params are the public privacy parameters of a DP-FedAvg study (spec §5).
type Params struct {
	// Epsilon is the target ε of the whole study. Required. math.Inf(1)
	// selects non-DP mode: no clipping, no noise, and the other fields
	// except Rounds are ignored.
	Epsilon float64
	// Delta is the δ of the (ε, δ) guarantee, in (0, 1). Required in DP
	// mode; the paper uses 1e-5.
	Delta float64
	// SampleRate is the Poisson sampling rate q = m/N ∈ (0, 1]. Required
	// in DP mode; the paper uses 0.25.
	SampleRate float64
	// NoiseMultiplier is c, the noise standard deviation in units of the
	// per-round sensitivity S/m (σ = c·S/m). Required in DP mode; obtain it
	// with NoiseMultiplier. Validate checks that (q, c, T) meet Epsilon.
	NoiseMultiplier float64
	// ClipNorm is S, the L2 bound every client update is clipped to.
	// Required in DP mode; the paper uses 0.5.
	ClipNorm float64
	// Rounds is T, the number of rounds the budget covers. Required.
	Rounds int
	// Accountant is the accountant Validate checks the budget with.
	// Defaults to DefaultAccountant (RDP).
	Accountant AccountantKind
}

// Validate checks every field (NaN and ±Inf rejected except Epsilon =
// +Inf) and, in DP mode, that the study's accounted ε with these
// (q, c, T, δ), by Accountant, does not exceed Epsilon. Errors wrap ErrInvalidParameter
// (a *ParamError names the field) or ErrBudgetExhausted.
func (p Params) Validate() error {
	if err := CheckEpsilon(p.Epsilon); err != nil {
		return err
	}
	if err := CheckRounds(p.Rounds); err != nil {
		return err
	}
	if math.IsInf(p.Epsilon, 1) {
		return nil
	}
	for _, err := range []error{
		CheckDelta(p.Delta),
		CheckSampleRate(p.SampleRate),
		CheckNoiseMultiplier(p.NoiseMultiplier),
		CheckClipNorm(p.ClipNorm),
	} {
		if err != nil {
			return err
		}
	}
	kind := p.Accountant
	if kind == "" {
		kind = DefaultAccountant
	}
	eps, err := EpsilonFor(kind, []Event{{p.SampleRate, p.NoiseMultiplier, p.Rounds}}, p.Delta)
	if err != nil {
		return err
	}
	if !(eps <= p.Epsilon) {
		return fmt.Errorf("%w: q=%g, c=%g, T=%d give ε=%.6g at δ=%g (%s accountant), above the target ε=%g",
			ErrBudgetExhausted, p.SampleRate, p.NoiseMultiplier, p.Rounds, eps, p.Delta, kind, p.Epsilon)
	}
	return nil
}
