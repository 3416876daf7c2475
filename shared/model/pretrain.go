package model

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// Pretraining on synthetic outbreaks.
//
// The initial model of an anchored design is public: it is computed by the
// coordinator from fixed seeds and synthetic data only (shared/synth), so it
// costs no privacy. PretrainCorpus lists the outbreaks, Pretrain fits the
// network to them (full-batch Adam on the log-change windows, no noise: no
// private data is involved) and Features.Init uses the result.

// PretrainSeed seeds everything pretraining draws: the outbreaks' settings,
// the synthetic data and the network's starting weights.
const PretrainSeed uint64 = 0x9e3779b97f4a7c15

// PretrainSteps and PretrainRate are the Adam steps and step size of
// pretraining.
const (
	PretrainSteps = 300
	PretrainRate  = 0.01
)

// PretrainHorizon is the horizon P the pretraining windows use (the
// default: the 7-day average 7 days after the last input day).
const PretrainHorizon = series.DefaultHorizon

// PretrainCorpus returns the synthetic outbreaks pretraining fits: n
// epidemics of 80 areas over Oct–Dec 2020 whose reproduction number,
// intervention (day, strength, ramp, or none), starting prevalence and
// reporting rate are drawn from one fixed-seed generator, so that the
// corpus holds growth, peaks, plateaus and declines in large and small
// counts. The same n gives the same outbreaks on every run.
func PretrainCorpus(n int) []synth.Options {
	rng := rand.New(rand.NewPCG(PretrainSeed, 1))
	out := make([]synth.Options, n)
	for i := range out {
		o := synth.Options{
			Areas: 80, Seed: PretrainSeed + uint64(i),
			R0:                 1.0 + 0.8*rng.Float64(),
			InterventionDay:    15 + rng.IntN(60),
			InterventionEffect: 0.1 + 0.55*rng.Float64(),
			InterventionRamp:   3 + rng.IntN(15),
			InitialPrevalence:  []float64{10, 30, 60, 150}[rng.IntN(4)],
			ReportingRate:      0.2 + 0.3*rng.Float64(),
		}
		if rng.Float64() < 0.2 {
			o.NoIntervention = true
			o.R0 = 0.8 + 0.5*rng.Float64()
		}
		out[i] = o
	}
	return out
}

// pretrainOutbreaks is the size of the corpus Features.Init uses.
const pretrainOutbreaks = 8

// Pretrain fits the network m to the log-change windows (history m.In(),
// horizon PretrainHorizon, centred average) of the outbreaks, starting
// from a fixed-seed initialisation with the output layer at zero (the
// no-change forecast), and writes the weights into dst. It is
// deterministic: the same m and outbreaks give the same weights.
func Pretrain(m *nn.MLP, outbreaks []synth.Options, dst []float64) error {
	if m.Out() != 1 {
		return fmt.Errorf("model: pretraining needs one output, the network has %d", m.Out())
	}
	var x, y []float64
	for i, o := range outbreaks {
		d, _, err := synth.Generate(o)
		if err != nil {
			return fmt.Errorf("model: pretraining outbreak %d: %w", i, err)
		}
		areas, err := series.MakeWindows(d, series.WindowOptions{History: m.In(), Horizon: PretrainHorizon})
		if err != nil {
			return fmt.Errorf("model: pretraining outbreak %d: %w", i, err)
		}
		xi, yi := LogChange.Stack(areas)
		x, y = append(x, xi...), append(y, yi...)
	}
	if len(y) == 0 {
		return fmt.Errorf("model: pretraining: the outbreaks yield no windows")
	}
	LogChange.initRandom(m, dst, rand.New(rand.NewPCG(PretrainSeed, 2)))
	nn.NewTrainer(m).Train(dst, x, y, PretrainSteps, nn.AdamOptions{LearningRate: PretrainRate})
	return nil
}

// pretrained caches the pretrained weights per network shape.
var pretrained sync.Map // key string(sizes) → *pretrainEntry

type pretrainEntry struct {
	once sync.Once
	w    []float64
	err  error
}

// Pretrained returns the weights Features.Init gives an anchored network of
// m's shape: Pretrain on PretrainCorpus(8), computed once per shape and
// process (about a second for 13-16-1) and then copied. The slice
// returned is the caller's.
func Pretrained(m *nn.MLP) ([]float64, error) {
	key := fmt.Sprint(m.Sizes())
	v, _ := pretrained.LoadOrStore(key, &pretrainEntry{})
	e := v.(*pretrainEntry)
	e.once.Do(func() {
		w := make([]float64, m.NumParams())
		e.err = Pretrain(m, PretrainCorpus(pretrainOutbreaks), w)
		e.w = w
	})
	if e.err != nil {
		return nil, e.err
	}
	return append([]float64(nil), e.w...), nil
}
