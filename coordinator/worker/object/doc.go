// Package object is the logic of a study's Durable Object on Cloudflare
// Workers: the connections' rules, the public round schedule and the
// release of committed rounds, driven over coordinator/study's engine. It
// holds no socket, no timer and no storage: the JavaScript Durable Object
// (coordinator/worker/js) owns those and calls in through the worker's
// http.Handler (coordinator/worker, built with github.com/syumai/workers)
// with each event and the time it happened; every call answers with
// [Effects]: frames to send, sockets to close, the state bytes to store
// before anything else of the call goes out, and when to wake up next.
// The package builds natively too, so that its rules are tested without
// a JavaScript runtime.
//
// # Schedule
//
// The schedule is serve's (coordinator/server): round k opens at
// t₀ + (k−1)·L, takes updates until L − slack, is aggregated, noised and
// committed at that moment, and is released at the slot's end, when the
// next round opens. Only [Object.Alarm] moves the schedule on, and it
// acts at the schedule's ticks, never at an arrival: the Durable Object's
// alarm is set to [Effects.Alarm] after every call. Alarms run at least
// once and may run late: an alarm with nothing due changes nothing, and a
// late one acts at the ticks it missed, in order, with the ticks' times.
//
// # What survives a restart
//
// Only the committed state ([study.State]: genesis, events, the last
// noised model, t₀, the finish) is written, before the round it commits is
// released. An open round lives in memory only (the websockets are held
// without hibernation, so memory lasts as long as a connection): after a
// restart it is abandoned — nothing of it was released, nothing is owed,
// no un-noised sum or update is ever stored — and the study resumes at the
// first slot of its schedule after the start quorum is back online or the
// restart grace has passed. The last committed round's result goes to
// every LHA that (re)joins.
package object
