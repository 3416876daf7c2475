// Package lhaconn is the native transport of an LHA session
// (shared/session): it dials the coordinator's websocket with
// github.com/coder/websocket and adapts the connection to session.Conn
// (internal/wsconn, which the browser's package wasm uses too).
// `fedcast client`, `fedcast demo` and the acceptance, end-to-end and
// load tests use it.
//
//	s, err := lhaconn.Join(ctx, "http://127.0.0.1:8080/join#TOKEN", "", nil)
//
// is session.Join with Options.Dial set to [Dial]; [Dialer] takes
// websocket.DialOptions (an HTTP client whose connections a test can cut,
// an Origin header).
package lhaconn
