// Command loadtest measures how much the coordinator holds on one machine:
// it starts a real `fedcast serve` child process with a study of N LHAs,
// connects N lightweight websocket clients from this process over
// loopback, lets the study run, and reports
//
//   - how many clients were connected at once (the round only starts when
//     all N are online and held idle for -hold), and how long connecting took;
//   - the coordinator's resident memory idle, with N clients connected, and
//     its peak (VmHWM) and a 20 ms trace of VmRSS during the rounds, read
//     from /proc/PID/status of the child process;
//   - each round's duration (start to ledger commit, from the admin-only
//     participation record) and the commit time (aggregation finish, noise,
//     synced ledger write; fedcast_round_commit_seconds from /metrics).
//
// The clients do not train: every client answers every round_start at
// once (after -spread), a picked one with a precomputed update, the others
// with a dummy (the same bytes for all, encoded once per round), and reads round results without decoding their weights, so that
// the client process stays light and the figures are the coordinator's.
//
// Usage (see docs/coordinator.md for the figures):
//
//	go build -o /tmp/fedcast ./coordinator/cmd/fedcast
//	go run ./coordinator/loadtest -fedcast /tmp/fedcast -clients 10000 -expected 10 -rounds 2
//	go run ./coordinator/loadtest -fedcast /tmp/fedcast -clients 2500 -expected 2500 -rounds 1
//	go run ./coordinator/loadtest -fedcast /tmp/fedcast -clients 2500 -expected 2500 -rounds 1 -insecure-seed 1
//
// It raises RLIMIT_NOFILE for itself and (inherited) the coordinator, and
// spreads the client sockets over the source addresses 127.0.0.2,
// 127.0.0.3, … (-sources) so that ephemeral ports never run out.
// Everything stops by itself: -timeout bounds the whole run.
package main
