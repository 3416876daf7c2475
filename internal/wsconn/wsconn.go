// Package wsconn adapts a github.com/coder/websocket connection to
// session.Conn, the one transport interface of an LHA session. The same
// code serves the native client (coordinator/lhaconn: `fedcast client`,
// the demo, the tests) and the browser (package wasm), where
// coder/websocket's js build wraps the browser's WebSocket.
package wsconn

import (
	"context"
	"net/http"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// Dialer returns a session.Dialer that dials with opt (headers such as
// Origin, the HTTP client and its transport; nil for the defaults) and
// the session's subprotocols, which carry its join token: the one header
// a page can set on a WebSocket. A refusal before the upgrade (HTTP 429:
// too many failed attempts from this address) comes back as a
// *protocol.Error where the platform shows the status (not in a browser).
func Dialer(opt *websocket.DialOptions) session.Dialer {
	return func(ctx context.Context, url string, protocols []string) (session.Conn, error) {
		var o websocket.DialOptions
		if opt != nil {
			o = *opt
		}
		o.Subprotocols = protocols
		ws, resp, err := websocket.Dial(ctx, url, &o)
		if err != nil {
			if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
				return nil, &protocol.Error{Code: protocol.CodeUnauthorized, Message: "too many failed attempts from this address: check the join link, then retry later"}
			}
			return nil, err
		}
		return Wrap(ws), nil
	}
}

// Wrap makes a websocket connection a session.Conn.
func Wrap(ws *websocket.Conn) session.Conn { return conn{ws} }

type conn struct{ ws *websocket.Conn }

func (c conn) Read(ctx context.Context, limit int64) (protocol.Kind, []byte, error) {
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

func (c conn) Write(ctx context.Context, kind protocol.Kind, frame []byte) error {
	typ := websocket.MessageText
	if kind == protocol.Binary {
		typ = websocket.MessageBinary
	}
	return c.ws.Write(ctx, typ, frame)
}

func (c conn) Close(code session.CloseCode, reason string) error {
	if code == session.CloseAbort {
		return c.ws.CloseNow()
	}
	return c.ws.Close(websocket.StatusCode(code), reason)
}
