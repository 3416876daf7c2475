// Package study holds a live study's configuration and its round engine.
//
// # Study file
//
// A study is described by a JSON file ([File], documented field by field in
// docs/study-file.md): the privacy budget (ε, δ), rounds T, expected LHAs
// per round m, clip bound S, local epochs E, learning rate, window H/P and
// smoothing, the round schedule (round_length, round_slack), and the enrolled LHAs, each with the
// SHA-256 of its secret join token (the tokens themselves are printed once
// by `fedcast study new` and never stored). [Create] makes a new file with
// fresh tokens; [Load] reads and validates one. N, the number of enrolled
// LHAs, is fixed by the file.
//
// # Engine
//
// [Engine] runs the rounds of one study over shared/fl (sampling, re-clipping
// aggregation, noise, accounting: nothing is reimplemented here) and the
// privacy ledger (coordinator/ledger). It holds no sockets: a transport
// (coordinator/server) calls
//
//	r, err := e.Begin(online)      // budget gate, Poisson sample from all N LHAs: open
//	err = e.Submit(lha, round, Δw)  // while open, any number of times
//	res, err := e.Complete()        // aggregating: mean ÷ m + noise, ledger commit: committed
//	err = e.Release()               // after sending res: released, the next Begin may follow
//	err = e.Abandon()               // instead of Complete: abandoned, aggregate reset
//
// and releases res only after Complete returned: Complete writes the round's
// event and model to the ledger, synced, before it changes the state, so a
// model is never released without its event on disk. A round's phase
// ([Phase]) makes its life cycle explicit: open → aggregating → committed
// → released, or abandoned; every transition that discards a round's
// aggregate (Abandon, a failed commit) resets it, so no update is ever
// counted in two rounds, and a committed round cannot be abandoned. [Open]
// on an existing ledger resumes after validating it (rounds numbered 1…k,
// k ≤ T, each with the study's q, c, δ and the ε the accountant gives,
// finite models of the right size): the global model is the last committed
// one, the accountant is recomposed from the committed events, the current
// round is the next one; nothing committed is ever computed again.
//
// # Randomness
//
// Sampling and noise come from privacy.NewSecureRand unless an insecure seed
// is given (research mode): then the initial model, sampling and noise come
// from fl.NewRand(seed, fl.StreamInit / StreamSampling / StreamNoise),
// exactly as fl.Simulation draws them, and updates are summed in LHA order,
// so a live study with every sampled LHA answering gives the same model as
// the in-process simulation. A resumed research study fast-forwards its
// streams over the committed rounds so that it continues the same sequence.
package study
