// Package metrics computes the forecast-accuracy measures of spec §7 on
// pooled test windows, and summarises repeated runs.
//
// Conventions (y true, ŷ predicted, n pairs):
//
//	MSE   = (1/n) Σ (y − ŷ)²
//	MAE   = (1/n) Σ |y − ŷ|
//	MAPE  = 100 · mean over {y ≠ 0} of |y − ŷ| / |y|   (in %)
//	MdAPE = 100 · median over {y ≠ 0} of |y − ŷ| / |y|  (in %)
//	R²    = 1 − Σ (y − ŷ)² / Σ (y − ȳ)²                  (pooled over all pairs)
//
// Targets equal to zero have no percentage error: MAPE and MdAPE drop them
// and report how many were dropped (Result.ZeroTargetsDropped), as the
// paper's code does. When every target is zero they are NaN. R² is NaN when
// all targets are equal (no variance to explain). Predictions are used as
// given (unclamped), as in the paper; clamp at 0 only for display.
//
// Summaries of repeated runs use the sample standard deviation (divisor
// n − 1), the convention of numpy's std(ddof=1) and of R's sd; with one run
// the standard deviation is 0.
package metrics
