// Command wasm is the browser entry point of fedcast (GOOS=js GOARCH=wasm):
// it reads the page's URL (/join#TOKEN or /admin#TOKEN), builds the ui
// package's Root component and runs vugu's render loop.
//
// It is the only place that knows the browser: the LHA session itself is
// package shared/session (the same code as `fedcast client`), which
// reaches the coordinator through a session.Conn; connect.go dials the
// browser's WebSocket (github.com/coder/websocket's js build) and adapts it
// to that interface, and main.go gives the page the browser's timers
// (yield) and fetch. Imports go one way: wasm imports ui and shared/...;
// ui imports only shared/...; nothing imports wasm.
//
// Build it with `make web` (see package wasm/webbuild); the coordinator
// serves the result (coordinator/web).
package main
