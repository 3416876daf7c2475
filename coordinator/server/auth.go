package server

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
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

// Defaults of the failed-attempt limit (Options.MaxFailedAuth).
const (
	// DefaultMaxFailedAuth is how many refused handshakes an address may
	// make per FailedAuthWindow before it is answered HTTP 429.
	DefaultMaxFailedAuth = 20
	// FailedAuthWindow is the window of the failed-attempt counts.
	FailedAuthWindow = time.Minute
	// maxTrackedAddrs bounds the addresses counted in a window; beyond
	// it, new addresses share one count (memory stays bounded whatever
	// the number of sources).
	maxTrackedAddrs = 4096
)

// failures counts refused handshakes per address in fixed windows.
type failures struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	start  time.Time
	n      map[netip.Prefix]int
}

func newFailures(max int, window time.Duration) *failures {
	return &failures{max: max, window: window, n: map[netip.Prefix]int{}}
}

// overflow is the shared key of the addresses beyond maxTrackedAddrs.
var overflow = netip.PrefixFrom(netip.IPv6Unspecified(), 0)

// addrKey is the unit a limit applies to: an IPv4 address, or the /64 of
// an IPv6 address (one host usually holds a whole /64).
func addrKey(host string) netip.Prefix {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return overflow
	}
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}

// fail counts a refused handshake of host at now. It returns the count
// in the current window and whether it is the first (for logging once).
func (f *failures) fail(host string, now time.Time) (n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.start) >= f.window || now.Before(f.start) {
		f.start = now
		clear(f.n)
	}
	k := addrKey(host)
	if _, ok := f.n[k]; !ok && len(f.n) >= maxTrackedAddrs {
		k = overflow
	}
	f.n[k]++
	return f.n[k]
}

// tracked returns the number of addresses counted in the current window.
func (f *failures) tracked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.n)
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
	host := remoteHost(r)
	n := s.fails.fail(host, time.Now())
	if n > s.fails.max {
		s.m.refused.WithLabelValues("rate_limited").Inc()
		w.Header().Set("Retry-After", strconv.Itoa(int(s.fails.window/time.Second)))
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
