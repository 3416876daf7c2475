package study

import (
	"fmt"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// Layers returns the MLP's layer sizes: H (the weekly design's inputs),
// the hidden sizes, the outputs (1 unless a quantile head).
func (f *File) Layers() []int {
	in, out := f.History, f.NetOutputs()
	if f.Weekly != nil {
		in = f.Weekly.Inputs()
	}
	return append(append([]int{in}, f.Hidden...), out)
}

// Calibrate returns the smallest noise multiplier c whose T rounds at
// q = m/N stay within (ε, δ) by the study's accountant
// (privacy.NoiseMultiplierFor); with a noise schedule, the smallest c_t of
// CalibrateSchedule. It fails for parameters the accountant cannot account
// for.
func (f *File) Calibrate() (float64, error) {
	if !f.ClientLevelDP() {
		return 0, nil // privacy "example": no client-level noise
	}
	sch, err := privacy.ParseSchedule(f.NoiseSchedule)
	if err != nil {
		return 0, fmt.Errorf("study: noise_schedule: %w", err)
	}
	if sch.IsConstant() {
		c, err := privacy.NoiseMultiplierFor(f.AccountantKind(), f.Epsilon, f.Delta, f.SampleRate(), f.Rounds)
		if err != nil {
			return 0, fmt.Errorf("study: cannot calibrate the noise: %w", err)
		}
		return c, nil
	}
	cs, err := f.CalibrateSchedule()
	if err != nil {
		return 0, err
	}
	return slices.Min(cs), nil
}

// CalibrateSchedule returns the noise multipliers c_1 … c_T of a study with
// a noise schedule: the rule's shape at the smallest scale whose exact
// composition meets (ε, δ) by the study's accountant, or the explicit list
// if it fits (privacy.Schedule.Calibrate). It returns nil for the constant
// schedule (every round has Calibrate's c). The calculation is
// deterministic: a restart recomputes the same multipliers, and the engine
// checks them against the ledger.
func (f *File) CalibrateSchedule() ([]float64, error) {
	sch, err := privacy.ParseSchedule(f.NoiseSchedule)
	if err != nil {
		return nil, fmt.Errorf("study: noise_schedule: %w", err)
	}
	if sch.IsConstant() {
		return nil, nil
	}
	cs, err := sch.Calibrate(f.AccountantKind(), f.Epsilon, f.Delta, f.SampleRate(), f.Rounds)
	if err != nil {
		return nil, fmt.Errorf("study: cannot calibrate the noise schedule %q: %w", f.NoiseSchedule, err)
	}
	return cs, nil
}

// Quorum returns how many LHAs must be online before round 1 and after a
// restart: StartQuorum, or N when it is 0.
func (f *File) Quorum() int {
	if f.StartQuorum == 0 {
		return len(f.LHAs)
	}
	return f.StartQuorum
}

// ResumeWait returns the longest wait for the quorum after a restart:
// RestartGrace, or one RoundLength when it is 0 (ample for clients that
// reconnect with a backoff of seconds).
func (f *File) ResumeWait() time.Duration {
	if f.RestartGrace > 0 {
		return time.Duration(f.RestartGrace)
	}
	return time.Duration(f.RoundLength)
}

// AccountantKind returns the study's accountant (RDP when none is named).
func (f *File) AccountantKind() privacy.AccountantKind {
	if f.Accountant == "" {
		return privacy.DefaultAccountant
	}
	return f.Accountant
}

// Window returns how long a round takes updates: RoundLength − RoundSlack.
func (f *File) Window() time.Duration { return time.Duration(f.RoundLength - f.RoundSlack) }

// SampleRate returns q = m/N.
func (f *File) SampleRate() float64 { return float64(f.ExpectedClients) / float64(len(f.LHAs)) }

// Config returns the fl configuration for noise multiplier c: that of the
// public view (protocol.Study.FLConfig), so that the coordinator and the
// LHAs map the parameters the same way.
func (f *File) Config(c float64) fl.Config {
	st := f.Public(c, false)
	cfg, err := st.FLConfig()
	if err != nil { // an accountant Validate would refuse
		cfg.Accountant = f.AccountantKind()
	}
	return cfg
}

// WindowOptions returns the series window options of the study (those of
// its public view: protocol.Study.WindowOptions).
func (f *File) WindowOptions() (series.WindowOptions, error) {
	st := f.Public(0, false)
	return st.WindowOptions()
}

// strategy is the study's strategy and privacy level with local DP-SGD
// calibrated for E steps in each of the T rounds (Validate has checked
// that it calibrates).
func (f *File) strategy() protocol.StudyStrategy {
	s, err := f.StrategyParams.Calibrate(f.Rounds, f.LocalEpochs, f.Delta, f.AccountantKind())
	if err != nil {
		panic(fmt.Sprintf("study: Public on an unvalidated file: %v", err))
	}
	return s
}
