package fltest_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/fedcast/fedcast/internal/fltest"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// A complete DP-FedAvg study in the reference loop: 20 clients, 5 expected per round,
// with the noise multiplier calibrated so that 10 rounds spend at most ε = 3.
func ExampleSimulation() {
	rng := rand.New(rand.NewPCG(1, 1))
	clients := make([]fl.ClientData, 20)
	for i := range clients {
		level := 10 + 40*rng.Float64()
		clients[i] = fl.ClientData{X: []float64{level, level + 1, level + 2}, Y: []float64{level + 4}}
	}
	q, rounds, delta := 5.0/20, 10, 1e-5
	c, err := privacy.NoiseMultiplier(3, delta, q, rounds)
	if err != nil {
		panic(err)
	}
	sim := &fltest.Simulation{
		Model:   nn.NewMLP(3, 8, 1),
		Clients: clients,
		Config: fl.Config{Clients: 20, ExpectedClients: 5, Rounds: rounds, ClipNorm: 0.5,
			NoiseMultiplier: c, DP: true, LocalEpochs: 5, LearningRate: 1e-3},
		Epsilon: 3, Delta: delta, Seed: 7,
	}
	srv, err := sim.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Printf("rounds %d, noise multiplier %.3f, ε spent %.3f ≤ 3\n", srv.Round, c, srv.EpsilonSpent())
	// Output:
	// rounds 10, noise multiplier 1.663, ε spent 3.000 ≤ 3
}
