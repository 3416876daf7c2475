package protocol

import (
	"fmt"
	"math"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
)

// StrategyParams are the study parameters that choose how the LHAs train
// together and what the differential privacy protects (docs/strategies.md).
// The study file has them (study-file fields of the same names) and the
// Study sent to clients carries them with the calibration (StudyStrategy).
// The zero value is DP-FedAvg with client-level DP, as before the fields
// existed.
type StrategyParams struct {
	// Strategy is "fedavg" (default when empty), "mrmtl" or "cyclic".
	Strategy string `json:"strategy,omitempty"`
	// Lambda is MR-MTL's penalty λ ≥ 0 (finite: JSON has no infinity; a
	// large λ such as 1e6 is FedAvg to the precision that matters).
	Lambda float64 `json:"lambda,omitempty"`
	// Privacy is "client" (default when empty), "example" or "both":
	// client-level DP-FedAvg; local DP-SGD in every LHA with its own
	// example-level budget ExampleEpsilon and a coordinator that only
	// averages (no client-level noise or budget: it sees every sampled
	// LHA's update, docs/privacy.md); or both composed.
	Privacy string `json:"privacy,omitempty"`
	// ExampleEpsilon is each LHA's example-level ε (privacy "example" and "both").
	ExampleEpsilon float64 `json:"example_epsilon,omitempty"`
	// ExampleDelta is its δ; 0 means the study's δ.
	ExampleDelta float64 `json:"example_delta,omitempty"`
	// ExampleRate is local DP-SGD's Poisson batch rate q_local; 0 means
	// fl.DefaultExampleSampleRate.
	ExampleRate float64 `json:"example_rate,omitempty"`
	// ExampleClip is the L2 bound C on one window's gradient; 0 means
	// fl.DefaultExampleClip.
	ExampleClip float64 `json:"example_clip,omitempty"`
}

// StudyStrategy is StrategyParams with the local DP-SGD calibration the
// coordinator computed (each client checks it with its own accountant).
type StudyStrategy struct {
	StrategyParams
	// ExampleNoiseMultiplier is local DP-SGD's c; ExampleSteps the steps
	// it covers (E·T). Both 0 without local DP-SGD.
	ExampleNoiseMultiplier float64 `json:"example_noise_multiplier,omitempty"`
	ExampleSteps           int     `json:"example_steps,omitempty"`
}

// StrategyKind returns the strategy (FedAvg when empty).
func (p StrategyParams) StrategyKind() (fl.StrategyName, error) {
	st, err := fl.ParseStrategy(p.Strategy)
	if err != nil {
		return "", fmt.Errorf("protocol: study: %w", err)
	}
	return st, nil
}

// Sequential reports whether the study's strategy hands the model from
// LHA to LHA in turns (fl.Strategy.Sequential): every LHA takes part in
// every round (m = N), and there is no sum to split between two servers,
// no campaign schedule and no top-up. An unknown strategy is not
// sequential (Validate refuses it).
func (p StrategyParams) Sequential() bool {
	st, err := fl.ParseStrategy(p.Strategy)
	if err != nil {
		return false
	}
	s, err := fl.LookupStrategy(st)
	return err == nil && s.Sequential()
}

// Guarantee returns the privacy level (client-level when empty).
func (p StrategyParams) Guarantee() (fl.Guarantee, error) {
	g, err := fl.ParseGuarantee(p.Privacy)
	if err != nil {
		return "", fmt.Errorf("protocol: study: %w", err)
	}
	return g, nil
}

// CheckStrategy validates the parameters of a live study: strategy fedavg,
// mrmtl or cyclic (each LHA trains in turn; the study file also needs
// expected_clients = N), a finite λ ≥ 0, privacy client, example or both, and with
// "example" or "both" an example-level ε > 0 and valid δ, rate and clip
// (0 = default). Errors name the field.
func (p StrategyParams) CheckStrategy() error {
	st, err := p.StrategyKind()
	if err != nil {
		return err
	}
	if !(p.Lambda >= 0) || math.IsInf(p.Lambda, 0) {
		return fmt.Errorf("protocol: study: lambda is %v, must be a finite number ≥ 0", p.Lambda)
	}
	if p.Lambda != 0 && st != fl.MRMTL {
		return fmt.Errorf("protocol: study: lambda %v is MR-MTL's penalty, the strategy is %s", p.Lambda, st)
	}
	g, err := p.Guarantee()
	if err != nil {
		return err
	}
	if g == fl.ClientLevel {
		if p.ExampleEpsilon != 0 || p.ExampleDelta != 0 || p.ExampleRate != 0 || p.ExampleClip != 0 {
			return fmt.Errorf("protocol: study: example_* fields set local DP-SGD, which privacy %q does not run (use \"example\" or \"both\")", g)
		}
		return nil
	}
	if !(p.ExampleEpsilon > 0) || math.IsInf(p.ExampleEpsilon, 0) {
		return fmt.Errorf("protocol: study: example_epsilon is %v; privacy %q needs each LHA's finite example-level ε > 0", p.ExampleEpsilon, g)
	}
	if p.ExampleDelta != 0 {
		if err := privacy.CheckDelta(p.ExampleDelta); err != nil {
			return fmt.Errorf("protocol: study: example_delta: %w", err)
		}
	}
	if p.ExampleRate != 0 {
		if err := privacy.CheckSampleRate(p.ExampleRate); err != nil {
			return fmt.Errorf("protocol: study: example_rate: %w", err)
		}
	}
	if p.ExampleClip != 0 {
		if err := privacy.CheckClipNorm(p.ExampleClip); err != nil {
			return fmt.Errorf("protocol: study: example_clip: %w", err)
		}
	}
	return nil
}

// Calibrate checks p and returns it with local DP-SGD calibrated for
// rounds·epochs steps at the study's δ (when ExampleDelta is 0) and
// accountant kind, defaults filled in.
func (p StrategyParams) Calibrate(rounds, epochs int, delta float64, kind privacy.AccountantKind) (StudyStrategy, error) {
	if err := p.CheckStrategy(); err != nil {
		return StudyStrategy{}, err
	}
	s := StudyStrategy{StrategyParams: p}
	if g, _ := p.Guarantee(); g == fl.ClientLevel {
		return s, nil
	}
	s.ExampleDelta, s.ExampleRate, s.ExampleClip = fl.ExampleDefaults(s.ExampleDelta, s.ExampleRate, s.ExampleClip, delta)
	ex, err := fl.NewExampleDP(s.ExampleEpsilon, s.ExampleDelta, s.ExampleRate, s.ExampleClip, rounds*epochs, kind)
	if err != nil {
		return StudyStrategy{}, fmt.Errorf("protocol: study: local DP-SGD: %w", err)
	}
	s.ExampleNoiseMultiplier, s.ExampleSteps = ex.NoiseMultiplier, ex.Steps
	return s, nil
}

// ExampleDP returns the local DP-SGD setting (nil under client-level
// privacy), checked: a client refuses a study whose calibration its own
// accountant does not confirm (ε of the steps within the budget).
func (s StudyStrategy) ExampleDP(kind privacy.AccountantKind) (*fl.ExampleDP, error) {
	if err := s.CheckStrategy(); err != nil {
		return nil, err
	}
	if g, _ := s.Guarantee(); g == fl.ClientLevel {
		return nil, nil
	}
	e := fl.ExampleDP{Epsilon: s.ExampleEpsilon, Delta: s.ExampleDelta, SampleRate: s.ExampleRate, ClipNorm: s.ExampleClip,
		NoiseMultiplier: s.ExampleNoiseMultiplier, Steps: s.ExampleSteps, Accountant: kind}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("protocol: study: local DP-SGD setting: %w", err)
	}
	return &e, nil
}

// NewClient returns a client's state for the study's strategy and
// privacy level (MR-MTL personal model, local DP-SGD accountant).
func (s StudyStrategy) NewClient(kind privacy.AccountantKind) (*fl.Client, error) {
	st, err := s.StrategyKind()
	if err != nil {
		return nil, err
	}
	ex, err := s.ExampleDP(kind)
	if err != nil {
		return nil, err
	}
	return fl.NewClient(st, s.Lambda, ex)
}

// ClientLevelDP reports whether the coordinator adds client-level noise and
// keeps a client-level budget: privacy "client" or "both". Under
// "example" it only averages the LHAs' locally privatised updates.
func (p StrategyParams) ClientLevelDP() bool { return p.Privacy != string(fl.ExampleLevel) }
