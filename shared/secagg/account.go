package secagg

import "math"

// PublicNoiseMultiplier returns the noise multiplier of a two-server
// round as the public sees it: √2·c. Each server adds N_ℤ(0, σ²) with
// σ = c·S/γ lattice steps, so the released sum carries the sum of two
// independent discrete Gaussians. Against either server alone only the
// other server's noise counts, and the guarantee is the study's (ε, δ)
// at c, which the accountant computes as always. Against the public the
// sum is close to N_ℤ(0, 2σ²): Kairouz, Liu and Steinke (2021, "The
// distributed discrete Gaussian mechanism for federated learning with
// secure aggregation") bound the distance of a sum of discrete Gaussians
// from one discrete Gaussian by a term of order e^(−π²σ²) for two
// summands, negligible at σ ≥ 2¹⁴ steps (privacy.Lattice). Accounting the public view at √2·c is therefore
// argued, not proven, like the gap between the discrete and the
// continuous Gaussian (docs/privacy.md).
func PublicNoiseMultiplier(c float64) float64 { return math.Sqrt2 * c }
