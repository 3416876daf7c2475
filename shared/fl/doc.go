// Package fl is fedcast's federated round engine: DP-FedAvg with
// client-level differential privacy (spec §5; Kerkouche et al., Algorithm 1),
// with no transport. The coordinator's server, the in-process research
// simulator and the tests all drive the same functions; none of them is
// allowed a second copy of clipping, noise or accounting.
//
// # One round
//
// With N enrolled clients, m expected clients per round (q = m/N), clip
// bound S and noise multiplier c:
//
//  1. Sampling: [PoissonSample] includes each of the N clients independently
//     with probability q. This is what the accountant assumes; a fixed-size
//     draw ([FixedSample]) is used only in non-DP mode, as in the paper's code.
//  2. Local training: [LocalUpdate] starts from the global weights w, runs E
//     full-batch Adam steps from a fresh optimiser state and returns
//     Δw = w_local − w, clipped to ‖Δw‖₂ ≤ S in DP mode.
//  3. Aggregation: an [Aggregator] re-checks every received update (length,
//     finiteness) and re-clips it (the server never trusts a client's
//     clipping). In DP mode it rounds the update onto the lattice γℤᵈ of
//     privacy.Lattice (integer vector in units of γ, squared norm checked
//     exactly against ⌊(S/γ)²⌋) and accumulates an exact int64 sum, which
//     does not depend on the order of arrival: memory is O(model size),
//     not O(clients × model size).
//  4. Noise: [Aggregator.Finish] adds exact discrete Gaussian noise
//     N_ℤ(0, σ_ℤ²), σ_ℤ ≥ c·S/γ, to every coordinate of the integer sum Y
//     and sets w ← w + γ·Y/m, so the released model is a function of the
//     noised integers only (docs/privacy.md). The divisor is the expected
//     m, not the number received, so the sensitivity stays S/m; a sampled
//     client that drops out contributes zero and the round still counts.
//     The round's [Event] records γ and the sampler. In non-DP mode there
//     is no clipping and no noise, and the update is the plain mean of what
//     was received.
//
// A [Server] holds a study's explicit, JSON-serialisable state (round,
// global weights, accountant) and gates every round on the privacy budget;
// [Server.Propose] computes the next model and its privacy event without
// changing the state, so that a coordinator can commit both to its ledger
// before applying ([Server.Apply]) and releasing them. There is no round
// loop here: the study engine (coordinator/study) drives a [Server] live and
// in `fedcast simulate` (the tests' transport-free reference loop is
// internal/fltest.Simulation); a [Pool] shares the cores between the
// in-process studies running at once (an experiment's runs) without
// oversubscribing them.
//
// # Strategies and privacy levels
//
// A study's [Strategy] (looked up by its [StrategyName] with
// [LookupStrategy]: [FedAvgStrategy], [MRMTLStrategy], [CyclicStrategy])
// and [Guarantee] choose how clients train: who trains in each step
// (Strategy.Plan), how a step's aggregate becomes the next model
// (Strategy.StepConfig, Strategy.Combine) and what a client spends
// (Strategy.Events). Under
// [MRMTL] each client keeps a personal model pulled towards the federated
// one ([Pull], [Client]); under [ExampleLevel] or [BothLevels] each client
// trains with local DP-SGD ([LocalDPSGD]: Poisson batches, per-example
// clipping, the same lattice and exact discrete Gaussian noise, its own
// [LocalAccountant], refusal past its own budget). [Client.Update] is the
// one client step for every combination; with FedAvg and no local DP-SGD
// it is exactly [LocalUpdate]. The coordinator's side does not change.
//
// # Noise schedules
//
// Config.NoiseSchedule gives round t its own noise multiplier c_t
// (privacy.Schedule, fixed and public before the study; Config.WithSchedule
// installs calibrated multipliers). The aggregator of round t is made from
// Config.AtRound(t), Server.Propose refuses an aggregator made for another
// c, every Event records its c_t, and the accountant composes the rounds'
// different (q, c_t) exactly.
//
// # Cyclic FL
//
// Cyclic FL (seed 002, [CyclicStrategy]): every client takes one turn per
// round in a public order ([CyclicOrder] of the study file's hash), and
// each turn's model is handed on through [HandOff]: re-clipped change plus
// N(0, (c_t·S)²) at client level, no sampling. [CyclicAccountant] keeps
// each client's own hand-offs only (the others' are post-processing for
// it). A turn is the client's update ([LocalUpdate], or [Client.Update]
// with local DP-SGD). The study engine (coordinator/study) runs it, live
// and in `fedcast simulate`: there is no cyclic loop here.
//
// # Randomness
//
// Every random choice takes an injected *rand.Rand. Research runs derive
// independent streams from one seed with [NewRand] and feed the same exact
// sampler from StreamNoise; a live study's noise must come from
// privacy.NewSecureRand.
package fl
