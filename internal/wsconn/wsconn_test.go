package wsconn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// TestConn checks the adapter against a real websocket on loopback: frame
// kinds both ways, the read limit, and that Close's code reaches the peer.
func TestConn(t *testing.T) {
	got := make(chan websocket.StatusCode, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The token comes in the handshake; the server selects the
		// protocol's subprotocol only.
		if tok, err := protocol.ParseAuth(r.Header.Values("Sec-WebSocket-Protocol")); err != nil || tok != "T" {
			http.Error(w, "no token", http.StatusTooManyRequests)
			return
		}
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{protocol.Subprotocol}})
		if err != nil {
			return
		}
		if ws.Subprotocol() != protocol.Subprotocol {
			t.Errorf("selected subprotocol %q", ws.Subprotocol())
		}
		ctx := r.Context()
		for {
			typ, b, err := ws.Read(ctx)
			if err != nil {
				got <- websocket.CloseStatus(err)
				return
			}
			// Echo, and a frame of 100 bytes after "big".
			ws.Write(ctx, typ, b)
			if string(b) == "big" {
				ws.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", 100)))
			}
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	dial := Dialer(nil)
	var pe *protocol.Error
	if _, err := dial(ctx, url, protocol.Subprotocols("wrong")); !errors.As(err, &pe) || pe.Code != protocol.CodeUnauthorized {
		t.Errorf("HTTP 429 before the upgrade: %v, want an unauthorized protocol error", err)
	}
	c, err := dial(ctx, url, protocol.Subprotocols("T"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []protocol.Kind{protocol.Text, protocol.Binary} {
		if err := c.Write(ctx, k, []byte("hi")); err != nil {
			t.Fatal(err)
		}
		kind, b, err := c.Read(ctx, 10)
		if err != nil || kind != k || string(b) != "hi" {
			t.Errorf("echo of a %v frame: %v %q %v", k, kind, b, err)
		}
	}
	if err := c.Close(session.ClosePolicyViolation, "check failed"); err != nil {
		t.Fatal(err)
	}
	if code := <-got; code != websocket.StatusPolicyViolation {
		t.Errorf("peer saw close code %d, want %d", code, websocket.StatusPolicyViolation)
	}

	c, err = dial(ctx, url, protocol.Subprotocols("T"))
	if err != nil {
		t.Fatal(err)
	}
	c.Write(ctx, protocol.Text, []byte("big"))
	if _, _, err := c.Read(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx, 50); err == nil {
		t.Error("a 100-byte frame passed a read limit of 50")
	}
	c.Close(session.CloseAbort, "")
	<-got
}
