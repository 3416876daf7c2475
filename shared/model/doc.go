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
// makes counties of every size alike; and the output layer starts at zero
// (Features.Init), so the untrained model is exactly the no-change
// forecast and training only has to learn the change.
//
// # Designs
//
// Paper is the paper's recipe (MLP 10-128-64-32-1 on counts, T = 75,
// m = 100, E = 30, S = 0.5, learning rate 0.001, RDP accountant). Default
// is fedcast's, chosen on synthetic outbreaks from shared/synth only
// (tuning on the study months would spend privacy nobody accounts for):
// LogChange, MLP 10-16-1 (193 parameters: the noise norm grows with the
// square root of the parameter count), every LHA in every round (q = 1)
// for T = 10 rounds, E = 30, S = 0.5, learning rate 0.01, and the forecast
// change halved (Features.PredictDamped with damping 0.5: post-processing,
// free; insurance against a change of regime such as a wave that
// flattens, where any learned trend misleads), RDP. With q = 1
// the set of LHAs in a round is no secret (it is everyone), so the
// guarantee does not lean on the secrecy of the sample; the noise is
// calibrated without amplification by subsampling. docs/results.md,
// "Beyond the paper", has the measurements behind each choice.
//
// The package is pure Go without I/O: the coordinator, the native client
// and the browser (wasm) use the same code.
package model
