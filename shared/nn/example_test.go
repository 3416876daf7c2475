package nn_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/nn"
)

// One client's local training (spec §4): PyTorch-default initial weights,
// then 30 full-batch Adam steps at lr 0.001 on its windows.
func Example() {
	m := nn.NewMLP(10, 128, 64, 32, 1)
	fmt.Println("parameters:", m.NumParams())

	rng := rand.New(rand.NewPCG(1, 2))
	params := make([]float64, m.NumParams())
	m.Init(params, rng)

	// 13 windows of 10 days of a slowly growing count; target: day 11.
	x := make([]float64, 13*10)
	y := make([]float64, 13)
	for s := range 13 {
		for d := range 10 {
			x[s*10+d] = float64(20 + s + d)
		}
		y[s] = float64(30 + s)
	}

	tr := nn.NewTrainer(m)
	before := tr.Loss(params, x, y)
	tr.Train(params, x, y, 30, nn.AdamOptions{}) // zero options: lr 0.001, β 0.9/0.999, ε 1e-8
	after := tr.Loss(params, x, y)
	fmt.Printf("MSE before %.2f, after %.2f\n", before, after)

	pred := make([]float64, 1)
	m.Predict(params, x[:10], pred)
	fmt.Printf("first window: predicted %.1f, observed %.0f\n", pred[0], y[0])
	// Output:
	// parameters: 11777
	// MSE before 1426.62, after 2.09
	// first window: predicted 27.9, observed 30
}
