// Package forecast turns any point forecaster into quantile forecasts at
// the forecast hubs' seven levels, scores them (weighted interval score,
// coverage, PIT) and writes them as a hubverse-style CSV. It has no
// transport and no model of its own: the same code runs in the LHA's
// browser, in `fedcast client` and in `fedcast simulate`.
//
// # Target
//
// fedcast forecasts the 7-day average of daily reported cases on the
// target day, P days after the last input day (P = 7 by default; with the
// centred average that is 4 days after the last reported day). Quantiles
// are in the same unit, cases per day.
//
// # Intervals from the LHA's own recent errors
//
// A [Point] is any function from an input window (H smoothed values) to a
// point forecast: the federated model, or [Persistence]. [Calibrator] wraps
// it. For a forecast made on day d (the last input day) it takes the
// errors of the same point forecaster on the windows whose target lies in
// d − Lookback + 1 … d: all of them already observed on d, from all of
// the LHA's areas pooled ([Errors] of each area). Errors are measured on the log
// scale with one case added, e = log((y+1)/(ŷ⁺+1)) ([LogError]), so that
// areas of any size pool and intervals are multiplicative. [Calibrator.Fit]
// fits the errors' centre and spread, each shrunk towards a prior (spread
// s₀ = PriorScale, worth k = PriorWeight errors) so that an LHA with few
// errors still gets a sensible interval:
//
//	centre = Shift · median(e) · n/(n+k)
//	scale² = (Σ (e − centre)² + k·s₀²) / (n + k)
//	q_τ    = max(0, (ŷ⁺+1)·exp(centre + scale·z_τ) − 1)
//
// Two terms widen the scale: the recent errors' median (Trend κ: a
// strong recent bias may go on or stop) and the forecast's own change
// against the last input value x_H (Change κ_c, [Calibrator.Widen]: a
// forecast far from "no change" rests on a trend that may stop):
//
//	scale ← √(scale² + (κ·median(e))² + (κ_c·ln((ŷ⁺+1)/(x_H+1)))²)
//
// z_τ is the normal quantile at level τ, multiplied by Tail for the 80 %
// and 95 % levels. The median is the point forecast moved by the centre:
// with the model's constants ([DefaultCalibrator], Shift = 0) it is the
// point forecast itself; with persistence's ([PersistenceCalibrator],
// Shift = 0.5) half the recent errors' median corrects the lag of "no
// change" behind a trend. Quantiles are non-decreasing and never
// below zero by construction (and [ErrorModel.Quantiles] enforces both).
// The constants were tuned on synthetic outbreaks only (shared/synth),
// never on the real study months; see [DefaultCalibrator].
//
// Nothing leaves the LHA: the errors come from its own data and the
// released model, so the intervals cost no privacy budget.
//
// Other horizons follow in the same way: errors of the h-day-ahead point
// forecasts (windows whose target is h days after the input) calibrate
// the h-day-ahead interval; the spread grows with h because the errors do.
//
// # Baseline
//
// [Baseline] and [BaselineAt] are the hub-style baseline (after the
// COVIDhub-baseline): median = the last observed value, other quantiles =
// last value + the empirical quantiles of the area's own past P-day
// changes over the same lookback, symmetrised (each change and its
// negative), clamped at zero.
//
// # Scores
//
// [WIS] is the weighted interval score of Bracher et al. (2021) with the
// median and the 50 %, 80 % and 95 % central intervals, weights α/2,
// normalised by K + ½ = 3.5. [Covered] checks an interval, [Wilson] gives
// a binomial confidence interval for a coverage, [PITBin] places an outcome
// between the quantiles for a PIT histogram.
//
// # Hub files
//
// [WriteHub] writes `reference_date, target, horizon, target_end_date,
// location, output_type, output_type_id, value`, one row per area and
// level; [ReadHub] parses and checks such a file. See docs/forecast-hub.md.
package forecast
