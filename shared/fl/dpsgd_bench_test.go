package fl

import (
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// BenchmarkLocalDPSGDRound is one LHA's round of local DP-SGD at the
// default design: MLP 10-16-1, 13 windows, E = 30 steps, q_local = 0.5.
func BenchmarkLocalDPSGDRound(b *testing.B) {
	ex, err := NewExampleDP(1, 1e-5, 0.5, 0.1, 300, privacy.AccountantRDP)
	if err != nil {
		b.Fatal(err)
	}
	x, y := windows(13, 10, 0, rand.New(rand.NewPCG(1, 1)))
	m := nn.NewMLP(10, 16, 1)
	p := make([]float64, m.NumParams())
	tr := nn.NewTrainer(m)
	rng := NewRand(1, StreamExampleBatches)
	for b.Loop() {
		l, _ := NewLocalDPSGD(ex)
		if err := l.Train(tr, p, x, y, 30, 0.01, rng, rng, nil); err != nil {
			b.Fatal(err)
		}
	}
}
