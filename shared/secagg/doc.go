// Package secagg is two-server secure aggregation for a DP-FedAvg round
// (issue 26): no single server ever sees an LHA's update.
//
// # Model
//
// Two servers, the leader (the coordinator) and the helper (run by a second
// organisation), each hold a random share of every report. An LHA
//
//  1. encodes its update as an integer vector k on the lattice γℤᵈ with
//     Σk_j² ≤ B², B = ⌊S/γ⌋ (Encoder);
//  2. draws a 32-byte seed, expands the helper's share h = XOF(seed) and
//     computes the leader's share k − h in ℤ_{2^64} (Share);
//  3. seals the seed to the helper's HPKE key with associated data
//     study hash ‖ round ‖ report ID (Seal, AssociatedData);
//  4. sends both, as one Report, to the leader.
//
// An LHA that was not picked for the round (its own Poisson coin) shares
// k = 0, so every LHA sends a report of the same size every round.
//
// Each server sums its shares of the same set of reports (the leader's
// shares; the helper's expanded seeds), adds its own discrete Gaussian
// noise N_ℤ(0, σ²) at the study's full σ, and releases one aggregate share
// (Sum). The leader adds the two aggregate shares and takes the centred
// lift (Ring.Lift): Σk + noise_leader + noise_helper, exact as long as
// N·B + 2·t·σ < 2^63 (CheckWrap, t = 40). Decode divides by m.
//
// Against either server alone the other's noise is full: each server knows
// its own noise, and the other's alone gives today's (ε, δ). See
// docs/privacy.md for the argument and what a malicious LHA can do.
//
// Everything here is transport-free and builds for WebAssembly: the
// browser and the headless client share it through shared/session.
package secagg
