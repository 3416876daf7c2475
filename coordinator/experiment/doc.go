// Package experiment runs the paper's experiments (spec §7) in process: for
// every ε of a grid and every one of R runs it trains one DP-FedAvg study on
// the study window of a case file, one client per area, and evaluates the
// final global model on the pooled test windows. It is what
// "fedcast simulate" runs, and it writes the results as JSON and figures.
//
// # One round driver
//
// Each study runs on the live study's Coordinator (coordinator/study,
// study.InProcess), as `fedcast serve` runs one: the run's setting becomes
// a study file (Config.studyFile, the one mapping), the engine holds it in
// memory in research mode, and every area is an LHA in process that gets
// round_start, trains (fl.LocalUpdate, or its MR-MTL and local DP-SGD
// state) and sends its update as a frame; the released round_result is
// what the run evaluates. Cyclic FL runs the same way: the engine releases
// every turn, the run evaluates each round's last, and the turn order is
// the live rule's (fl.CyclicOrder of the study file's hash; each run's
// file names its seed, so each run has an order of its own).
//
// # Reproducibility
//
// Run r of an experiment seeded with s uses fl.RunSeed(s, r) for its
// initial model, client sampling, noise and (with the random split) the
// train/test split, so any single run can be reproduced alone, and every ε
// sees the same initial models and splits (common random numbers). Runs and
// the clients within each round share one pool of Config.Workers goroutines
// (fl.Pool): a single run trains its clients on every core, a grid runs
// several runs at once; the results do not depend on how many.
//
// # What is reported
//
// For each ε: the noise multiplier calibrated for (ε, δ, q = m/N, T); mean
// and sample standard deviation (divisor n−1) across runs of MSE, MAE, MAPE,
// MdAPE and R² of the final model on all test windows pooled; the same per
// population stratum; test MAPE every few rounds (convergence); and, for the
// figures, each area's MAPE in each run and the predicted-vs-true pairs of
// the first run.
//
// Each run's point forecasts (the trained model, or persistence with
// Config.PointForecast) are also turned into quantile forecasts by package
// forecast, with each area's intervals calibrated on its own errors of
// the windows whose targets are known at the forecast origin, and scored:
// WIS, WIS relative to the hub-style baseline, coverage of the 50 % and
// 95 % intervals (with counts, Wilson intervals and per target date),
// coverage when calibrated on the training windows only, a PIT histogram
// and a rolling-origin evaluation over every study window. See
// docs/forecast-hub.md.
package experiment
