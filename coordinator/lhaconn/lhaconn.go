package lhaconn

import (
	"context"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/internal/wsconn"
	"github.com/fedcast/fedcast/shared/session"
)

// Dial is the native session.Dialer with coder/websocket's defaults.
func Dial(ctx context.Context, url string, protocols []string) (session.Conn, error) {
	return Dialer(nil)(ctx, url, protocols)
}

// Dialer returns a session.Dialer that dials with opt (headers such as
// Origin, the HTTP client and its transport; nil for the defaults); see
// wsconn.Dialer.
func Dialer(opt *websocket.DialOptions) session.Dialer { return wsconn.Dialer(opt) }

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
