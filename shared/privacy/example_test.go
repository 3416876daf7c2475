package privacy_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/privacy"
)

// The paper's setting: q = 0.25 (100 of 400 counties), T = 75 rounds,
// δ = 1e-5, with the noise multipliers its accountant chose for ε = 2 and 1.
func ExampleEpsilon() {
	for _, c := range []float64{4.8828125, 8.984375} {
		eps, order := privacy.Epsilon(0.25, c, 75, 1e-5)
		fmt.Printf("c = %-9g ε = %.4f (order %.1f)\n", c, eps, order)
	}
	// Output:
	// c = 4.8828125 ε = 1.9906 (order 9.9)
	// c = 8.984375  ε = 0.9964 (order 18.0)
}

// Calibration for the paper's ε grid; the paper reports c ≈ 8.98, 4.88 and
// 2.30 (its bisection stopped within 0.01 of the target on fewer orders).
func ExampleNoiseMultiplier() {
	for _, eps := range []float64{1, 2, 5} {
		c, err := privacy.NoiseMultiplier(eps, 1e-5, 0.25, 75)
		if err != nil {
			fmt.Println(err)
			return
		}
		got, _ := privacy.Epsilon(0.25, c, 75, 1e-5)
		fmt.Printf("ε = %g: c = %.4f (accounted ε = %.6f)\n", eps, c, got)
	}
	// Output:
	// ε = 1: c = 8.9556 (accounted ε = 1.000000)
	// ε = 2: c = 4.8630 (accounted ε = 2.000000)
	// ε = 5: c = 2.3015 (accounted ε = 5.000000)
}

// Heterogeneous rounds compose order by order; the state survives a
// restart through JSON.
func ExampleAccountant() {
	acc := privacy.NewAccountant(nil)
	acc.Compose(0.25, 8.984375, 50) // 50 rounds at the ε = 1 noise level
	acc.Compose(0.25, 4.8828125, 5) // 5 noisier rounds
	eps, order := acc.Epsilon(1e-5)
	fmt.Printf("ε = %.4f at order %.1f\n", eps, order)
	// Output:
	// ε = 0.9530 at order 18.0
}

// One DP-FedAvg aggregation step (spec §5): clip each update to S, average
// over the expected m, add N(0, (c·S/m)²).
func ExampleClipL2() {
	const S, m, c = 0.5, 2.0, 4.8828125
	updates := [][]float64{{0.3, 0.4}, {3, 4}}
	sum := make([]float64, 2)
	for _, u := range updates {
		norm := privacy.ClipL2(u, S)
		fmt.Printf("norm %.2f → %.6f\n", norm, privacy.L2Norm(u))
		for i, v := range u {
			sum[i] += v / m
		}
	}
	rng := rand.New(rand.NewPCG(1, 2)) // research runs seed; privacy noise uses privacy.NewSecureRand()
	privacy.AddGaussian(sum, c*S/m, rng)
	fmt.Println(len(sum))
	// Output:
	// norm 0.50 → 0.500000
	// norm 5.00 → 0.500000
	// 2
}
