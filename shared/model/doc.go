// Package model holds fedcast's forecasting designs: what the network reads
// and predicts (Features), the no-change baseline every forecast must beat
// (Persistence), and whole training recipes (Design: the paper's and
// fedcast's default).
//
// # The baseline
//
// Persistence forecasts that the 7-day average P days ahead equals the last
// smoothed input value. It needs no training, no data sharing and no
// privacy budget, so a federated model is only worth joining for if it
// beats it; `fedcast simulate` reports every model's MAE relative to it and
// the LHA page's verdict compares the two on the LHA's own recent days.
//
// # Features
//
// Counts is the paper's: the network reads the H smoothed counts and
// outputs the count. Its inputs span four orders of magnitude across
// counties, so a clipped, noised update moves small and large counties
// very differently, and the paper's MLP loses to persistence at every
// privacy level it calls useful.
//
// LogChange (the default) reads each window relative to its own last day:
// inputs ln(1+x_i) − ln(1+x_H), target ln(1+y) − ln(1+x_H), forecast
// exp(ln(1+x_H) + output) − 1 (the output clamped to ±5, the forecast never
// below 0). It is a function of one window, so it costs no privacy; it
// makes counties of every size alike; and an output of zero is the
// no-change forecast, so training only has to learn the change.
//
// # The initial model
//
// For Counts, Features.Init is the network's random initialisation. For
// LogChange it is a public model pretrained on synthetic outbreaks
// (Pretrain, Pretrained): PretrainCorpus draws 8 epidemics of 80 areas
// (growth, peaks, plateaus and declines, large and small counts) from
// shared/synth with fixed seeds, and the network is fitted to their
// log-change windows with full-batch Adam (300 steps, learning rate 0.01)
// from a fixed-seed start whose output layer is zero. No private data is
// involved, so it costs no privacy; it is computed once per network shape
// and process (about 2 s native for 13-16-1, 5 s without SIMD kernels) and
// is the same, bit for bit, on every run, in `fedcast simulate`, in a live
// study's coordinator and (checked) under GOOS=js GOARCH=wasm — though the
// browser never recomputes it: it receives the coordinator's global model.
// Features.InitRandom is the initialisation without pretraining (random
// hidden layers, zero output layer: exactly the no-change forecast).
//
// # Designs
//
// Paper is the paper's recipe (MLP 10-128-64-32-1 on counts, T = 75,
// m = 100, E = 30, S = 0.5, learning rate 0.001, RDP accountant). Default
// is fedcast's, chosen on synthetic outbreaks from shared/synth only
// (tuning on the study months would spend privacy nobody accounts for):
// LogChange over H = 13 input days instead of the paper's 10 (a trend is
// read through the reporting noise better), MLP 13-16-1 (241 parameters:
// the noise norm grows with the square root of the parameter count)
// starting from the pretrained model,
// every LHA in every round (q = 1) for T = 5 rounds, E = 30, S = 0.5,
// learning rate 0.001 (from the pretrained start small steps do best),
// and the forecast change halved
// (Features.PredictDamped with damping 0.5: post-processing, free;
// insurance against a change of regime such as a wave that flattens,
// where any learned trend misleads), RDP. With q = 1 the set of LHAs in a
// round is no secret (it is everyone), so the guarantee does not lean on
// the secrecy of the sample; the noise is calibrated without
// amplification by subsampling. Starting from the pretrained model, 5
// rounds do better than 10 (each round gets less noise for the same ε,
// and the model has less to learn). docs/results.md, "Beyond the paper",
// has the measurements behind each choice, and
// coordinator/experiment's TestTuneDesign is the harness that made them.
//
// # The weekly design (deployments over time)
//
// WeeklyDesign (ReplayPreset "weekly", the default of `fedcast backtest`
// and of continuing studies; "monthly" names Default there) forecasts the
// total of the next 7 days instead of a 7-day average: Weekly builds its
// windows from up to 52 weeks of the area's own reports (training origins
// every other day), and its inputs add the public national and state
// totals' log-changes and the holiday shares of the state (Holidays, from
// github.com/rickar/cal/v2) for the last two input weeks and the target
// week (Public). The target is the log ratio of the next 7-day total to
// the last one, so an output of 0 is no change; the forecast is damped by
// half. It trains through the same federated path (fl.LocalUpdate,
// clipping, noise) as the other designs. Preset (simulate, study new)
// does not offer it: one-month studies keep Default and Paper.
//
// The package is pure Go without I/O: the coordinator, the native client
// and the browser (wasm) use the same code.
package model
