package backtest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
)

// The weekly and weekly-e15 presets' LHAs train with the absolute error and weekly-squared's
// with the squared error (model.Weekly.Loss), whatever loss the worker's
// Trainer had before.
func TestWeeklyLocalTrainLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		preset string
		loss   nn.Loss
	}{{"weekly", nn.AbsoluteError}, {"weekly-e15", nn.AbsoluteError}, {"weekly-squared", nn.SquaredError}} {
		d, err := model.ReplayPreset(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		wd, err := NewWeeklyDesign(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		m := d.Network()
		p0 := make([]float64, m.NumParams())
		m.Init(p0, rng)
		x, y := make([]float64, 20*m.In()), make([]float64, 20)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		cfg := fl.Config{LocalEpochs: 5, LearningRate: 0.01}
		got := slices.Clone(p0)
		worker := nn.NewTrainer(m)
		worker.SetLoss(nn.AbsoluteError + nn.SquaredError - c.loss) // the other loss
		wd.LocalTrain(worker, got, x, y, cfg)
		want, other := slices.Clone(p0), slices.Clone(p0)
		tr := nn.NewTrainer(m)
		tr.SetLoss(c.loss)
		tr.Train(want, x, y, 5, nn.AdamOptions{LearningRate: 0.01})
		tr.SetLoss(nn.AbsoluteError + nn.SquaredError - c.loss)
		tr.Train(other, x, y, 5, nn.AdamOptions{LearningRate: 0.01})
		if !slices.Equal(got, want) || slices.Equal(got, other) {
			t.Errorf("preset %s: LocalTrain did not train with loss %d", c.preset, c.loss)
		}
	}
}
