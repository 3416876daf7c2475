// Package session is one LHA's membership in a fedcast study: the
// protocol state machine of the LHA's side, its training data, the local
// training of each round it is sampled in, the checks it makes of the
// coordinator, and what it learns afterwards from the final model (the
// forecast, its ranges, the local test metrics). The same code runs in the
// browser page (package wasm, js/wasm) and in the native `fedcast client`
// and `fedcast demo`.
//
// It knows no transport: it talks to the coordinator over a [Conn] (read a
// frame, write a frame, close) that a [Dialer] opens. The browser dials
// with its WebSocket (package wasm), native programs with
// coordinator/lhaconn, and tests with [Pipe], an in-memory connection. The
// package imports no net/http, no websocket package and no syscall/js,
// and builds with GOOS=js GOARCH=wasm.
//
// # Use
//
//	s, err := session.Join(ctx, "https://HOST/join#TOKEN", "", &session.Options{Dial: lhaconn.Dial})
//	if err != nil { … }              // bad link, refused token, version mismatch, bad study
//	defer s.Close()
//	st := s.Study()                   // public parameters: ε, δ, T, m, N, q, S, c, E, H, P, …
//	err = s.Run(ctx, data, session.Observer{
//		State:    func(st session.State) { … },          // waiting, sampled, training, sent, finished
//		Progress: func(round, step, steps int) { … },    // local training progress
//		Sent:     func(o session.Outgoing) { … },        // every message that left this computer
//		Result:   func(r session.Result) { … },          // each round: ε by the coordinator vs recomputed here
//	})
//	ev, err := session.Evaluate(st, data, s.Model(), nil) // forecasts, hub file, test metrics
//
// [Join] accepts a join link (https://HOST/join#TOKEN; the token sits in
// the URL fragment so it never reaches HTTP logs) or a websocket URL with
// a separate token ([ParseJoinLink] maps one to the other). It dials with
// the token in the handshake (protocol.Subprotocols) and waits for the
// welcome; it returns a *protocol.Error for a refused token.
//
// [Session.Run] prepares the LHA's training windows region by region
// ([PrepareTraining]: the study's H, P, smoothing and date range; the
// earliest TrainFraction of each area's windows by target date; all of the
// LHA's areas are one client's data; with [Options.MaxWindows] a fresh
// random sample per round), then says ready and loops. Every online and
// ready LHA gets every round's round_start and answers it once, protocol.AnswerAfter(time left)
// after it arrived: when picked, with the clipped Δw of fl.LocalUpdate from
// the received global weights (training runs beside the timer; an update
// not ready by then is dropped and a dummy leaves on time); when not
// picked, or sitting the round out, with a dummy of the same size. It
// returns nil when the study finishes. When the
// connection drops it redials and joins again with backoff (see
// [Options.ReconnectMax]) until ctx ends.
//
// # Checks done here, not trusted to the coordinator
//
//   - each received model must match the SHA-256 its frame carries
//     (protocol.Decode; a frame that does not is malformed and ends Run);
//   - a round_result for a round already seen (a re-send after a reconnect
//     or a coordinator restart) must carry the same model hash and ε:
//     otherwise Run fails with [ErrModelChanged] (a re-noised release);
//   - each round_start's weights must be the model released by the previous
//     round_result ([ErrModelChanged] otherwise);
//   - ε is recomputed from the public parameters and the round log with the
//     study's accountant; the round's q, c and δ must equal the study's,
//     and a coordinator ε below the local figure fails Run with
//     [ErrBudgetMismatch];
//   - with [Options.MaxEpsilon] set, the LHA sits out every round that
//     would take the recomputed ε above its own limit (it answers with a
//     dummy and keeps receiving results).
//
// # What leaves this computer
//
// The join token, in the websocket handshake (reported as "hello"); ready
// (no content), once Run starts and again on each reconnection during Run:
// the file is checked and the LHA takes part (every connection starts not
// ready, and only a ready one gets round_start); and one answer per round:
// an update (the round id and the clipped Δw as float64s, binary layout in
// package protocol) or a dummy (zeros of the same length). Observer.Sent
// reports each one's type and size in bytes.
// [Evaluate], [Forecasts] and [Guarded] work on this computer only.
//
// # Driving a session without a network
//
// A test (or a simulation) plays the coordinator on one end of a [Pipe]
// and gives the session the other through Options.Dial; see the package
// example: the coordinator's side encodes protocol messages with
// protocol.Encode and writes them, and reads what the session sends.
package session
