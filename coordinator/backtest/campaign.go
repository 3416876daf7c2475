package backtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// openEngine opens campaign k as a study in memory (study.OpenResearch):
// a study file with the schedule's T, m, S, E and learning rate and one
// enrolled LHA per area, and a genesis holding the campaign's initial
// model and the lifetime noise multiplier c, so that the engine
// calibrates nothing itself and its own budget gate (the lifetime ε) is
// never the binding one. Without noise (ε = ∞) the file says privacy
// "example": the coordinator then averages, adds no noise and keeps no
// client-level budget (a study file has no form without DP; the replay's
// LHAs run no local DP-SGD).
func (rp *replay) openEngine(k int, init []float64) (*study.Engine, error) {
	rec := rp.o.Design.Recipe()
	layers := rp.o.Design.Layers()
	f := &study.File{Version: study.FileVersion,
		AdminTokenSHA256: study.HashToken("backtest"),
		Settings: protocol.Settings{Name: fmt.Sprintf("backtest campaign %d", k+1),
			Epsilon: rp.sch.Epsilon, Delta: rp.sch.Delta, Accountant: rp.sch.Accountant,
			Rounds: rp.sch.RoundsOf(k), ExpectedClients: rp.sch.ExpectedClients, ClipNorm: rec.Clip,
			LocalEpochs: rec.LocalEpochs, LearningRate: rec.LearningRate, History: layers[0],
			Hidden: slices.Clone(layers[1 : len(layers)-1]), Horizon: WeekDays}}
	noNoise := rp.sch.NoiseMultiplier == 0
	if noNoise {
		f.Epsilon, f.Privacy, f.ExampleEpsilon = 0, string(fl.ExampleLevel), 1 // nominal: see above
	}
	// The file's features tell live clients what to compute; the replay's
	// LHAs run the design itself, so a design a study file cannot name
	// (the weekly design) leaves them out, and so does a replay without
	// noise (a Lipschitz study's coordinator projects what it releases;
	// without noise the replay releases the average as it is).
	if _, err := model.Parse(string(rec.Features)); err == nil && !noNoise {
		f.Features = string(rec.Features)
	}
	if out := layers[len(layers)-1]; out > 1 {
		f.Outputs = out // a quantile head
	}
	for _, d := range rp.lhas {
		f.LHAs = append(f.LHAs, study.LHA{Name: d.Regions[0].Name, TokenSHA256: study.HashToken("lha " + d.Regions[0].Name)})
	}
	f.Defaults()
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("backtest: campaign %d: %w", k+1, err)
	}
	var seed *uint64
	if rp.o.Seed != nil {
		s := *rp.o.Seed + uint64(k+1)*0x9e3779b97f4a7c15
		seed = &s
	}
	e, err := study.OpenResearch(f, init, rp.sch.NoiseMultiplier, seed, rp.sch.Starts[k])
	if err != nil {
		return nil, fmt.Errorf("backtest: campaign %d: %w", k+1, err)
	}
	return e, nil
}

// campaign runs campaign k from the design's initial model (given the
// previous campaign's model): each LHA's training set is cut from what it
// knew on the campaign's start, each sampled LHA computes its update in
// process, and the round engine aggregates, noises and commits.
func (rp *replay) campaign(k int, previous []float64) ([]float64, []privacy.Event, error) {
	start := rp.sch.Starts[k]
	layers := rp.o.Design.Layers()
	mlp := nn.NewMLP(layers...)
	init := make([]float64, mlp.NumParams())
	rp.o.Design.Init(init, previous)
	pub := rp.pub.Until(start)
	xs, ys := make([][]float64, len(rp.lhas)), make([][]float64, len(rp.lhas))
	err := rp.parallel(len(rp.lhas), func(_, i int) error {
		x, y, err := rp.o.Design.Training(Until(rp.lhas[i], start), pub)
		if err != nil {
			return fmt.Errorf("backtest: campaign %d, area %s: %w", k+1, rp.lhas[i].Regions[0].Name, err)
		}
		if in, out := layers[0], layers[len(layers)-1]; len(x)*out != len(y)*in {
			return fmt.Errorf("backtest: campaign %d, area %s: the design gave %d inputs for %d targets (%d inputs and %d outputs a window)", k+1, rp.lhas[i].Regions[0].Name, len(x), len(y), in, out)
		}
		xs[i], ys[i] = x, y
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	e, err := rp.openEngine(k, init)
	if err != nil {
		return nil, nil, err
	}
	// The campaign runs on the study engine's Coordinator, as `fedcast
	// serve` runs a live study: each sampled LHA computes its update in
	// process and sends it as a frame, the engine aggregates, noises and
	// commits.
	trainers := make([]*nn.Trainer, rp.o.Workers)
	for i := range trainers {
		trainers[i] = nn.NewTrainer(mlp)
	}
	cfg := e.Config
	drv := &study.InProcess{Engine: e, Workers: rp.o.Workers, Start: start,
		Train: func(w, lha, _ int, global, dst []float64) bool {
			localUpdate(rp.o.Design, trainers[w], global, xs[lha], ys[lha], cfg, dst)
			return true
		}}
	global, err := drv.Run(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("backtest: campaign %d: %w", k+1, err)
	}
	rp.progress("campaign %d of %d (%s): %d rounds, %d LHAs", k+1, len(rp.sch.Starts), start.Format(time.DateOnly), rp.sch.RoundsOf(k), len(rp.lhas))
	if !cfg.DP {
		return global, nil, nil
	}
	var events []privacy.Event
	for _, ev := range e.Events() {
		events = append(events, privacy.Event{SampleRate: ev.SampleRate, NoiseMultiplier: ev.NoiseMultiplier, Rounds: 1})
	}
	return global, events, nil
}
