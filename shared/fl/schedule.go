package fl

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/privacy"
)

// NoiseMultiplierAt returns c_t, the noise multiplier of round t (1-based):
// NoiseSchedule[t−1] when the study has a schedule, NoiseMultiplier
// otherwise (0 in non-DP mode).
func (c Config) NoiseMultiplierAt(round int) float64 {
	return privacy.MultiplierAt(c.NoiseMultiplier, c.NoiseSchedule, round)
}

// AtRound returns the constant-noise configuration of round t: c with
// NoiseMultiplier = c_t and no schedule. An Aggregator for round t is made
// from it (its lattice depends on c_t).
func (c Config) AtRound(round int) Config {
	r := c
	r.NoiseMultiplier = c.NoiseMultiplierAt(round)
	r.NoiseSchedule = nil
	return r
}

// SigmaAt returns σ_t = c_t·S/m, the standard deviation of round t's noise
// on the mean update (0 in non-DP mode).
func (c Config) SigmaAt(round int) float64 { return c.AtRound(round).Sigma() }

// PrivacyEvents returns the privacy history of the first rounds rounds:
// one privacy.Event per run of rounds with the same (q, c_t). Composing
// them is composing the rounds one by one (privacy.ScheduleEvents).
func (c Config) PrivacyEvents(rounds int) []privacy.Event {
	return privacy.RoundEvents(c.SampleRate(), c.NoiseMultiplier, c.NoiseSchedule, rounds)
}

// validateSchedule checks NoiseSchedule (see the field).
func (c Config) validateSchedule() error {
	if len(c.NoiseSchedule) == 0 {
		return nil
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: noise schedule: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if !c.DP {
		return bad("given with DP off")
	}
	if len(c.NoiseSchedule) != c.Rounds {
		return bad("%d multipliers for T=%d rounds", len(c.NoiseSchedule), c.Rounds)
	}
	least := c.NoiseSchedule[0]
	for t, v := range c.NoiseSchedule {
		if err := privacy.CheckNoiseMultiplier(v); err != nil {
			return bad("round %d: %v", t+1, err)
		}
		if _, err := privacy.NewLattice(c.ClipNorm, v); err != nil {
			return bad("round %d: %v", t+1, err)
		}
		least = min(least, v)
	}
	if c.NoiseMultiplier != least {
		return bad("noise multiplier %v, must be the schedule's smallest, %v", c.NoiseMultiplier, least)
	}
	return nil
}

// WithSchedule returns c with the per-round multipliers cs (len T, from
// privacy.Schedule.Calibrate): NoiseSchedule = cs and NoiseMultiplier their
// smallest. A constant cs gives a plain constant-noise configuration (no
// schedule), so that studies without one are unchanged.
func (c Config) WithSchedule(cs []float64) Config {
	if len(cs) == 0 {
		return c
	}
	least, constant := cs[0], true
	for _, v := range cs {
		least = min(least, v)
		constant = constant && v == cs[0]
	}
	c.NoiseMultiplier = least
	c.NoiseSchedule = nil
	if !constant {
		c.NoiseSchedule = append([]float64(nil), cs...)
	}
	return c
}
