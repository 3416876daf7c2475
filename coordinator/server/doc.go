// Package server is the live coordinator's transport: an http.Handler
// (net/http + github.com/coder/websocket) that speaks shared/protocol to the
// LHAs and drives a study.Engine. All round logic (sampling, re-clipping,
// mean ÷ m, noise, accounting, ledger-before-release) lives in
// coordinator/study and shared/fl; this package moves bytes, keeps the
// connections, and enforces the transport's rules.
//
// # Routes
//
//	GET  /api/ws            websocket: hello → welcome → rounds (package protocol)
//	GET  /api/status        public JSON: round, rounds, epsilon_spent,
//	                        epsilon_budget, delta, noise_multiplier, state,
//	                        insecure_seed, name, clients, expected_clients,
//	                        sample_rate, protocol; nothing about participation
//	GET  /api/admin/status  admin: LHAs enrolled and online, the open round,
//	                        per-round participants and durations
//	GET  /api/admin/ledger  admin: the ledger export (JSON)
//	GET  /api/admin/model   admin: the current (final) global model (JSON)
//	GET  /metrics           admin: Prometheus metrics
//	/                       Options.Static (the browser app; /join, /admin)
//
// Admin routes need "Authorization: Bearer ADMINTOKEN"; the token is
// checked against the study file's hash in constant time.
//
// # Rounds
//
// [Server.Run] waits until StartQuorum LHAs are online (after a restart
// with committed rounds: until they are back or the restart grace has
// passed, whichever comes first, so that a restart does not spend rounds
// of budget on nobody), then runs rounds:
// Begin (Poisson sample from all N enrolled LHAs, online or not); a
// round_start to each sampled LHA that is connected (nothing to anyone else);
// updates until every sampled, connected LHA has answered or the round
// deadline passes (a sampled LHA that is offline, disconnects or misses the
// deadline is a dropout: zero contribution, the mean still divides by m);
// Complete (ledger commit, synced); only then the round_result broadcast to
// every connected LHA. A sampled LHA that connects while its round is open
// gets the round_start on joining. Who is online only ever decides when a
// round opens, never who is sampled: the accountant's q = m/N assumes a
// sample drawn from all N.
//
// # Connection rules
//
//   - the first frame must be hello within 10 s (else hello_expected);
//     an unknown token is refused (unauthorized) and the socket closed;
//   - one connection per token: a new connection with the same token
//     REPLACES the old one, which gets error "replaced" and is closed. A
//     reload or a network change leaves a half-open old socket behind;
//     refusing the new one would lock the LHA out until TCP notices. The
//     LHA's round state is kept: a round_start it has not answered is sent
//     again, an update it already sent is not accepted twice;
//   - the websocket read limit is protocol.FrameSize(model size): a larger
//     frame closes the socket with status 1009 (message too big);
//   - updates for another round than the open one (late, replayed, unknown)
//     get stale_round, from unsampled LHAs not_sampled, a second one
//     duplicate_update, wrong length or NaN/±Inf bad_update; none of these
//     changes the aggregate, the budget or the connection;
//   - browsers: the Origin must be the coordinator's own host or match the
//     study's origin patterns (websocket.AcceptOptions.OriginPatterns);
//     clients without an Origin header (native) are accepted;
//   - each connection has a bounded outbox; a client too slow to take its
//     messages is disconnected rather than slowing the rounds;
//   - frames in flight are bounded (Options.FramesInFlight, by default
//     max(16, 2×GOMAXPROCS)): a connection takes a slot once a frame's
//     header has arrived, reads the body into a pooled buffer, and gives
//     the slot back after the frame was decoded and handed to the engine.
//     Bodies waiting for a slot stay in the kernel's socket buffers, so a
//     burst of updates costs O(slots × model), not O(updates × model). A
//     body not received within Options.FrameReadTimeout (10 s) closes the
//     connection, so a stalled sender holds its slot no longer than that.
//
// Round results are encoded once and the same bytes go to every client.
package server
