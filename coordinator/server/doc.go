// Package server is the live coordinator's transport: an http.Handler
// (net/http + github.com/coder/websocket) that speaks shared/protocol to the
// LHAs and drives a study.Coordinator. All round logic (schedule, sampling, re-clipping,
// mean ÷ m, noise, accounting, ledger-before-release) lives in
// coordinator/study and shared/fl; this package moves bytes, keeps the
// connections, and enforces the transport's rules.
//
// # Routes
//
//	GET  /api/ws            websocket, the join token in the handshake:
//	                        welcome → rounds (package protocol)
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
// Rounds run on a fixed public schedule (docs/study-file.md). [Server.Run]
// waits until StartQuorum LHAs are online; that moment t₀ is recorded in
// the ledger, and slot j of the schedule starts at t₀ + j·L (L: the study's
// round_length). At a slot's start the engine Begins a round (Poisson
// sample from all N enrolled LHAs, online or not) and every connected LHA
// gets the round's round_start, the same frame but for its one-digit
// picked field; each answers once, with its update or a dummy of the same
// size (docs/privacy.md, "What an observer on the network sees").
// Frames are buffered raw (a dummy's head only) until L − slack; then the
// window closes whatever
// has arrived (a sampled LHA that is offline or late is a dropout: zero
// contribution, the mean still divides by m), the frames are decoded and
// handed to the engine, which Completes the round (ledger commit, synced).
// At the slot's end the round is Released: the round_result to every
// connected LHA, each buffered frame's answer to its sender, the public
// snapshot (/api/status, welcomes) moves on, and the next round opens. An
// overrun of the slack moves the release to the next slot start. After a
// restart the next round opens at the first slot after the quorum is back
// or the restart grace has passed. Who is online only ever decides when the
// schedule starts, never who is sampled: the accountant's q = m/N assumes
// a sample drawn from all N.
//
// # Connection rules
//
//   - the join token comes in the handshake (Sec-WebSocket-Protocol,
//     protocol.ParseAuth) and is checked before the upgrade (auth.go): no
//     connection waits for a hello. The connection starts not ready: it
//     gets no round_start and does not count towards the quorum until
//     it sends ready (study.IsReady). A valid token is always accepted,
//     whatever its address. Otherwise the refusal (unauthorized, or
//     version for a handshake without a token) is an error frame on a
//     socket closed at once, and the address's failed attempts are
//     counted: past Options.MaxFailedAuth a minute (20) it gets HTTP 429
//     before any upgrade. No compression is negotiated;
//   - one connection per token: a new connection with the same token
//     REPLACES the old one, which gets error "replaced" and is closed. A
//     reload or a network change leaves a half-open old socket behind;
//     refusing the new one would lock the LHA out until TCP notices. The
//     LHA's round state is kept: a round_start it has not answered is sent
//     again, an update it already sent is not accepted twice;
//   - a forecast-only visit (protocol.ForecastOnly beside the token, as
//     client --forecast dials) is authenticated and counted like any
//     handshake, gets the frames a join starts with (Coordinator.Visit)
//     and a normal close, and is never registered: the LHA's live
//     connection is not replaced and stays online and ready;
//   - the websocket read limit is protocol.FrameSize(model size): a larger
//     frame closes the socket with status 1009 (message too big);
//   - every binary frame is acknowledged at once with the same accepted
//     message and buffered undecoded (the first per LHA and window; later
//     ones are only counted); at the window's close it is decoded and
//     checked, and at the release its sender gets the verdict (none for a
//     counted update, a dummy, or an update from an LHA not picked): updates
//     for another round than the open one (late, replayed, unknown, or
//     arriving outside a window) stale_round, a second one
//     duplicate_update, wrong length or
//     NaN/±Inf bad_update; none of these changes the aggregate, the
//     budget or the connection; a malformed frame gets bad_frame and its
//     socket is closed;
//   - browsers: the Origin must be the coordinator's own host or match the
//     study's origin patterns (websocket.AcceptOptions.OriginPatterns);
//     clients without an Origin header (native) are accepted;
//   - each connection has a bounded outbox; a client too slow to take its
//     messages is disconnected rather than slowing the rounds;
//   - frames in flight are bounded (Options.FramesInFlight, by default
//     max(16, 2×GOMAXPROCS)): a connection takes a slot once a frame's
//     header has arrived, reads the body into a pooled buffer, and gives
//     the slot back once the body is buffered.
//     Bodies waiting for a slot stay in the kernel's socket buffers, so
//     reading a burst of updates costs O(slots × model); the window then
//     keeps at most one frame per LHA until it closes (at most N frames;
//     before the schedule, updates were aggregated as they arrived and a
//     round cost O(slots × model) in all). A body not received within
//     Options.FrameReadTimeout (10 s) closes the connection, so a stalled
//     sender holds its slot no longer than that.
//
// Round results are encoded once and the same bytes go to every client.
package server
