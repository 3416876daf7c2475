package study

import (
	"sync"
	"time"
)

// Defaults of the failed-handshake limit of a driver (serve, the worker).
const (
	// DefaultMaxFailedAuth is how many refused handshakes (no or an
	// unknown join token) one address may make per FailedAuthWindow
	// before it is refused outright (HTTP 429).
	DefaultMaxFailedAuth = 20
	// FailedAuthWindow is the window of the counts.
	FailedAuthWindow = time.Minute
	// MaxTrackedAddrs bounds the addresses counted in one window; beyond
	// it, new addresses share one count, so memory stays bounded whatever
	// the number of sources.
	MaxTrackedAddrs = 4096
)

// AuthFailures counts refused handshakes per address in fixed windows.
// It only ever limits failures: a driver checks a handshake's token
// first, and a valid token is accepted whatever its address's count (LHAs
// may share a NAT address with an attacker). Safe for concurrent use.
type AuthFailures struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	start  time.Time
	n      map[string]int
}

// overflowKey is the shared key of the addresses beyond MaxTrackedAddrs.
const overflowKey = "*"

// NewAuthFailures returns counts that allow max failures per address per
// window (max ≤ 0: DefaultMaxFailedAuth; window ≤ 0: FailedAuthWindow).
func NewAuthFailures(max int, window time.Duration) *AuthFailures {
	if max <= 0 {
		max = DefaultMaxFailedAuth
	}
	if window <= 0 {
		window = FailedAuthWindow
	}
	return &AuthFailures{max: max, window: window, n: map[string]int{}}
}

// Fail counts a refused handshake from addr (a driver's key for an
// address: an IPv4 address, an IPv6 /64) at now, and returns its count in
// the current window: over Max, the driver refuses it outright.
func (f *AuthFailures) Fail(addr string, now time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.start) >= f.window || now.Before(f.start) {
		f.start = now
		clear(f.n)
	}
	if _, ok := f.n[addr]; !ok && len(f.n) >= MaxTrackedAddrs {
		addr = overflowKey
	}
	f.n[addr]++
	return f.n[addr]
}

// Max is the number of failures allowed per address and window.
func (f *AuthFailures) Max() int { return f.max }

// Window is the length of a window.
func (f *AuthFailures) Window() time.Duration { return f.window }

// Tracked returns the number of addresses counted in the current window.
func (f *AuthFailures) Tracked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.n)
}
