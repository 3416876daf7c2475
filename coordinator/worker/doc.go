// Command worker is the fedcast coordinator on Cloudflare Workers: a Go
// js/wasm program built with github.com/syumai/workers that serves an
// http.Handler to the JavaScript Durable Object of js/worker.mjs (one
// object per study). The object holds the websockets, the storage and the
// alarm; every event goes to this handler with the time it happened, and
// the handler answers with the effects decided by package object (frames
// to send, the state to store first, the next alarm). The public routes
// /api/status and /api/admin/* are served from the same handler.
//
// `make worker` builds it into bin/worker (app.wasm, wasm_exec.js,
// worker.mjs and the workerd config); docs/deploy-cloudflare.md says how
// to run it under workerd and deploy it with wrangler.
package main
