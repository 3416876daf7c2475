package server

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Authentication happens before the websocket upgrade: the join token
// comes in the handshake (protocol.ParseAuth), so an outsider never holds
// a connection, a goroutine waiting for a hello, or any other place that
// an LHA needs. A request with a valid token is always accepted, whatever
// its address (LHAs may share a NAT address with an attacker). A request
// without one is answered at once and costs nothing after its answer;
// failed attempts are counted per address, and past the limit an address
// gets a bare HTTP 429 until its window ends.

// addrKey is the unit the failed-attempt limit applies to: an IPv4
// address, or the /64 of an IPv6 address (one host usually holds a whole
// /64).
func addrKey(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// acceptOptions are the websocket options of every upgrade: the allowed
// origins, the protocol's subprotocol (selected; the token's never
// echoed) and no compression, so a frame's size on the wire is its
// length, whatever its content (a dummy's zeros would compress away).
func (s *Server) acceptOptions() *websocket.AcceptOptions {
	return &websocket.AcceptOptions{OriginPatterns: s.origins, Subprotocols: []string{protocol.Subprotocol},
		CompressionMode: websocket.CompressionDisabled}
}

// authenticate returns the LHA of r's handshake token, or -1 after it has
// answered r itself: an HTTP 429 when r's address is past its limit of
// failed attempts, else the refusal as a protocol error on a websocket
// that is closed at once (a browser cannot read an HTTP status, only
// frames), never read from.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) int {
	token, perr := protocol.ParseAuth(r.Header.Values("Sec-WebSocket-Protocol"))
	if perr == nil {
		if lha := s.tokens.LHA(token); lha >= 0 {
			return lha
		}
	}
	n := s.fails.Fail(addrKey(remoteHost(r)), time.Now())
	if n > s.fails.Max() {
		s.m.refused.WithLabelValues("rate_limited").Inc()
		w.Header().Set("Retry-After", strconv.Itoa(int(s.fails.Window()/time.Second)))
		w.Header().Set("Connection", "close")
		http.Error(w, "too many failed attempts to join from this address: check the join link, then retry in a minute", http.StatusTooManyRequests)
		return -1
	}
	code, reason, msg := protocol.CodeUnauthorized, "unauthorized", "unknown join token"
	switch {
	case errors.Is(perr, protocol.ErrNoToken):
		code, reason, msg = protocol.CodeVersion, "no_token", "the join token must come in the websocket handshake (subprotocol "+protocol.AuthPrefix+"…): this client is older than the coordinator; update it or reload the page"
	case errors.Is(perr, protocol.ErrVersion):
		code, reason, msg = protocol.CodeVersion, "version", perr.Error()
	case perr != nil:
		msg = perr.Error()
	}
	s.m.refused.WithLabelValues(reason).Inc()
	if n == 1 { // once per address and window: a flood does not flood the log
		s.log.Info("websocket refused", "remote", r.RemoteAddr, "reason", reason)
	}
	ws, err := websocket.Accept(w, r, s.acceptOptions())
	if err != nil {
		return -1
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Second)
	ws.Write(ctx, websocket.MessageText, encodeErr(code, 0, "%s", msg))
	cancel()
	ws.CloseNow()
	return -1
}
