package backtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// rounds is what a campaign needs of a round engine: the live study's
// (study.Engine, as `fedcast serve` drives it) for a finite budget, or
// fl.Server without noise for ε = ∞ (a live study has no such mode).
type rounds interface {
	begin() (id int, sampled []int, err error)
	submit(lha, id int, w []float64) error
	complete() (global []float64, err error)
	config() fl.Config
	// events are the committed rounds' privacy events (none without
	// noise).
	events() []privacy.Event
}

// engineRounds drives a study.Engine.
type engineRounds struct {
	e     *study.Engine
	start time.Time
}

func (r *engineRounds) begin() (int, []int, error) {
	rd, err := r.e.BeginAt(r.start, nil)
	if err != nil {
		return 0, nil, err
	}
	return rd.ID, rd.Sampled, nil
}

func (r *engineRounds) submit(lha, id int, w []float64) error { return r.e.Submit(lha, id, w) }

func (r *engineRounds) complete() ([]float64, error) {
	res, err := r.e.CompleteAt(func() time.Time { return r.start })
	if err != nil {
		return nil, err
	}
	if err := r.e.Release(); err != nil {
		return nil, err
	}
	return slices.Clone(res.Weights), nil
}

func (r *engineRounds) config() fl.Config { return r.e.Config }

func (r *engineRounds) events() []privacy.Event {
	var out []privacy.Event
	for _, ev := range r.e.Events() {
		out = append(out, privacy.Event{SampleRate: ev.SampleRate, NoiseMultiplier: ev.NoiseMultiplier, Rounds: 1})
	}
	return out
}

// openEngine opens a campaign as a live study: a study file with the
// schedule's T, m, S, E and learning rate and one enrolled LHA per area,
// and a genesis (in a MemStore) holding the campaign's initial model and
// the lifetime noise multiplier c, so that the engine calibrates nothing
// itself and its own budget gate (the lifetime ε) is never the binding one.
func (rp *replay) openEngine(k int, init []float64) (*engineRounds, error) {
	rec := rp.o.Design.Recipe()
	layers := rp.o.Design.Layers()
	f := &study.File{
		Version:          study.FileVersion,
		AdminTokenSHA256: study.HashToken("backtest"),
		Settings: protocol.Settings{
			Name:            fmt.Sprintf("backtest campaign %d", k+1),
			Epsilon:         rp.sch.Epsilon,
			Delta:           rp.sch.Delta,
			Accountant:      rp.sch.Accountant,
			Rounds:          rp.sch.Rounds,
			ExpectedClients: rp.sch.ExpectedClients,
			ClipNorm:        rec.Clip,
			LocalEpochs:     rec.LocalEpochs,
			LearningRate:    rec.LearningRate,
			History:         layers[0],
			Hidden:          slices.Clone(layers[1 : len(layers)-1]),
			Horizon:         WeekDays,
		},
	}
	// The file's features tell live clients what to compute; the replay's
	// LHAs run the design itself, so a design a study file cannot name
	// (the weekly design) leaves them out.
	if _, err := model.Parse(string(rec.Features)); err == nil {
		f.Features = string(rec.Features)
	}
	for _, d := range rp.lhas {
		f.LHAs = append(f.LHAs, study.LHA{Name: d.Regions[0].Name, TokenSHA256: study.HashToken("lha " + d.Regions[0].Name)})
	}
	f.Defaults()
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("backtest: campaign %d: %w", k+1, err)
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	start := rp.sch.Starts[k]
	st := &study.MemStore{}
	g := &study.Genesis{Study: raw, StudySHA256: hex.EncodeToString(sum[:]), NoiseMultiplier: rp.sch.NoiseMultiplier,
		Clients: len(f.LHAs), Model: init, InsecureSeed: rp.o.Seed != nil, Created: start}
	if err := st.Init(g); err != nil {
		return nil, err
	}
	opt := &study.Options{Now: func() time.Time { return start }}
	if rp.o.Seed != nil {
		seed := *rp.o.Seed + uint64(k+1)*0x9e3779b97f4a7c15
		opt.InsecureSeed = &seed
	}
	e, err := study.Open(f, raw, st, opt)
	if err != nil {
		return nil, fmt.Errorf("backtest: campaign %d: %w", k+1, err)
	}
	return &engineRounds{e: e, start: start}, nil
}

// plainRounds drives fl.Server without noise (ε = ∞).
type plainRounds struct {
	s        *fl.Server
	sampling *rand.Rand
	agg      *fl.Aggregator
}

func (rp *replay) openPlain(k int, init []float64) (*plainRounds, error) {
	rec := rp.o.Design.Recipe()
	cfg := fl.Config{Clients: rp.sch.Clients, ExpectedClients: rp.sch.ExpectedClients, Rounds: rp.sch.Rounds,
		ClipNorm: rec.Clip, LocalEpochs: rec.LocalEpochs, LearningRate: rec.LearningRate, Accountant: rp.sch.Accountant}
	s, err := fl.NewServer(cfg, slices.Clone(init), math.Inf(1), rp.sch.Delta)
	if err != nil {
		return nil, fmt.Errorf("backtest: campaign %d: %w", k+1, err)
	}
	sampling := privacy.NewSecureRand()
	if rp.o.Seed != nil {
		sampling = fl.NewRand(*rp.o.Seed+uint64(k+1)*0x9e3779b97f4a7c15, fl.StreamSampling)
	}
	return &plainRounds{s: s, sampling: sampling}, nil
}

func (r *plainRounds) begin() (int, []int, error) {
	if err := r.s.NextRoundFits(); err != nil {
		return 0, nil, err
	}
	r.agg = fl.NewAggregator(r.s.Config, len(r.s.Global))
	return r.s.Round + 1, r.s.Sample(r.sampling), nil
}

func (r *plainRounds) submit(_, _ int, w []float64) error { return r.agg.Add(w) }

func (r *plainRounds) complete() ([]float64, error) {
	if _, err := r.s.Commit(r.agg, nil); err != nil {
		return nil, err
	}
	return slices.Clone(r.s.Global), nil
}

func (r *plainRounds) config() fl.Config { return r.s.Config }

func (r *plainRounds) events() []privacy.Event { return nil }

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
		if len(x) != len(y)*layers[0] {
			return fmt.Errorf("backtest: campaign %d, area %s: the design gave %d inputs for %d targets of %d inputs each", k+1, rp.lhas[i].Regions[0].Name, len(x), len(y), layers[0])
		}
		xs[i], ys[i] = x, y
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var drv rounds
	if rp.sch.NoiseMultiplier == 0 {
		drv, err = rp.openPlain(k, init)
	} else {
		drv, err = rp.openEngine(k, init)
	}
	if err != nil {
		return nil, nil, err
	}
	trainers := make([]*nn.Trainer, rp.o.Workers)
	for i := range trainers {
		trainers[i] = nn.NewTrainer(mlp)
	}
	cfg := drv.config()
	global := init
	for range rp.sch.Rounds {
		id, sampled, err := drv.begin()
		if err != nil {
			return nil, nil, fmt.Errorf("backtest: campaign %d: %w", k+1, err)
		}
		updates := make([][]float64, len(sampled))
		err = rp.parallel(len(sampled), func(w, j int) error {
			i := sampled[j]
			updates[j] = make([]float64, len(global))
			localUpdate(rp.o.Design, trainers[w], global, xs[i], ys[i], cfg, updates[j])
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		for j, i := range sampled {
			if err := drv.submit(i, id, updates[j]); err != nil {
				return nil, nil, fmt.Errorf("backtest: campaign %d, round %d, LHA %d: %w", k+1, id, i, err)
			}
		}
		if global, err = drv.complete(); err != nil {
			return nil, nil, fmt.Errorf("backtest: campaign %d, round %d: %w", k+1, id, err)
		}
	}
	rp.progress("campaign %d of %d (%s): %d rounds, %d LHAs", k+1, len(rp.sch.Starts), start.Format(time.DateOnly), rp.sch.Rounds, len(rp.lhas))
	return global, drv.events(), nil
}
