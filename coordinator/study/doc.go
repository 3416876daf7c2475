// Package study holds a live study's configuration, its round engine and
// the round driver, as plain functions over an explicit, serialisable state.
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
// # Pure: the same round logic in every driver
//
// This package holds the whole round logic of a live study and imports no
// transport and no storage: no coordinator/ledger, no SQLite, no net/http,
// no websocket (internal/archtest checks it), and it builds with GOOS=js
// GOARCH=wasm. Three drivers use it the same way: `fedcast serve`
// (coordinator/server: websockets, SQLite ledger), the Cloudflare worker
// (a Durable Object: a JavaScript shell holding the websockets and the
// storage, calling this package compiled to wasm), and the tests and
// simulations (a fake transport and clock, a [MemStore]). The time is
// always passed in; randomness is injected (see Randomness).
//
// The API, in the order a driver uses it:
//
//	st := &MemStore{}                       // or l.Store() of the SQLite ledger in serve, Durable Object storage in the worker
//	e, err := Open(f, raw, st, &Options{})  // new study, or resume from st.Load()
//	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, now)
//	err = c.Join(lha, now, deliver)         // an LHA authenticated: welcome, last result or finished (not ready yet)
//	c.Ready(lha, now, reply)                // its ready frame: it counts towards the quorum; the open round's round_start
//	c.Frame(lha, b, now, reply)             // a binary frame: reply(ack) at once, frame held in memory
//	code, msg := TextVerdict(b)             // any other text frame: an error, answered at once
//	next, err := c.Tick(now)                // the schedule: open / close, aggregate, commit / release / finish
//	st := c.Status()                        // the public status (/api/status): a snapshot taken at ticks
//	c.Stop()                                // shutting down: the open round is abandoned
//
// [Transport] is how the Coordinator reaches the connections (Send,
// Broadcast, Drop, Online, Connected); [Next] says when to Tick again (at
// Next.At, or earlier whenever an LHA connects or leaves; an early or
// repeated Tick does nothing that is not due). [Store] is where the
// committed state lives: Load, Init, Commit, Finish, SetScheduleStart,
// every write idempotent (a repeated Commit of round k with the same model
// is a no-op: a worker's alarms fire at least once). [State] is the
// committed state a Store holds, serialisable with
// [State.MarshalBinary] / [State.UnmarshalBinary] (JSON, bit-exact).
//
// # Commit before release; an open round does not survive a restart
//
// A round is committed (its privacy event and noised model, through
// Store.Commit, durably) when its window closes, and released only at its
// slot's end, after Commit returned. What an open round holds — the
// buffered frames, the running sum, which LHAs were admitted — lives in
// memory only and is never written anywhere: if the process (or the
// Durable Object) stops while a round is open, that round is abandoned.
// Nothing of it was released and nothing is owed; no un-noised sum is ever
// on disk. After a restart the study resumes at the next free slot of the
// public schedule, once its quorum is back or the restart grace has
// passed, and the last committed round is released again to everyone who
// joins. serve and the worker behave the same.
//
// A Durable Object drives it like this: on each websocket message it calls
// Frame (binary) or answers with TextVerdict (text) on connections whose
// handshake token was checked with [Tokens] (failed handshakes counted in
// [AuthFailures]); on each alarm and each connect or close it calls
// Tick(now) and sets its next alarm to Next.At; its Store persists the
// state in Durable Object storage (a MemStore whose S.MarshalBinary is
// written after every call that raised Changes will do: a Tick that
// commits a round returns at once, and the round's release only comes
// from a later Tick, normally one slack later).
// If the object is evicted, the next instance Opens the stored State and
// the study resumes as after any restart.
//
// # Schedule and timing
//
// Rounds follow the fixed public schedule of the study file: t₀ is the
// moment the start quorum was first online and ready (recorded by
// Store.SetScheduleStart); slot j starts at t₀ + j·L; the round opened at
// a slot's start takes frames until L − slack, is then aggregated, noised
// and committed, and is released at the slot's end. Every binary frame is
// acknowledged at once with the same message, whatever it holds, and is
// decoded only when the window closes; its verdict comes with the release
// (see [Coordinator.Frame] for the ordering rule). So every time a
// non-admin can observe is a function of t₀, L and the slack.
//
// # Engine
//
// [Engine] runs the rounds of one study over shared/fl (sampling,
// re-clipping aggregation, noise, accounting: nothing is reimplemented
// here) and a [Store]. It holds no sockets: the [Coordinator] calls
//
//	r, err := e.BeginAt(t, online)   // budget gate, Poisson sample from all N LHAs: open
//	err = e.Submit(lha, round, Δw)   // while open, any number of times
//	res, err := e.CompleteAt(clock)  // aggregating: mean ÷ m + noise, store commit: committed
//	err = e.Release()                // after sending res: released, the next Begin may follow
//	err = e.Abandon()                // instead of Complete: abandoned, aggregate reset
//
// and releases res only after Complete returned: Complete writes the round's
// event and model to the store before it changes the state, so a
// model is never released without its event recorded. A round's phase
// ([Phase]) makes its life cycle explicit: open → aggregating → committed
// → released, or abandoned; every transition that discards a round's
// aggregate (Abandon, a failed commit) resets it, so no update is ever
// counted in two rounds, and a committed round cannot be abandoned. [Open]
// on a store that holds the study resumes after validating it (rounds
// numbered 1…k, k ≤ T, each with the study's q, c, δ and the ε the
// accountant gives, finite models of the right size): the global model is
// the last committed one, the accountant is recomposed from the committed
// events, the current round is the next one; nothing committed is ever
// computed again.
//
// # Cyclic FL
//
// A study with strategy "cyclic" runs on the same Engine and Coordinator:
// an engine round is then one turn of the public timetable (one LHA, one
// slot of the schedule; fl.CyclicOrder from the study file's SHA-256),
// completed by a hand-off (fl.HandOff) that is committed before its
// release, with each LHA's own account (fl.CyclicAccountant). See
// cyclic.go and docs/strategies.md.
//
// # Randomness
//
// Sampling and noise come from privacy.NewSecureRand unless an insecure seed
// is given (research mode): then the initial model, sampling and noise come
// from fl.NewRand(seed, fl.StreamInit / StreamSampling / StreamNoise),
// exactly as fltest.Simulation draws them, and updates are summed in LHA order,
// so a live study with every sampled LHA answering gives the same model as
// the in-process simulation. A resumed research study fast-forwards its
// streams over the committed rounds so that it continues the same sequence.
package study
