package study

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/internal/fltest"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// researchPair opens the small study twice in research mode (seed 42)
// from the same initial model: one engine for the in-process driver, one
// to play by hand.
func researchPair(t *testing.T, n int) (*File, [2]*Engine, []fl.ClientData) {
	t.Helper()
	f, _, _ := small(t, n)
	init := make([]float64, nn.NewMLP(f.Layers()...).NumParams())
	nn.NewMLP(f.Layers()...).Init(init, fl.NewRand(9, fl.StreamInit))
	c, err := f.Calibrate()
	if err != nil {
		t.Fatal(err)
	}
	var es [2]*Engine
	for i := range es {
		seed := uint64(42)
		if es[i], err = OpenResearch(f, init, c, &seed, time.Unix(1e9, 0)); err != nil {
			t.Fatal(err)
		}
	}
	return f, es, clientData(n, f.History)
}

// TestInProcessMatchesEngine: the in-process driver (the Coordinator over
// a loopback, updates as frames) releases, round by round, the models the
// engine gives when it is fed the same updates by hand, whatever the
// number of workers, and OnRound sees every released round.
func TestInProcessMatchesEngine(t *testing.T) {
	for _, workers := range []int{1, 3} {
		f, es, data := researchPair(t, 8)
		var got []protocol.Event
		var models [][]float64
		trainers := make([]*nn.Trainer, workers)
		drv := &InProcess{Engine: es[0], Workers: workers,
			Train: func(w, lha, _ int, global, dst []float64) bool {
				if trainers[w] == nil {
					trainers[w] = nn.NewTrainer(es[0].Model)
				}
				fl.LocalUpdate(trainers[w], global, data[lha].X, data[lha].Y, es[0].Config, dst)
				return true
			},
			OnRound: func(ev protocol.Event, g []float64) {
				got = append(got, ev)
				models = append(models, slices.Clone(g))
			}}
		final, err := drv.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		play(t, es[1], data, f.Rounds)
		if len(got) != f.Rounds || es[0].Finished() != ReasonRounds {
			t.Fatalf("workers %d: %d rounds released, finished %q; want %d", workers, len(got), es[0].Finished(), f.Rounds)
		}
		want := es[1].Events()
		for r, ev := range got {
			if ev.ModelSHA256 != want[r].ModelSHA256 || ev.Epsilon != want[r].Epsilon || protocol.HashHex(models[r]) != ev.ModelSHA256 {
				t.Fatalf("workers %d, round %d: released %+v, by hand %+v", workers, r+1, ev, want[r])
			}
		}
		if !slices.Equal(final, es[1].Global()) {
			t.Fatalf("workers %d: final model differs from the engine played by hand", workers)
		}
		if drv.Dropped != 0 {
			t.Errorf("workers %d: %d updates dropped", workers, drv.Dropped)
		}
	}
}

// TestInProcessDropouts: an LHA that sends nothing (its own budget
// refused) and one whose update is not finite (no frame carries it) are
// dropouts, as in a live study: the rounds go on without them, and the
// update that could not be sent is counted.
func TestInProcessDropouts(t *testing.T) {
	f, es, data := researchPair(t, 8)
	tr := nn.NewTrainer(es[0].Model)
	drv := &InProcess{Engine: es[0], Workers: 1,
		Train: func(_, lha, _ int, global, dst []float64) bool {
			fl.LocalUpdate(tr, global, data[lha].X, data[lha].Y, es[0].Config, dst)
			switch lha {
			case 0:
				return false
			case 1:
				dst[0] = math.NaN()
			}
			return true
		}}
	final, err := drv.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Rounds() != f.Rounds || slices.ContainsFunc(final, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
		t.Fatalf("%d rounds, final model finite: %v", es[0].Rounds(), !slices.ContainsFunc(final, math.IsNaN))
	}
	// LHA 1 is sampled in some round with seed 42 (m = 4 of 8, 6 rounds):
	// its update cannot be sent there, and LHA 0's never arrives.
	st, err := es[0].store.Load()
	if err != nil {
		t.Fatal(err)
	}
	rejected, received, sampled := 0, 0, 0
	for _, p := range st.Participation {
		rejected, received, sampled = rejected+p.Rejected, received+p.Received, sampled+p.Sampled
	}
	if drv.Dropped == 0 || rejected != 0 {
		t.Errorf("dropped updates: driver counted %d, the coordinator rejected %d (want > 0 and 0)", drv.Dropped, rejected)
	}
	if received > sampled-drv.Dropped-1 {
		t.Errorf("%d updates received of %d sampled with %d not sent: LHA 0's absence is not seen", received, sampled, drv.Dropped)
	}
}

// TestInProcessCancel: a cancelled context stops the driver with its
// error and abandons the open round.
func TestInProcessCancel(t *testing.T) {
	_, es, data := researchPair(t, 8)
	ctx, cancel := context.WithCancel(context.Background())
	tr := nn.NewTrainer(es[0].Model)
	drv := &InProcess{Engine: es[0], Workers: 1,
		Train: func(_, lha, _ int, global, dst []float64) bool {
			fl.LocalUpdate(tr, global, data[lha].X, data[lha].Y, es[0].Config, dst)
			return true
		},
		OnRound: func(ev protocol.Event, _ []float64) {
			if ev.Round == 2 {
				cancel()
			}
		}}
	if _, err := drv.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	if r := es[0].Rounds(); r != 2 {
		t.Errorf("%d rounds committed after a cancel at round 2's release", r)
	}
	if _, err := (&InProcess{}).Run(context.Background()); err == nil {
		t.Error("Run without an engine did not fail")
	}
}

// BenchmarkDrivers runs one study of the paper's network (H = 10,
// 128-64-32, E = 30; 100 LHAs, m = 25, 20 rounds, c = 4.88) on the
// in-process driver (the Coordinator, frames and commits included: what
// `fedcast simulate` runs) and on fltest.Simulation (the transport-free
// reference loop), on the same data: the driver's overhead.
func BenchmarkDrivers(b *testing.B) {
	f, _, _ := small(b, 100)
	f.Rounds, f.ExpectedClients, f.History, f.Hidden, f.LocalEpochs, f.LearningRate = 20, 25, 10, []int{128, 64, 32}, 30, 1e-3
	f.Epsilon, f.ClipNorm = 2, 0.5
	const c = 4.8828125
	data := clientData(len(f.LHAs), f.History)
	m := nn.NewMLP(f.Layers()...)
	init := make([]float64, m.NumParams())
	m.Init(init, fl.NewRand(1, fl.StreamInit))
	b.Run("inprocess", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			seed := uint64(i)
			e, err := OpenResearch(f, init, c, &seed, time.Unix(0, 0))
			if err != nil {
				b.Fatal(err)
			}
			tr := nn.NewTrainer(m)
			drv := &InProcess{Engine: e, Workers: 1, Train: func(_, lha, _ int, global, dst []float64) bool {
				fl.LocalUpdate(tr, global, data[lha].X, data[lha].Y, e.Config, dst)
				return true
			}}
			if _, err := drv.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("simulation", func(b *testing.B) {
		cfg := fl.Config{Clients: len(f.LHAs), ExpectedClients: f.ExpectedClients, Rounds: f.Rounds, ClipNorm: f.ClipNorm,
			NoiseMultiplier: c, DP: true, LocalEpochs: f.LocalEpochs, LearningRate: f.LearningRate}
		for i := 0; i < b.N; i++ {
			sim := &fltest.Simulation{Model: m, Initial: init, Config: cfg, Clients: data, Epsilon: f.Epsilon, Delta: f.Delta, Seed: uint64(i), Workers: 1}
			if _, err := sim.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
