package experiment

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
)

// checkStrategy validates the strategy and noise schedule of cfg and
// returns the parsed schedule.
func (c *Config) checkStrategy() (privacy.Schedule, error) {
	sched, err := privacy.ParseSchedule(c.NoiseSchedule)
	if err != nil {
		return privacy.Schedule{}, fmt.Errorf("experiment: --noise-schedule: %w", err)
	}
	if _, err := sched.Shape(c.Rounds); err != nil {
		return privacy.Schedule{}, fmt.Errorf("experiment: --noise-schedule: %w", err)
	}
	c.NoiseSchedule = sched.String()
	return sched, nil
}

// calibrate sets r's per-round noise multipliers for target ε eps: the
// schedule at the smallest scale that meets eps, composed exactly at
// sampling rate q (q = 1 for cyclic FL: each client's own T hand-offs, no
// sampling). NoiseMultiplier is the smallest of them (the constant c
// without a schedule) and EpsilonSpent the exact composition.
func (c *Config) calibrate(r *Result, sched privacy.Schedule, eps, q float64) error {
	cs, err := sched.Calibrate(c.Accountant, eps, c.Delta, q, c.Rounds)
	if err != nil {
		return fmt.Errorf("experiment: ε=%v: %w", eps, err)
	}
	least := cs[0]
	for _, v := range cs {
		least = min(least, v)
	}
	r.NoiseMultiplier = least
	if !sched.IsConstant() {
		r.NoiseSchedule = cs
	}
	if sched.IsConstant() && c.Accountant == privacy.AccountantRDP {
		spent, order := privacy.Epsilon(q, least, c.Rounds, c.Delta)
		r.EpsilonSpent, r.Order = fl.JSONFloat(spent), order
		return nil
	}
	spent, err := privacy.ScheduleEpsilon(c.Accountant, q, cs, c.Delta)
	if err != nil {
		return fmt.Errorf("experiment: ε=%v: %w", eps, err)
	}
	r.EpsilonSpent = fl.JSONFloat(spent)
	return nil
}
