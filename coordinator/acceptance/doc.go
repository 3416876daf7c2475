// Package acceptance holds the coordinator's process-level acceptance
// tests (issue 3, "Done when"). They build the real `fedcast` binary, create
// studies with `fedcast study new`, run `fedcast serve` as a child process
// on loopback and drive LHAs through shared/session sessions (the code of
// `fedcast client` and of the browser) over real websockets from the test
// binary. The package has no non-test code besides this file.
//
// Tests:
//
//   - TestEquivalence400: 400 LHAs, one German county each, November 2020,
//     against `fedcast serve --insecure-seed`: every released model is bit
//     for bit the one the study run in process releases for the same seed
//     and windows (study.InProcess, the driver of `fedcast simulate`; and
//     fltest.Simulation, the transport-free reference loop), and ε is
//     privacy.Epsilon(q, c, T, δ);
//   - TestSigkillResume: `fedcast serve` is SIGKILLed at random moments and
//     in the gap between the ledger commit and the broadcast (the server's
//     test-only server.PauseAfterCommitEnv hook), restarted on the same
//     --state, while the LHAs reconnect; no committed round is lost or
//     re-noised, every model a client received is in `fedcast ledger
//     export`, and the study finishes with the right ε;
//   - TestDropouts: 10 % of the LHAs lose their TCP connection at random in
//     every round; every round is committed within its deadline.
//
// By default each test runs a reduced setting that takes seconds. With
// FEDCAST_ACCEPTANCE=1 they run the full experiments recorded in
// docs/coordinator.md (T = 75 rounds for the equivalence, ≥ 20 kills, …);
// FEDCAST_ACCEPTANCE_OUT=DIR additionally writes their measurements as JSON
// there. Tests that need the real data skip without ../shared/data (and fail
// under FEDCAST_CI=1, see internal/testkit).
package acceptance
