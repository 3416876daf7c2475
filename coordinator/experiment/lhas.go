package experiment

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// lhas are one run's LHAs in process: each one's training windows and,
// under MR-MTL or local DP-SGD, its state (personal model, own
// accountant). They train as a live LHA does (fl.LocalUpdate, or
// fl.Client.Update with its DP-SGD randomness from fl.ClientRand).
type lhas struct {
	model    *nn.MLP
	cfg      fl.Config
	seed     uint64
	clients  []fl.ClientData
	states   []*fl.Client // nil: FedAvg or cyclic FL without local DP-SGD
	trainers []*nn.Trainer
}

// newLHAs makes the LHAs of a run with setting cfg, strategy o, local
// DP-SGD setting ex (nil: none) and seed, and one trainer slot per worker.
func newLHAs(m *nn.MLP, cfg fl.Config, clients []fl.ClientData, o StrategyOptions, ex *fl.ExampleDP, seed uint64, workers int) (*lhas, error) {
	l := &lhas{model: m, cfg: cfg, seed: seed, clients: clients, trainers: make([]*nn.Trainer, max(workers, 1))}
	if (o.Strategy == "" || o.Strategy == fl.FedAvg || o.Strategy == fl.Cyclic) && ex == nil {
		return l, nil
	}
	if err := fl.CheckLambda(float64(o.Lambda)); err != nil {
		return nil, err
	}
	l.states = make([]*fl.Client, len(clients))
	for i := range l.states {
		c, err := fl.NewClient(o.Strategy, float64(o.Lambda), ex)
		if err != nil {
			return nil, err
		}
		l.states[i] = c
	}
	return l, nil
}

// train is study.InProcess.Train: LHA k's update of round from global on
// worker w (a non-nil error of its own accountant: it sends nothing). In a
// cyclic study round is the turn (1 … T·N): the local DP-SGD streams of
// each of an LHA's turns are its own.
func (l *lhas) train(w, k, round int, global, dst []float64) bool {
	if w >= len(l.trainers) {
		panic(fmt.Sprintf("experiment: worker %d of %d", w, len(l.trainers)))
	}
	if l.trainers[w] == nil {
		l.trainers[w] = nn.NewTrainer(l.model)
	}
	t, d := l.trainers[w], l.clients[k]
	if l.states == nil {
		fl.LocalUpdate(t, global, d.X, d.Y, l.cfg, dst)
		return true
	}
	_, err := l.states[k].Update(t, global, d.X, d.Y, l.cfg, dst,
		fl.ClientRand(l.seed, fl.StreamExampleBatches, k, round), fl.ClientRand(l.seed, fl.StreamExampleNoise, k, round), nil)
	return err == nil
}

// personalModel writes into dst the model LHA k forecasts with: its
// MR-MTL personal model pulled towards global, or global.
func (l *lhas) personalModel(k int, global, dst []float64) {
	if l.states == nil {
		copy(dst, global)
		return
	}
	l.states[k].Model(global, l.cfg, dst)
}

// nominalExampleEpsilon stands in a study file for an example-level ε the
// file cannot carry: a run without any DP (ε = ∞), or local DP-SGD without
// noise. A study file has no form without DP; under privacy "example" the
// coordinator does exactly what a run without DP needs (it averages the
// updates, adds no noise and keeps no client-level budget), and the
// in-process LHAs train as the run says, whatever the file's example ε.
const nominalExampleEpsilon = 1

// studyFile is the run's setting as a study file, the one place an
// experiment maps onto one: N = the run's training areas, T, m, S, E, the
// learning rate, the network and windows, the client-level ε (the
// result's, with the noise schedule) or privacy "example", and the
// strategy. Its schedule (round_length 60 s) is virtual: the in-process
// driver's clock. Its name holds the run's seed, so that each run is a
// study of its own: a cyclic study's turn order comes from the file's
// hash (fl.CyclicOrder), as a live one's.
func (c *Config) studyFile(res *Result, names []string, seed uint64) *study.File {
	f := &study.File{Version: study.FileVersion,
		AdminTokenSHA256: study.HashToken("simulate"),
		Settings: protocol.Settings{Name: fmt.Sprintf("fedcast simulate, run seed %d", seed), Delta: c.Delta, Accountant: c.Accountant,
			Rounds: c.Rounds, ExpectedClients: c.ClientsPerRound, ClipNorm: c.Clip, LocalEpochs: c.LocalEpochs,
			LearningRate: c.LearningRate, History: c.History, Horizon: c.Horizon, Smoothing: smoothingName(c.Smoothing),
			TrainFraction: trainFraction, From: dateString(c.From), To: dateString(c.To), Hidden: slices.Clone(c.Hidden),
			Features: string(c.Features), Damping: c.Damping, RoundLength: study.Duration(study.DefaultRoundLength),
			RoundSlack: study.Duration(study.DefaultRoundLength / 10)}}
	for _, name := range names {
		f.LHAs = append(f.LHAs, study.LHA{Name: name, TokenSHA256: study.HashToken("lha " + name)})
	}
	switch {
	case c.Strategy == fl.Cyclic:
		f.Strategy = string(fl.Cyclic) // m = N (Run)
	case c.Strategy == fl.MRMTL && !math.IsInf(float64(c.Lambda), 0):
		f.Strategy, f.Lambda = string(fl.MRMTL), float64(c.Lambda) // the coordinator's side is FedAvg's either way
	}
	ex := res.exampleSetting()
	if eps := float64(res.Epsilon); !math.IsInf(eps, 1) {
		f.Epsilon = eps
		if sched, err := privacy.ParseSchedule(c.NoiseSchedule); err == nil && !sched.IsConstant() {
			f.NoiseSchedule = sched.String()
		}
		if ex != nil {
			f.Privacy = string(fl.BothLevels)
			f.ExampleEpsilon, f.ExampleDelta, f.ExampleRate, f.ExampleClip = ex.Epsilon, ex.Delta, ex.SampleRate, ex.ClipNorm
		}
		return f
	}
	f.Privacy, f.ExampleEpsilon = string(fl.ExampleLevel), nominalExampleEpsilon
	if ex != nil && !math.IsInf(ex.Epsilon, 1) {
		f.ExampleEpsilon, f.ExampleDelta, f.ExampleRate, f.ExampleClip = ex.Epsilon, ex.Delta, ex.SampleRate, ex.ClipNorm
	}
	return f
}

// runStart is the virtual time every in-process study starts at.
var runStart = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// train runs one study with cfg's strategy on the study engine's
// Coordinator (study.InProcess), the LHAs in process, and returns the
// final model. onRound sees each released round's number and model; in a
// cyclic study, whose engine releases every turn, each round's last turn
// (the turn order is the live study's: fl.CyclicOrder of the study file's
// hash).
func (c *Config) train(ctx context.Context, r *runParams) ([]float64, error) {
	seed := r.lhas.seed
	e, err := study.OpenResearch(c.studyFile(r.res, r.names, seed), r.initial, r.res.NoiseMultiplier, &seed, runStart)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	turns := 1 // released steps per round
	if c.Strategy == fl.Cyclic {
		turns = len(r.names)
	}
	drv := &study.InProcess{Engine: e, Train: r.lhas.train, Workers: c.Workers, Pool: r.pool, Start: runStart,
		OnRound: func(ev protocol.Event, g []float64) {
			if ev.Round%turns == 0 {
				r.onRound(ev.Round/turns, g)
			}
		}}
	return drv.Run(ctx)
}

// runParams are what train needs of one run.
type runParams struct {
	lhas    *lhas
	names   []string
	initial []float64
	res     *Result
	pool    *fl.Pool
	onRound func(round int, global []float64)
}
