// Package publish turns an LHA's forecast into one it may publish with a
// person-level guarantee (issue 27; the DNA seed, Romijnders et al.).
//
// Neighbouring data differ by one case: ±1 on one day in one area. The
// publishable median (Forecaster.Median) reads only the area's own daily
// counts over the last Weeks weeks, through features log(κ + weekly
// average) with a fixed public floor κ, and a network whose every layer is
// projected to spectral norm ≤ 1 (nn.MLP.ProjectSpectral) with ReLU
// activations. Its change under one case is bounded (Forecaster.Sensitivity:
// one bound per week of the window). Mechanism adds exact discrete Gaussian
// noise (privacy.DiscreteGaussian) to the median on the log scale,
// calibrated to those bounds; the range around it is public (a fixed public
// spread widened by the noise), so nothing else depends on the data.
// Accountant composes the publications a case touches. The proof is in
// docs/privacy.md, "Publishing a forecast".
package publish
