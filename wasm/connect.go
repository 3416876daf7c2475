//go:build js && wasm

package main

import (
	"github.com/fedcast/fedcast/internal/wsconn"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/ui"
)

// connect joins the study behind the page's join link with a
// shared/session session over the browser's WebSocket, keeping the local
// DP-SGD accountant of a study in localStorage across reloads.
var connect = ui.DialClient(&session.Options{Yield: yield, Dial: dial, Accounts: accountStore()})

// The page's published and issued forecasts, and its list of what left
// this computer, are kept in localStorage too (ui.Publish, ui.IssuedStore,
// ui.SentStore).
func init() {
	ui.PublishStore, ui.IssuedStore, ui.SentStore = accountStore(), accountStore(), accountStore()
}

// accountStore is localAccounts as a session.AccountStore (a nil
// interface, not a nil pointer, when the browser has no localStorage).
func accountStore() session.AccountStore {
	if a := localAccounts(); a != nil {
		return a
	}
	return nil
}

// dial opens the browser's WebSocket to the coordinator (coder/websocket's
// js build wraps it) as a session.Conn, offering protocols (the
// session's, with its join token).
var dial = wsconn.Dialer(nil)
