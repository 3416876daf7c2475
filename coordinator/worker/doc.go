// Command worker is the fedcast coordinator on Cloudflare Workers: a Go
// js/wasm program built with github.com/syumai/workers, run by the
// JavaScript Durable Object of js/worker.mjs (one object per study). The
// object holds the websockets, the storage and the alarm and keeps one
// instance of this program alive; every event (a connection, a frame, a
// close, the alarm) goes to the exported binding.call with the time it
// happened, and comes back as the effects decided by package object
// (the state to store first, frames to send, sockets to close, the next
// alarm). The public and admin routes (/api/status, /api/admin/*) are an
// http.Handler served through syumai/workers.
//
// `make worker` builds it into bin/worker (app.wasm, wasm_exec.js,
// worker.mjs and the workerd config); docs/deploy-cloudflare.md says how
// to run it under workerd and deploy it with wrangler.
package main
