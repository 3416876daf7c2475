package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	coordstudy "github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// handshake dials the worker's websocket at base offering protos, as a
// client at address addr (CF-Connecting-IP, which Cloudflare sets and
// workerd passes through), and returns the first message (nil if the
// handshake was refused) and the handshake's HTTP status.
func handshake(t *testing.T, base, addr string, protos []string) (protocol.Message, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws"+base[len("http"):]+"/api/ws", &websocket.DialOptions{
		Subprotocols: protos, HTTPHeader: http.Header{"CF-Connecting-IP": {addr}}})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp.StatusCode
	}
	defer ws.CloseNow()
	ws.SetReadLimit(64 << 20)
	return read(ctx, t, ws), http.StatusSwitchingProtocols
}

// TestHandshakeAuthOnWorkerd is issue 22's item 1 on the Worker, through
// workerd, worker.mjs and the Durable Object: the join token is checked in
// the handshake; a wrong one is answered with an error frame (a browser
// reads no HTTP status) and counted for its address; past
// coordstudy.DefaultMaxFailedAuth failures an address gets HTTP 429 and no
// socket, while another address is still answered; and a valid token from
// the limited address is accepted all the same (LHAs may share a NAT
// address with an attacker). It never negotiates compression.
func TestHandshakeAuthOnWorkerd(t *testing.T) {
	bin := workerdPath(t)
	addr := freeAddr(t)
	s := newStudy(t, []string{"A", "B"}, addr, "--epsilon", "4", "--rounds", "2", "--expected", "2", "--round-length", "3s")
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web"))
	const attacker, other = "198.51.100.7", "198.51.100.8"
	guess := protocol.Subprotocols("guessed-token")
	for i := range coordstudy.DefaultMaxFailedAuth {
		m, code := handshake(t, w.base, attacker, guess)
		if e, ok := m.(*protocol.Error); !ok || e.Code != protocol.CodeUnauthorized {
			t.Fatalf("failed attempt %d: HTTP %d, first message %+v; want the unauthorized error frame", i+1, code, m)
		}
	}
	if m, code := handshake(t, w.base, attacker, guess); code != http.StatusTooManyRequests {
		t.Fatalf("failed attempt %d from one address: HTTP %d (%+v), want 429", coordstudy.DefaultMaxFailedAuth+1, code, m)
	}
	if m, _ := handshake(t, w.base, other, guess); m == nil {
		t.Error("another address was refused outright after the first one's failures")
	} else if e, ok := m.(*protocol.Error); !ok || e.Code != protocol.CodeUnauthorized {
		t.Errorf("a wrong token from another address: %+v, want the unauthorized error frame", m)
	}
	if m, _ := handshake(t, w.base, attacker, nil); m != nil {
		t.Errorf("no token from the limited address: %+v, want HTTP 429", m)
	}
	token := s.links[0][strings.Index(s.links[0], "#")+1:]
	m, code := handshake(t, w.base, attacker, protocol.Subprotocols(token))
	if wl, ok := m.(*protocol.Welcome); !ok || wl.LHA != "A" {
		t.Fatalf("a valid token from the limited address: HTTP %d, first message %+v; want LHA A's welcome", code, m)
	}

	// No compression, even when the client offers it: a dummy's zeros
	// would shrink on the wire (docs/privacy.md, "What an observer on the
	// network sees").
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws"+w.base[len("http"):]+"/api/ws", &websocket.DialOptions{
		Subprotocols: protocol.Subprotocols(s.links[1][strings.Index(s.links[1], "#")+1:]), CompressionMode: websocket.CompressionContextTakeover})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		t.Errorf("the worker negotiated %q: frames would be compressed", ext)
	}
	if wl, ok := read(ctx, t, ws).(*protocol.Welcome); !ok || wl.LHA != "B" {
		t.Fatalf("LHA B's connection: %+v", wl)
	}
	visitKeepsLive(ctx, t, w.base, ws, protocol.ForecastSubprotocols(s.links[1][strings.Index(s.links[1], "#")+1:]))
}

// visitKeepsLive: a forecast-only visit (client --forecast) with the
// token of live's LHA gets the welcome and a normal close, and live is
// not replaced: the next frame it reads answers its own.
func visitKeepsLive(ctx context.Context, t *testing.T, base string, live *websocket.Conn, protos []string) {
	t.Helper()
	v, _, err := websocket.Dial(ctx, "ws"+base[len("http"):]+"/api/ws", &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatal(err)
	}
	defer v.CloseNow()
	if m := read(ctx, t, v); m.Type() != protocol.TypeWelcome {
		t.Fatalf("the visit got %+v, want the welcome", m)
	}
	if _, _, err := v.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after the welcome the visit got %v, want a normal close", err)
	}
	if err := live.Write(ctx, websocket.MessageBinary, []byte("fc")); err != nil {
		t.Fatal(err)
	}
	if m := read(ctx, t, live); m.Type() != protocol.TypeAccepted {
		t.Errorf("the live connection got %+v after the visit, want the answer to its frame", m)
	}
}
