package fl

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
)

// TestSpectralRelease: with Config.Spectral the server releases every
// model projected to spectral norm ≤ 1 per layer, while the same round
// without it releases a noised model beyond 1 (so the projection, not
// luck, keeps the norms down); and a client's local step with Spectral
// trains with spectral normalisation.
func TestSpectralRelease(t *testing.T) {
	sizes := []int{15, 8, 1}
	mlp := nn.NewMLP(sizes...)
	global := make([]float64, mlp.NumParams())
	mlp.Init(global, rand.New(rand.NewPCG(1, 2)))
	mlp.ProjectSpectral(global)
	base := Config{Clients: 2, ExpectedClients: 1, Rounds: 3, ClipNorm: 5, NoiseMultiplier: 2, DP: true, LocalEpochs: 2, LearningRate: 0.01}
	maxNorm := func(spectral []int) float64 {
		cfg := base
		cfg.Spectral = spectral
		s, err := NewServer(cfg, slices.Clone(global), 1e6, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		agg := NewAggregator(cfg, len(global))
		up := make([]float64, len(global))
		for i := range up {
			up[i] = 0.5
		}
		if err := agg.Add(up); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(agg, rand.New(rand.NewPCG(3, 4))); err != nil {
			t.Fatal(err)
		}
		return slices.Max(mlp.SpectralNorms(s.Global))
	}
	if got := maxNorm(nil); got <= 1 {
		t.Fatalf("without Spectral the noised model's largest norm is %v: the test cannot tell the projection apart", got)
	}
	if got := maxNorm(sizes); got > 1 {
		t.Errorf("with Spectral the released model has a layer of norm %v > 1", got)
	}
	if err := (Config{Clients: 1, ExpectedClients: 1, Rounds: 1, LocalEpochs: 1, LearningRate: 0.1, Spectral: []int{3}}).Validate(); err == nil {
		t.Error("one spectral layer size was accepted")
	}

	// The local step: spectral normalisation keeps the trained layers near
	// norm 1 where plain Adam on a steep target goes far beyond.
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 15*40)
	y := make([]float64, 40)
	for i := range y {
		for j := range 15 {
			x[i*15+j] = rng.NormFloat64()
		}
		y[i] = 40 * x[i*15]
	}
	local := func(spectral []int) float64 {
		cfg := base
		cfg.DP, cfg.NoiseMultiplier, cfg.LocalEpochs, cfg.LearningRate, cfg.Spectral = false, 0, 200, 0.05, spectral
		d := make([]float64, len(global))
		LocalUpdate(nn.NewTrainer(mlp), global, x, y, cfg, d)
		for i := range d {
			d[i] += global[i]
		}
		return slices.Max(mlp.SpectralNorms(d))
	}
	plain, spectral := local(nil), local(sizes)
	if plain <= 1.5 || spectral > 1.05 {
		t.Errorf("largest layer norm after local training: %v plain, %v spectral; want above 1.5 and at most 1.05", plain, spectral)
	}
}
