package experiment

import (
	"context"
	"fmt"
	"math"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// checkStrategy validates the strategy and noise schedule of cfg and
// returns the parsed schedule.
func (c *Config) checkStrategy() (privacy.Schedule, error) {
	st, err := fl.ParseStrategy(string(c.Strategy))
	if err != nil {
		return privacy.Schedule{}, fmt.Errorf("experiment: %w", err)
	}
	if st != fl.FedAvg && st != fl.Cyclic {
		return privacy.Schedule{}, fmt.Errorf("experiment: strategy %q is not available in simulate yet (fedavg or cyclic)", st)
	}
	c.Strategy = st
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

// flConfig is the round engine's setting of one run at result r.
func (c *Config) flConfig(n int, r *Result) fl.Config {
	fcfg := fl.Config{
		Clients: n, ExpectedClients: c.ClientsPerRound, Rounds: c.Rounds,
		LocalEpochs: c.LocalEpochs, LearningRate: c.LearningRate,
	}
	if !math.IsInf(float64(r.Epsilon), 1) {
		fcfg.DP, fcfg.ClipNorm, fcfg.NoiseMultiplier = true, c.Clip, r.NoiseMultiplier
		fcfg.Accountant = c.Accountant
		fcfg = fcfg.WithSchedule(r.NoiseSchedule)
	}
	return fcfg
}

// train runs one study with cfg's strategy and returns the final model;
// onRound sees each round's number and model.
func (c *Config) train(ctx context.Context, net *nn.MLP, fcfg fl.Config, rd *runData, initial []float64,
	eps float64, seed uint64, pool *fl.Pool, onRound func(round int, g []float64)) ([]float64, error) {
	if c.Strategy == fl.Cyclic {
		sim := &fl.CyclicSimulation{
			Model: net, Config: fcfg, Clients: rd.clients, Initial: initial,
			Epsilon: eps, Delta: c.Delta, Seed: seed,
			OnRound: func(e fl.CyclicEvent, g []float64) { onRound(e.Round, g) },
		}
		w, _, err := sim.Run(ctx)
		return w, err
	}
	sim := &fl.Simulation{
		Model: net, Config: fcfg, Clients: rd.clients, Initial: initial,
		Epsilon: eps, Delta: c.Delta, Seed: seed, Workers: c.Workers, Pool: pool,
		OnRound: func(e fl.Event, g []float64) { onRound(e.Round, g) },
	}
	srv, err := sim.Run(ctx)
	if err != nil {
		return nil, err
	}
	return srv.Global, nil
}
