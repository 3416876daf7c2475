package acceptance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// lha is one simulated LHA: a shared/session session (the code of `fedcast
// client`) whose TCP connection the test can cut, and the record of every
// model it received.
type lha struct {
	name string
	sess *session.Session

	mu       sync.Mutex
	conn     net.Conn       // current TCP connection
	received map[int]string // round → model hash, as first received
	changed  []string       // a round received again with another hash
	results  int            // round results received (re-sends included)
	resent   int            // of which re-sends
	updates  int            // updates sent
	err      error          // Run's result
	done     chan struct{}  // closed when Run returned
	cuts     int            // connections cut by the test
	dialer   *net.Dialer    // for the websocket's TCP connections
	states   map[string]int // client states seen
	protoErr map[string]int // non-fatal coordinator errors by code
}

// dialOptions makes the session's websocket dial through a transport whose
// connections the test can cut (a network failure, not a close frame).
func (l *lha) dialOptions() *websocket.DialOptions {
	tr := &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := l.dialer.DialContext(ctx, network, addr)
			if err == nil {
				l.mu.Lock()
				l.conn = c
				l.mu.Unlock()
			}
			return c, err
		},
	}
	return &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}}
}

// cut closes the LHA's current TCP connection; the session notices and
// reconnects.
func (l *lha) cut() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return false
	}
	l.conn.Close()
	l.conn = nil
	l.cuts++
	return true
}

// pool runs n LHAs against a coordinator.
type pool struct {
	lhas   []*lha
	cancel context.CancelFunc
}

// startPool joins every token at base and runs the sessions on the given
// per-LHA data (one dataset each) until the study finishes or ctx ends.
// Sessions reconnect (every ≤ reconnectMax) whenever their connection is
// lost, including while the coordinator is down.
func startPool(t *testing.T, ctx context.Context, base string, names, tokens []string, data []*series.Dataset, reconnectMax time.Duration) *pool {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	p := &pool{cancel: cancel}
	t.Cleanup(p.stop)
	for i, tok := range tokens {
		l := &lha{name: names[i], received: map[int]string{}, done: make(chan struct{}), dialer: &net.Dialer{Timeout: 5 * time.Second},
			states: map[string]int{}, protoErr: map[string]int{}}
		sess, err := lhaconn.Join(ctx, base+"/join#"+tok, "", &session.Options{ReconnectMax: reconnectMax, Dial: lhaconn.Dialer(l.dialOptions())})
		if err != nil {
			t.Fatalf("LHA %s: join: %v", names[i], err)
		}
		l.sess = sess
		p.lhas = append(p.lhas, l)
	}
	for i, l := range p.lhas {
		go func() {
			defer close(l.done)
			err := l.sess.Run(ctx, data[i], session.Observer{
				Result: func(r session.Result) {
					l.mu.Lock()
					defer l.mu.Unlock()
					l.results++
					if r.Resent {
						l.resent++
					}
					if h, ok := l.received[r.Round]; ok && h != r.ModelSHA256 {
						l.changed = append(l.changed, fmt.Sprintf("round %d: %s then %s", r.Round, h, r.ModelSHA256))
					} else if !ok {
						l.received[r.Round] = r.ModelSHA256
					}
				},
				Sent: func(o session.Outgoing) {
					if o.Type == "update" {
						l.mu.Lock()
						l.updates++
						l.mu.Unlock()
					}
				},
				State: func(s session.State) {
					l.mu.Lock()
					l.states[string(s)]++
					l.mu.Unlock()
				},
			})
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
		}()
	}
	return p
}

func (p *pool) stop() { p.cancel() }

// wait waits until every session's Run returned or timeout passes.
func (p *pool) wait(timeout time.Duration) error {
	end := time.After(timeout)
	for _, l := range p.lhas {
		select {
		case <-l.done:
		case <-end:
			return fmt.Errorf("LHA %s still running after %v", l.name, timeout)
		}
	}
	return nil
}

// checkAgainst verifies that every model any LHA received is the one the
// ledger records for its round (so nothing was released before its event
// was committed), and that no LHA got two models for one round.
func (p *pool) checkAgainst(e *ledger.Export) (checked int, problems []string) {
	byRound := map[int]string{}
	for _, r := range e.Rounds {
		byRound[r.Round] = r.ModelSHA256
	}
	for _, l := range p.lhas {
		l.mu.Lock()
		for r, h := range l.received {
			checked++
			if lh, ok := byRound[r]; !ok {
				problems = append(problems, fmt.Sprintf("%s received round %d (%.12s) which is not in the ledger", l.name, r, h))
			} else if lh != h {
				problems = append(problems, fmt.Sprintf("%s received round %d as %.12s, the ledger has %.12s", l.name, r, h, lh))
			}
		}
		for _, c := range l.changed {
			problems = append(problems, l.name+": "+c)
		}
		l.mu.Unlock()
	}
	return checked, problems
}

// randomSubset returns k distinct indices of n.
func randomSubset(rng *rand.Rand, n, k int) []int {
	s := rng.Perm(n)[:k]
	sort.Ints(s)
	return s
}
