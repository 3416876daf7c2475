// Package helper is the helper server of two-server secure aggregation
// (issue 26; shared/secagg): `fedcast helper serve` runs it, a second
// organisation operates it.
//
// For every round the leader (the coordinator) forwards the reports' IDs
// and sealed seeds together with the study value and the study's leader
// token (HelperRequest). A request whose token does not hash to the
// study value's leader_token_sha256 is refused before anything is opened
// or recorded, so only the study's coordinator can spend its rounds. The
// helper takes every parameter — σ, γ, B, the round cap T, the budget ε —
// from that study value alone: the LHAs sealed their seeds with its hash
// as associated data, so a leader that alters it makes every seed fail to
// open. It opens the seeds, keeps at most one report per LHA, sums the
// expanded shares, adds its own discrete Gaussian noise at the study's
// full σ from its own CSPRNG, commits the aggregate share to its own
// ledger (one SQLite file per study hash under the state directory) and
// only then answers. A round is released once: a retry of the same request
// gets the stored, identical share; any other request for a released
// round, a round out of order, beyond T or beyond the budget is refused.
package helper
