package server

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

// tap is an observer on the network path: a TCP relay in front of the
// coordinator that records, for each connection, when how many bytes
// crossed in each direction (what TLS would let a path observer see:
// sizes and times, not contents).
type tap struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex
	conns [][]chunk // by connection, in the order they were accepted
}

type chunk struct {
	at time.Time
	up bool // client → coordinator
	n  int
}

func newTap(t *testing.T, to string) *tap {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{ln: ln, to: to}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			tp.mu.Lock()
			i := len(tp.conns)
			tp.conns = append(tp.conns, nil)
			tp.mu.Unlock()
			go tp.relay(i, c, s, true)
			go tp.relay(i, s, c, false)
		}
	}()
	return tp
}

func (tp *tap) relay(i int, from, to net.Conn, up bool) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			tp.mu.Lock()
			tp.conns[i] = append(tp.conns[i], chunk{time.Now(), up, n})
			tp.mu.Unlock()
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}

// TestWireObserver: an observer of the frames' sizes and times on the
// network cannot tell who was picked. Four LHAs run real sessions (the
// native client) through a tap; m = 2 of N = 4, so q = 1/2 exactly. For
// each LHA and round the observer measures the bytes each way within the
// round's slot and when the LHA's answer left (its first bytes up after
// the slot opened), and guesses "picked" for the upper half of each
// feature (the best split without knowing the direction), as in
// TestTimingAttack. The truth is which LHAs' updates were real (the
// sessions' own record). With truth independent of a feature, the
// correct count is Binomial(n, 1/2); the test fails outside the two-sided
// band of probability 0.001/3 (false-rejection rate ≤ 0.001 over the
// three features). It also checks that every LHA sent exactly the same
// number of bytes over the whole study.
//
// Before this change the same observer named the sampled LHAs in nearly
// every round from the round_start bytes alone (only they got one).
func TestWireObserver(t *testing.T) {
	const n, rounds = 4, 20
	L, slack := 400*time.Millisecond, 80*time.Millisecond
	seed := uint64(3)
	f := start(t, study.File{Settings: protocol.Settings{Name: "wire observer", Epsilon: 100, Rounds: rounds, ExpectedClients: 2, Hidden: []int{4},
		LocalEpochs: 5, RoundLength: study.Duration(L), RoundSlack: study.Duration(slack)}}, lhaNames(n), &seed)
	tp, picked, errs := runTapped(t, f, n)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("LHA %d: %v", i, err)
		}
	}
	checkObserver(t, tp, f, n, rounds, L, picked)
}

// runTapped runs n LHAs' sessions (the native client) on synthetic data
// through a tap in front of f, one connection each in LHA order, and
// returns the tap, which rounds each LHA's answer was real, and each
// session's error.
func runTapped(t *testing.T, f *fixture, n int) (*tap, []map[int]bool, []error) {
	t.Helper()
	data, _, err := synth.Generate(synth.Options{Areas: n, Seed: 3, Days: 61})
	if err != nil {
		t.Fatal(err)
	}
	tp := newTap(t, strings.TrimPrefix(f.http.URL, "http://"))
	link := "http://" + tp.ln.Addr().String() + "/join#"
	picked := make([]map[int]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		// One at a time, so that the tap's connection i is LHA i.
		sess, err := lhaconn.Join(context.Background(), link+f.secrets.LHAs[i], "", &session.Options{ReconnectMax: -1})
		if err != nil {
			t.Fatal(err)
		}
		picked[i] = map[int]bool{}
		one := &series.Dataset{Regions: []*series.Region{data.Regions[i]}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errs[i] = sess.Run(ctx, one, session.Observer{Result: func(r session.Result) {
				if !r.Resent {
					picked[i][r.Round] = r.Sampled
				}
			}})
		}()
	}
	wg.Wait()
	return tp, picked, errs
}

// checkObserver is the observer of TestWireObserver: from the tap's
// sizes and times alone, per LHA and round, it guesses who was picked
// (truth: picked) and fails outside the chance band; every LHA must have
// sent the same number of bytes.
func checkObserver(t *testing.T, tp *tap, f *fixture, n, rounds int, L time.Duration, picked []map[int]bool) {
	t.Helper()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if len(tp.conns) != n {
		t.Fatalf("%d connections through the tap, want %d (no reconnects)", len(tp.conns), n)
	}
	t0 := f.eng.ScheduleStart()
	names := []string{"bytes down in the slot", "bytes up in the slot", "answer time"}
	feats := map[string][]float64{}
	var truth []bool
	ups := make([]int, n)
	nPicked := 0
	for i, cs := range tp.conns {
		for _, c := range cs {
			if c.up {
				ups[i] += c.n
			}
		}
		for k := 1; k <= rounds; k++ {
			open := t0.Add(time.Duration(k-1) * L)
			var down, up float64
			answer := L.Seconds()
			for _, c := range cs {
				if c.at.Before(open) || !c.at.Before(open.Add(L)) {
					continue
				}
				if !c.up {
					down += float64(c.n)
					continue
				}
				if up == 0 {
					answer = c.at.Sub(open).Seconds()
				}
				up += float64(c.n)
			}
			feats[names[0]] = append(feats[names[0]], down)
			feats[names[1]] = append(feats[names[1]], up)
			feats[names[2]] = append(feats[names[2]], answer)
			truth = append(truth, picked[i][k])
			if picked[i][k] {
				nPicked++
			}
		}
	}
	for i := range n {
		if ups[i] != ups[0] {
			t.Errorf("LHA %d sent %d bytes over the study, LHA A %d: the totals differ", i, ups[i], ups[0])
		}
	}
	if nPicked == 0 || nPicked == len(truth) {
		t.Fatalf("%d of %d LHA-rounds picked: nothing to guess", nPicked, len(truth))
	}
	lo, hi := chanceBand(len(truth), 0.001/float64(len(names)))
	t.Logf("%d LHA-rounds, %d picked; chance band %d…%d; each LHA sent %d bytes", len(truth), nPicked, lo, hi, ups[0])
	for _, name := range names {
		correct := splitGuess(feats[name], truth)
		t.Logf("%-24s %3d/%d correct (accuracy %.2f)", name, correct, len(truth), float64(correct)/float64(len(truth)))
		if correct < lo || correct > hi {
			t.Errorf("%s predicts who was picked: %d of %d right, outside the chance band %d…%d", name, correct, len(truth), lo, hi)
		}
	}
}
