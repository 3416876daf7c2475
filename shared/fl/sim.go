package fl

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fedcast/fedcast/shared/nn"
)

// ClientData is one client's training windows: X is n×H row-major, Y has n
// targets. The privacy unit is the client, however many windows it holds.
type ClientData struct {
	X, Y []float64
}

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
	// Model.Init draws one from the run's StreamInit.
	Initial []float64
	// Config is the study setting. Config.Clients must equal len(Clients).
	Config Config
	// Clients holds every enrolled client's training windows. Required.
	Clients []ClientData
	// Epsilon is the budget at Delta; +Inf in non-DP mode.
	Epsilon, Delta float64
	// Seed derives the streams for the initial model, sampling and noise
	// (see NewRand). Simulations are research runs: their noise is
	// reproducible, never use one for a release.
	Seed uint64
	// Workers is the number of goroutines training clients; 0 means
	// runtime.GOMAXPROCS(0). With a Pool it is the most this simulation
	// uses at once: the goroutine calling Run plus helpers that each take
	// a slot of the pool for one round.
	Workers int
	// Pool, if set, is shared by simulations running at the same time (an
	// experiment's runs) so that together they never train on more
	// goroutines than the pool has slots. The goroutine calling Run must
	// hold a slot of its own (Pool.Acquire) for the whole call.
	Pool *Pool
	// OnRound, if set, is called after each committed round with its event
	// and the new global model (which must not be retained or modified).
	OnRound func(ev Event, global []float64)

	// Strategy, Lambda and Example choose how clients train (see
	// Simulation.clients in simclients.go): FedAvg ("") or MRMTL with
	// penalty Lambda, and local DP-SGD with setting Example (nil: none).
	Strategy StrategyName
	Lambda   float64
	Example  *ExampleDP
	// ClientStates holds, after Run, each client's state (personal model,
	// local accountant); nil for FedAvg without local DP-SGD.
	ClientStates []*Client
}

// Run executes all rounds and returns the final state. It stops early with
// ctx's error when ctx is cancelled.
func (s *Simulation) Run(ctx context.Context) (*Server, error) {
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
		s.Model.Init(global, NewRand(s.Seed, StreamInit))
	}
	budget := s.Epsilon
	if !cfg.DP {
		budget = math.Inf(1)
	}
	srv, err := NewServer(cfg, global, budget, s.Delta)
	if err != nil {
		return nil, err
	}
	sampling := NewRand(s.Seed, StreamSampling)
	noise := NewRand(s.Seed, StreamNoise)
	agg := NewAggregator(cfg, dim)

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
			agg = NewAggregator(cfg.AtRound(srv.Round+1), dim)
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
				LocalUpdate(t, global, d.X, d.Y, s.Config, updates[i])
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

// A Pool is a fixed number of slots for goroutines that train clients,
// shared by the simulations of one experiment: each run holds one slot
// while it runs, and a run takes free slots for helpers round by round, so
// one run alone uses every core and many runs never oversubscribe them.
// A Pool is safe for concurrent use.
type Pool struct {
	slots chan struct{}
}

// NewPool returns a pool of n slots; n < 1 means runtime.GOMAXPROCS(0).
func NewPool(n int) *Pool {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Pool{slots: make(chan struct{}, n)}
}

// Size returns the number of slots.
func (p *Pool) Size() int { return cap(p.slots) }

// Acquire takes a slot, waiting until one is free or ctx is done (then it
// returns ctx's error and holds no slot).
func (p *Pool) Acquire(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryAcquire takes a slot if one is free and reports whether it did.
func (p *Pool) TryAcquire() bool {
	select {
	case p.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release returns a slot taken by Acquire or TryAcquire.
func (p *Pool) Release() { <-p.slots }

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
}
