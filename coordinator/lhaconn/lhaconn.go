package lhaconn

import (
	"context"
	"net/http"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// Dial is the native session.Dialer with coder/websocket's defaults.
func Dial(ctx context.Context, url string, protocols []string) (session.Conn, error) {
	return Dialer(nil)(ctx, url, protocols)
}

// Dialer returns a session.Dialer that dials with opt (headers such as
// Origin, the HTTP client and its transport; nil for the defaults) and
// the session's subprotocols, which carry its join token. A refusal
// before the upgrade (HTTP 429: too many failed attempts from this
// address) comes back as a *protocol.Error.
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

// Join is session.Join with the native dialer when opt has none.
func Join(ctx context.Context, link, token string, opt *session.Options) (*session.Session, error) {
	var o session.Options
	if opt != nil {
		o = *opt
	}
	if o.Dial == nil {
		o.Dial = Dial
	}
	return session.Join(ctx, link, token, &o)
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
