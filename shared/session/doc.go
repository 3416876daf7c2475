// Package client is one LHA's session with a fedcast coordinator: the same
// code runs in the headless `fedcast client` (native) and in the browser
// (js/wasm; github.com/coder/websocket wraps the browser's WebSocket there).
// It holds no UI and imports no syscall/js: the browser app drives it and
// renders what the [Observer] reports.
//
// # Use
//
//	s, err := client.Join(ctx, "http://127.0.0.1:8080/join#TOKEN", "", nil)
//	if err != nil { … }              // bad link, unknown token, version mismatch
//	defer s.Close()
//	st := s.Study()                   // public parameters: ε, δ, T, m, N, q, S, c, E, H, P, …
//	err = s.Run(ctx, data, client.Observer{
//		State:    func(st client.State) { … },          // waiting, sampled, training, sent, finished
//		Progress: func(round, step, steps int) { … },   // local training progress
//		Sent:     func(o client.Outgoing) { … },        // every message that left this computer
//		Result:   func(r client.Result) { … },          // each round: ε by the coordinator vs recomputed here
//	})
//	w := s.Model()                    // the latest global model (final after finished)
//
// [Join] accepts a join link (http://HOST/join#TOKEN; the token sits in the
// URL fragment so it never reaches HTTP logs) or a websocket URL with a
// separate token. It dials, sends hello and waits for the welcome; it
// returns a *protocol.Error for a refused token.
//
// [Session.Run] computes the LHA's training windows once (series.MakeWindows
// with the study's H, P, smoothing and date range; the earliest
// TrainFraction of each area's windows by target date; all of the LHA's
// areas are one client's data), then loops: on each round_start it trains
// with fl.LocalUpdate from the received global weights and sends the clipped
// Δw, nothing else. It returns nil when the study finishes. When the
// connection drops it redials and re-joins with backoff (see
// [Options.Reconnect]) until ctx ends.
//
// # Checks done here, not trusted to the coordinator
//
//   - each received model's SHA-256 must match the frame's hash, and a
//     round_result for a round already seen (a re-send after a coordinator
//     restart) must carry the same hash: otherwise Run fails with
//     [ErrModelChanged] (a re-noised release);
//   - each round_start's weights must be the model released by the previous
//     round_result ([ErrModelChanged] otherwise);
//   - ε is recomputed from the public parameters and the round log with
//     privacy.Accountant; the round's q and c must equal the study's, and a
//     coordinator ε below the local figure fails Run with [ErrBudgetMismatch];
//   - with [Options.MaxEpsilon] set, the LHA stops training once the local ε
//     would exceed its own limit (it keeps receiving results).
//
// # What leaves this computer
//
// Exactly two kinds of message: hello (the join token) and update (the
// round id and the clipped Δw as float64s, binary layout in package
// protocol). Observer.Sent reports each one's type and size in bytes.
package session
