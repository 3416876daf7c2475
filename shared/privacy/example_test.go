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
	// c = 4.8828125 ε = 1.9907 (order 10.0)
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
	// ε = 2: c = 4.8636 (accounted ε = 2.000000)
	// ε = 5: c = 2.3028 (accounted ε = 5.000000)
}

// Heterogeneous rounds compose order by order; the state survives a
// restart through JSON.
func ExampleRDP() {
	acc := privacy.NewRDP(nil)
	acc.Compose(0.25, 8.984375, 50) // 50 rounds at the ε = 1 noise level
	acc.Compose(0.25, 4.8828125, 5) // 5 noisier rounds
	eps, order := acc.Epsilon(1e-5)
	fmt.Printf("ε = %.4f at order %.1f\n", eps, order)
	// Output:
	// ε = 0.9530 at order 18.0
}

// One DP-FedAvg aggregation step (spec §5) on the lattice: clip each
// update to S, round it to an integer vector in units of γ within the exact
// norm bound, sum exactly, add discrete Gaussian noise N_ℤ(0, σ_ℤ²) with
// σ_ℤ ≥ c·S/γ, and release γ·(noised sum)/m. fl.Aggregator does exactly
// this.
func ExampleLattice() {
	const S, m, c = 0.5, 2.0, 4.8828125
	lat, err := privacy.NewLattice(S, c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("γ = %g, S/γ = %g, σ_ℤ² = %d, bound ⌊(S/γ)²⌋ = %d\n", lat.Gamma, S/lat.Gamma, lat.Sigma2, lat.NormBound2)
	updates := [][]float64{{0.3, 0.4}, {3, 4}}
	sum := make([]int64, 2)
	z := make([]int64, 2)
	for _, u := range updates {
		norm := privacy.ClipL2(u, S)
		lat.Round(z, u)
		fmt.Printf("norm %.2f → z = %v, ‖z‖² = %d\n", norm, z, z[0]*z[0]+z[1]*z[1])
		sum[0] += z[0]
		sum[1] += z[1]
	}
	rng := rand.New(rand.NewPCG(1, 2)) // research runs seed; privacy noise uses privacy.NewSecureRand()
	lat.AddNoise(sum, rng)
	release := []float64{lat.Gamma * float64(sum[0]) / m, lat.Gamma * float64(sum[1]) / m}
	fmt.Println(len(release))
	// Output:
	// γ = 0.0001220703125, S/γ = 4096, σ_ℤ² = 400000000, bound ⌊(S/γ)²⌋ = 16777216
	// norm 0.50 → z = [2457 3276], ‖z‖² = 16769025
	// norm 5.00 → z = [2457 3276], ‖z‖² = 16769025
	// 2
}
