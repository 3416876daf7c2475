// Package object is a study's Durable Object on Cloudflare Workers, in Go:
// the connections' rules (the join token checked at the handshake, failed
// attempts limited per address, origins, frame size, one
// connection per token) around coordinator/study's Coordinator, which
// runs the rounds exactly as in serve (public schedule, buffering,
// verdicts, commit before release). It holds no socket, no timer and no
// storage: the JavaScript Durable Object (coordinator/worker/js) owns
// those and calls in through the worker's http.Handler (coordinator/worker,
// built with github.com/syumai/workers) with each event and the time it
// happened. Every call answers with [Effects]: the state bytes to store
// before anything else of the call goes out, frames to send, sockets to
// close, and when the alarm should fire next. The package builds natively
// too, so that its rules are tested without a JavaScript runtime.
//
// # Time
//
// Only [Object.Alarm] moves the schedule on: the Durable Object sets its
// alarm to [Effects.Alarm] after every call, and the Coordinator acts at
// the schedule's ticks with the ticks' times, so that a release never
// depends on an arrival. A join or a leave ticks the Coordinator only
// while the schedule waits for LHAs (the start quorum, or the quorum
// after a restart) and the alarm's time has not come. Alarms run at least
// once and may be late: an alarm with nothing due changes nothing, and a
// late one does what was due, in order.
//
// # What is stored, and what survives a restart
//
// The committed state ([study.State]: genesis, events, the last noised
// model, participation, t₀, the finish), written by a [study.MemStore]
// and handed out as [Effects.State] whenever it changed: the Durable
// Object writes it (in chunks, see js/worker.mjs) and only then sends
// what the call produced, so a round is durable before it is released.
// An open round lives in memory only (the websockets are held without
// hibernation, so memory lasts as long as a connection): after a restart
// it is abandoned — nothing of it was released, nothing is owed, no
// update or un-noised sum is ever stored — and the study resumes at the
// first slot of its schedule after the quorum is back or the restart
// grace has passed. The last committed round's result goes to every LHA
// that (re)joins.
//
// # A study with a helper
//
// A call cannot wait for the network, so the helper is asked through the
// effects: at a window's close the object's study.HelperFunc keeps the
// round's report set ([Effects.Forwarded], stored with the state before
// anything goes out, and handed back to [New] after a restart), asks for
// one POST to the helper ([Effects.Fetch]) and answers
// study.ErrHelperPending; the Coordinator keeps the round closed.
// [Object.HelperAnswer] hands the helper's answer back and ticks the
// Coordinator, which combines the shares, or abandons the round (nothing
// released, no budget spent, the LHAs told) when the helper is down,
// refuses, or has not answered by the round's release time. The first set
// forwarded for a round stays its set: a reopened round forwards it again.
//
// The helper's key is asked for the same way: the first tick after a
// load asks the Durable Object for a GET of the helper's key
// ([Effects.KeyFetch]), and [Object.HelperKeyAnswer] hands the answer
// back. serve refuses to start when the key is not the study's; the
// object cannot refuse to load, so it keeps its schedule (a refused round
// is abandoned and spends nothing) and says the outcome in the admin
// status ([AdminView].HelperKey) and the log, asking again a minute
// later until the helper answers with the study's key (helperkey.go).
//
// # A top-up
//
// The admin's POST /api/admin/topup comes in as a call too
// ([Object.TopUp]): between rounds, the top-up is recorded in the state
// (stored before the answer, [Effects.Reply], goes out), every websocket
// is closed with [CloseServiceRestart], and the study reopens on the new
// state as after a restart; each LHA receives the top-up in the welcome of
// its reconnection.
package object
