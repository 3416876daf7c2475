//go:build js && wasm

package main

import (
	"context"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/ui"
)

// connect joins the study behind the page's join link with a
// shared/session session over the browser's WebSocket, keeping the local
// DP-SGD accountant of a study in localStorage across reloads.
var connect = ui.DialClient(&session.Options{Yield: yield, Dial: dial, Accounts: accountStore()})

// The page's published and issued forecasts are kept in localStorage too
// (ui.Publish, ui.IssuedStore).
func init() { ui.PublishStore, ui.IssuedStore = accountStore(), accountStore() }

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
func dial(ctx context.Context, url string, protocols []string) (session.Conn, error) {
	// The join token travels as a subprotocol: the one header a page
	// can set on a WebSocket.
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: protocols})
	if err != nil {
		return nil, err
	}
	return browserConn{ws}, nil
}

// browserConn adapts the browser's WebSocket to session.Conn.
type browserConn struct{ ws *websocket.Conn }

func (c browserConn) Read(ctx context.Context, limit int64) (protocol.Kind, []byte, error) {
	c.ws.SetReadLimit(limit)
	typ, b, err := c.ws.Read(ctx)
	if err != nil {
		return 0, nil, err
	}
	if typ == websocket.MessageBinary {
		return protocol.Binary, b, nil
	}
	return protocol.Text, b, nil
}

func (c browserConn) Write(ctx context.Context, kind protocol.Kind, frame []byte) error {
	typ := websocket.MessageText
	if kind == protocol.Binary {
		typ = websocket.MessageBinary
	}
	return c.ws.Write(ctx, typ, frame)
}

func (c browserConn) Close(code session.CloseCode, reason string) error {
	if code == session.CloseAbort {
		return c.ws.CloseNow()
	}
	return c.ws.Close(websocket.StatusCode(code), reason)
}
