package privacy_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

func TestChecks(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name  string
		check func(float64) error
		good  []float64
		bad   []float64
		param string
	}{
		{"epsilon", privacy.CheckEpsilon, []float64{1e-9, 1, 50, inf}, []float64{0, -1, nan, -inf}, "epsilon"},
		{"delta", privacy.CheckDelta, []float64{1e-300, 1e-5, 0.999}, []float64{0, 1, -1e-5, nan, inf, -inf}, "delta"},
		{"q", privacy.CheckSampleRate, []float64{1e-9, 0.25, 1}, []float64{0, 1.0000001, -0.1, nan, inf}, "sample rate"},
		{"c", privacy.CheckNoiseMultiplier, []float64{1e-9, 4.88, privacy.MaxNoiseMultiplier}, []float64{0, -1, 2 * privacy.MaxNoiseMultiplier, nan, inf}, "noise multiplier"},
		{"S", privacy.CheckClipNorm, []float64{1e-300, 0.5, 1e300}, []float64{0, -0.5, nan, inf, -inf}, "clip norm"},
	} {
		for _, v := range tc.good {
			if err := tc.check(v); err != nil {
				t.Errorf("%s(%v): %v", tc.name, v, err)
			}
		}
		for _, v := range tc.bad {
			err := tc.check(v)
			var pe *privacy.ParamError
			if !errors.Is(err, privacy.ErrInvalidParameter) || !errors.As(err, &pe) {
				t.Errorf("%s(%v) = %v, want a *ParamError", tc.name, v, err)
				continue
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "privacy: "+tc.param) || !strings.Contains(msg, "must be in") {
				t.Errorf("%s(%v): message %q does not name the parameter and its range", tc.name, v, msg)
			}
		}
	}
	for _, T := range []int{1, 75, privacy.MaxRounds} {
		if err := privacy.CheckRounds(T); err != nil {
			t.Errorf("CheckRounds(%d): %v", T, err)
		}
	}
	for _, T := range []int{0, -1, privacy.MaxRounds + 1} {
		if err := privacy.CheckRounds(T); !errors.Is(err, privacy.ErrInvalidParameter) {
			t.Errorf("CheckRounds(%d) = %v", T, err)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	paper := privacy.Params{Epsilon: 2, Delta: 1e-5, SampleRate: 0.25, NoiseMultiplier: 4.8828125, ClipNorm: 0.5, Rounds: 75}
	if err := paper.Validate(); err != nil {
		t.Fatalf("paper params: %v", err)
	}
	nonDP := privacy.Params{Epsilon: math.Inf(1), Rounds: 75}
	if err := nonDP.Validate(); err != nil {
		t.Fatalf("non-DP params: %v", err)
	}
	mod := func(f func(*privacy.Params)) privacy.Params { p := paper; f(&p); return p }
	for _, tc := range []struct {
		name string
		p    privacy.Params
		want error
		word string
	}{
		{"eps NaN", mod(func(p *privacy.Params) { p.Epsilon = math.NaN() }), privacy.ErrInvalidParameter, "epsilon"},
		{"delta 0", mod(func(p *privacy.Params) { p.Delta = 0 }), privacy.ErrInvalidParameter, "delta"},
		{"q Inf", mod(func(p *privacy.Params) { p.SampleRate = math.Inf(1) }), privacy.ErrInvalidParameter, "sample rate"},
		{"c NaN", mod(func(p *privacy.Params) { p.NoiseMultiplier = math.NaN() }), privacy.ErrInvalidParameter, "noise multiplier"},
		{"S -Inf", mod(func(p *privacy.Params) { p.ClipNorm = math.Inf(-1) }), privacy.ErrInvalidParameter, "clip norm"},
		{"T 0", mod(func(p *privacy.Params) { p.Rounds = 0 }), privacy.ErrInvalidParameter, "rounds"},
		{"non-DP T 0", privacy.Params{Epsilon: math.Inf(1)}, privacy.ErrInvalidParameter, "rounds"},
		{"over budget", mod(func(p *privacy.Params) { p.Epsilon = 1.99 }), privacy.ErrBudgetExhausted, "ε="},
		{"more rounds", mod(func(p *privacy.Params) { p.Rounds = 76 }), privacy.ErrBudgetExhausted, "T=76"},
	} {
		err := tc.p.Validate()
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.word) {
			t.Errorf("%s: %v, want %v mentioning %q", tc.name, err, tc.want, tc.word)
		}
	}
}
