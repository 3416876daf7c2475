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

// Simulation runs a whole study in process: the paper's experiments, and
// the reference the coordinator's live runs are checked against. For a given
// Seed its result does not depend on Workers: each client's update is
// computed independently and the updates are summed in client order.
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
	// runtime.GOMAXPROCS(0).
	Workers int
	// OnRound, if set, is called after each committed round with its event
	// and the new global model (which must not be retained or modified).
	OnRound func(ev Event, global []float64)
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
	trainers := make([]*nn.Trainer, workers)
	for i := range trainers {
		trainers[i] = nn.NewTrainer(s.Model)
	}
	var updates [][]float64
	for srv.Round < cfg.Rounds {
		if err := ctx.Err(); err != nil {
			return srv, err
		}
		sampled := srv.Sample(sampling)
		for len(updates) < len(sampled) {
			updates = append(updates, make([]float64, dim))
		}
		s.train(trainers, srv.Global, sampled, updates)
		for i := range sampled {
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

// train computes the updates of the sampled clients into updates[i], using
// up to len(trainers) goroutines.
func (s *Simulation) train(trainers []*nn.Trainer, global []float64, sampled []int, updates [][]float64) {
	if len(trainers) == 1 || len(sampled) < 2 {
		for i, c := range sampled {
			d := s.Clients[c]
			LocalUpdate(trainers[0], global, d.X, d.Y, s.Config, updates[i])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, t := range trainers {
		wg.Add(1)
		go func(t *nn.Trainer) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(sampled) {
					return
				}
				d := s.Clients[sampled[i]]
				LocalUpdate(t, global, d.X, d.Y, s.Config, updates[i])
			}
		}(t)
	}
	wg.Wait()
}

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
}
