// Package fltest holds fl.Simulation's successor for tests only: the
// transport-free reference loop of a DP-FedAvg (or MR-MTL, or local
// DP-SGD) study that tests check the study engine against, bit for bit in
// research mode. No command runs it: `fedcast simulate` and `fedcast
// backtest` drive the study engine's Coordinator (study.InProcess), the
// one round driver.
package fltest

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
)

// Simulation runs a whole study in process, transport-free: the reference
// loop that tests check the study engine against (bit for bit in research
// mode). No command runs it: `fedcast simulate` and `fedcast backtest`
// drive the study engine's Coordinator with their LHAs in process
// (coordinator/study.InProcess), so that a round feature is written once.
// For a given Seed its result does not depend on Workers: each client's
// update is computed independently and the updates are summed in client
// order.
type Simulation struct {
	// Model is the architecture. Required.
	Model *nn.MLP
	// Initial, if set, is the initial global model (copied); otherwise
	// Model.Init draws one from the run's fl.StreamInit.
	Initial []float64
	// Config is the study setting. Config.Clients must equal len(Clients).
	Config fl.Config
	// Clients holds every enrolled client's training windows. Required.
	Clients []fl.ClientData
	// Epsilon is the budget at Delta; +Inf in non-DP mode.
	Epsilon, Delta float64
	// Seed derives the streams for the initial model, sampling and noise
	// (see fl.NewRand). Simulations are research runs: their noise is
	// reproducible, never use one for a release.
	Seed uint64
	// Workers is the number of goroutines training clients; 0 means
	// runtime.GOMAXPROCS(0). With a fl.Pool it is the most this simulation
	// uses at once: the goroutine calling Run plus helpers that each take
	// a slot of the pool for one round.
	Workers int
	// Pool, if set, is shared by simulations running at the same time (an
	// experiment's runs) so that together they never train on more
	// goroutines than the pool has slots. The goroutine calling Run must
	// hold a slot of its own (fl.Pool.Acquire) for the whole call.
	Pool *fl.Pool
	// OnRound, if set, is called after each committed round with its event
	// and the new global model (which must not be retained or modified).
	OnRound func(ev fl.Event, global []float64)

	// Strategy, Lambda and Example choose how clients train (see
	// newClientStates): fl.FedAvg ("") or fl.MRMTL with
	// penalty Lambda, and local DP-SGD with setting Example (nil: none).
	Strategy fl.StrategyName
	Lambda   float64
	Example  *fl.ExampleDP
	// ClientStates holds, after Run, each client's state (personal model,
	// local accountant); nil for fl.FedAvg without local DP-SGD.
	ClientStates []*fl.Client
}

// Run executes all rounds and returns the final state. It stops early with
// ctx's error when ctx is cancelled.
func (s *Simulation) Run(ctx context.Context) (*fl.Server, error) {
	cfg := s.Config
	if len(s.Clients) != cfg.Clients {
		return nil, configErr("the simulation has %d clients' data but Config.Clients is %d", len(s.Clients), cfg.Clients)
	}
	dim := s.Model.NumParams()
	global := make([]float64, dim)
	if s.Initial != nil {
		if len(s.Initial) != dim {
			return nil, configErr("the initial model has %d values, the architecture %d", len(s.Initial), dim)
		}
		copy(global, s.Initial)
	} else {
		s.Model.Init(global, fl.NewRand(s.Seed, fl.StreamInit))
	}
	budget := s.Epsilon
	if !cfg.DP {
		budget = math.Inf(1)
	}
	srv, err := fl.NewServer(cfg, global, budget, s.Delta)
	if err != nil {
		return nil, err
	}
	sampling := fl.NewRand(s.Seed, fl.StreamSampling)
	noise := fl.NewRand(s.Seed, fl.StreamNoise)
	agg := fl.NewAggregator(cfg, dim)

	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Trainers are made when a goroutine first needs one: with a shared
	// pool, most runs of a large experiment never get a helper.
	trainers := make([]*nn.Trainer, workers)
	trainers[0] = nn.NewTrainer(s.Model)
	if err := s.newClientStates(); err != nil {
		return nil, err
	}
	var updates [][]float64
	var refused []bool
	for srv.Round < cfg.Rounds {
		if err := ctx.Err(); err != nil {
			return srv, err
		}
		if len(cfg.NoiseSchedule) > 0 {
			// A noise schedule: this round's lattice and noise are c_t's.
			agg = fl.NewAggregator(cfg.AtRound(srv.Round+1), dim)
		}
		sampled := srv.Sample(sampling)
		for len(updates) < len(sampled) {
			updates = append(updates, make([]float64, dim))
			refused = append(refused, false)
		}
		s.train(trainers, srv.Global, srv.Round+1, sampled, updates, refused)
		for i := range sampled {
			if refused[i] {
				continue // the client's own budget refused: it sent nothing
			}
			if err := agg.Add(updates[i]); err != nil {
				// Local training diverged (NaN/Inf): the client's update is
				// rejected exactly as the coordinator would, and it counts
				// as a dropout.
				continue
			}
		}
		ev, err := srv.Commit(agg, noise)
		if err != nil {
			return srv, err
		}
		if s.OnRound != nil {
			s.OnRound(ev, srv.Global)
		}
	}
	return srv, nil
}

// train computes the updates of the sampled clients into updates[i], on
// the calling goroutine and up to len(trainers)−1 helpers (with a Pool, only
// as many helpers as it has free slots). Clients are handed out one at a
// time, so the fastest goroutine takes the most; each update depends only
// on its client and the global model, so the result is the same whoever
// computes it.
func (s *Simulation) train(trainers []*nn.Trainer, global []float64, round int, sampled []int, updates [][]float64, refused []bool) {
	var next atomic.Int64
	work := func(t *nn.Trainer) {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(sampled) {
				return
			}
			d := s.Clients[sampled[i]]
			if s.ClientStates == nil {
				fl.LocalUpdate(t, global, d.X, d.Y, s.Config, updates[i])
				continue
			}
			refused[i] = s.clientUpdate(t, global, round, sampled[i], updates[i]) != nil
		}
	}
	var wg sync.WaitGroup
	for h := 1; h < len(trainers) && h < len(sampled); h++ {
		if s.Pool != nil && !s.Pool.TryAcquire() {
			break
		}
		if trainers[h] == nil {
			trainers[h] = nn.NewTrainer(s.Model)
		}
		wg.Add(1)
		go func(t *nn.Trainer) {
			defer wg.Done()
			if s.Pool != nil {
				defer s.Pool.Release()
			}
			work(t)
		}(trainers[h])
	}
	work(trainers[0])
	wg.Wait()
}

// newClientStates makes every client's state when the simulation needs
// one (MR-MTL, or local DP-SGD); fl.FedAvg without local DP-SGD keeps none
// and trains exactly as fl.LocalUpdate.
func (s *Simulation) newClientStates() error {
	s.ClientStates = nil
	if (s.Strategy == "" || s.Strategy == fl.FedAvg) && s.Example == nil {
		return nil
	}
	if err := fl.CheckLambda(s.Lambda); err != nil {
		return err
	}
	states := make([]*fl.Client, len(s.Clients))
	for i := range states {
		c, err := fl.NewClient(s.Strategy, s.Lambda, s.Example)
		if err != nil {
			return err
		}
		states[i] = c
	}
	s.ClientStates = states
	return nil
}

// clientUpdate trains client k in round round (1-based) through its state,
// with local DP-SGD randomness from fl.ClientRand (independent per client and
// round). A non-nil error is the client's refusal (its own budget).
func (s *Simulation) clientUpdate(t *nn.Trainer, global []float64, round, k int, dst []float64) error {
	d := s.Clients[k]
	_, err := s.ClientStates[k].Update(t, global, d.X, d.Y, s.Config, dst,
		fl.ClientRand(s.Seed, fl.StreamExampleBatches, k, round), fl.ClientRand(s.Seed, fl.StreamExampleNoise, k, round), nil)
	return err
}

// PersonalModel writes into dst the model client k forecasts with after
// Run: its MR-MTL personal model pulled towards global, or global.
func (s *Simulation) PersonalModel(k int, global, dst []float64) {
	if s.ClientStates == nil {
		copy(dst, global)
		return
	}
	s.ClientStates[k].Model(global, s.Config, dst)
}

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{fl.ErrConfig}, a...)...)
}
