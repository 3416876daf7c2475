package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// AttackRoundsEnv sets the number of rounds of TestTimingAttack (default
// 40; e.g. 200 for a longer run).
const AttackRoundsEnv = "FEDCAST_ATTACK_ROUNDS"

// attackStudy is the study of TestTimingAttack: N = 4 (a slow LHA, two fast
// ones, the observer), m = 2, so q = 1/2 exactly; the paper's model (94 KB
// update frames); rounds on a 250 ms schedule with 50 ms slack.
func attackStudy(rounds int) study.File {
	return study.File{Settings: protocol.Settings{Name: "timing attack", Epsilon: 50, Rounds: rounds, ExpectedClients: 2, LocalEpochs: 1,
		RoundLength: study.Duration(250 * time.Millisecond), RoundSlack: study.Duration(50 * time.Millisecond)}}
}

// Delays before the simulated LHAs answer their round_start: the slow LHA
// trains on a large file.
const (
	slowDelay = 100 * time.Millisecond
	fastDelay = 2 * time.Millisecond
)

// attackConn is a bare websocket LHA for the timing attack.
type attackConn struct {
	ws *websocket.Conn
	mu sync.Mutex // writes
}

func attackDial(t *testing.T, f *fixture, token string) *attackConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{Subprotocols: protocol.Subprotocols(token)})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(protocol.MaxText + protocol.FrameSize(f.eng.Study.Params))
	t.Cleanup(func() { ws.CloseNow() })
	c := &attackConn{ws: ws}
	_, ready, _ := protocol.Encode(&protocol.Ready{})
	if err := c.write(websocket.MessageText, ready); err != nil { // counted from now on
		t.Fatal(err)
	}
	return c
}

func (c *attackConn) write(typ websocket.MessageType, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.ws.Write(ctx, typ, b)
}

// read returns the next message and the time it was read.
func (c *attackConn) read(ctx context.Context) (protocol.Message, time.Time, error) {
	typ, b, err := c.ws.Read(ctx)
	at := time.Now()
	if err != nil {
		return nil, at, err
	}
	k := protocol.Text
	if typ == websocket.MessageBinary {
		k = protocol.Binary
	}
	m, err := protocol.Decode(k, b)
	return m, at, err
}

// runLHA answers each round_start that picks it after delay with a small
// update (and no other: this test looks at the coordinator's timing, not
// at the clients', see TestWireObserver) and records the rounds it was
// picked in.
func runLHA(ctx context.Context, c *attackConn, delay time.Duration, sampled map[int]bool, mu *sync.Mutex) {
	for {
		m, _, err := c.read(ctx)
		if err != nil {
			return
		}
		rs, ok := m.(*protocol.RoundStart)
		if !ok || !rs.Picked {
			continue
		}
		mu.Lock()
		sampled[rs.Round] = true
		mu.Unlock()
		go func() {
			time.Sleep(delay)
			w := make([]float64, len(rs.Weights))
			w[0] = 0.01
			_, b, _ := protocol.Encode(&protocol.Update{Round: rs.Round, Weights: w})
			c.write(websocket.MessageBinary, b)
		}()
	}
}

// observation is everything the observer timed.
type observation struct {
	mu       sync.Mutex
	result   map[int]time.Time // round → arrival of its round_result
	status   map[int]time.Time // round → first status poll that showed it
	probes   []probe
	verdicts []verdictSeen
	acks     bool // the coordinator acknowledges binary frames
	rounds   int  // rounds released (from the finished message)
	done     bool // the status showed the finished state
}

type probe struct {
	sent time.Time
	rtt  time.Duration // 0: unanswered
}

type verdictSeen struct {
	at   time.Time
	code protocol.Code
}

// TestTimingAttack is the attacker's view of the round schedule. One LHA
// is slow (it answers 100 ms after its round_start, as with a large file),
// two are fast (2 ms), and a fourth LHA, the observer, never trains: it
// times everything it can see: when each round_result arrives, when
// /api/status changes (polled every 5 ms), and the round-trip time and the
// answers of its own probes (a dummy update every 15 ms, answered by
// not_sampled / stale_round / duplicate_update or an acknowledgement). For
// each of four features it guesses, per round, that the slow LHA took part
// in the rounds of the upper half of the feature (the best rank split
// without knowing the direction), and the test compares with the rounds
// the slow LHA was really sampled in.
//
// With q = 1/2 exactly and guesses that split the rounds in half, the
// number of correct guesses of a feature independent of participation is
// exactly Binomial(n, 1/2), n = rounds − 1. The test fails when a feature's
// count is in the two-sided tail of probability 0.001/4 (Bonferroni over
// the four features): false-rejection rate ≤ 0.001. At n = 39 that is
// ≤ 7 or ≥ 32 correct (accuracy ≤ 0.18 or ≥ 0.82).
//
// The same test run against the coordinator that closed rounds as soon as
// every sampled LHA had answered (before rounds had a public schedule)
// guesses the slow LHA's participation in nearly every round.
func TestTimingAttack(t *testing.T) {
	rounds := 40
	if v := os.Getenv(AttackRoundsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("%s=%q: want a number of rounds ≥ 10", AttackRoundsEnv, v)
		}
		rounds = n
	}
	f := start(t, attackStudy(rounds), []string{"slow", "fast 1", "fast 2", "observer"}, nil)
	dim := f.eng.Study.Params
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	slowSampled := map[int]bool{}
	ignored := map[int]bool{}
	obsConn := attackDial(t, f, f.secrets.LHAs[3])
	slow := attackDial(t, f, f.secrets.LHAs[0])
	fast1 := attackDial(t, f, f.secrets.LHAs[1])
	fast2 := attackDial(t, f, f.secrets.LHAs[2])
	go runLHA(ctx, slow, slowDelay, slowSampled, &mu)
	go runLHA(ctx, fast1, fastDelay, ignored, &mu)
	go runLHA(ctx, fast2, fastDelay, ignored, &mu)

	obs := &observation{result: map[int]time.Time{}, status: map[int]time.Time{}}
	var pending []int // indices of probes waiting for their answer
	released := 0
	finished := make(chan struct{})
	var readErr error // why the observer's reader stopped before the end
	// The observer's reader: results, acknowledgements, errors.
	go func() {
		defer close(finished)
		for {
			m, at, err := obsConn.read(ctx)
			if err != nil {
				readErr = err
				return
			}
			obs.mu.Lock()
			switch m := m.(type) {
			case *protocol.RoundResult:
				if _, ok := obs.result[m.Event.Round]; !ok {
					obs.result[m.Event.Round] = at
				}
				released = max(released, m.Event.Round)
			case *protocol.Accepted:
				obs.acks = true
				if len(pending) > 0 {
					obs.probes[pending[0]].rtt = at.Sub(obs.probes[pending[0]].sent)
					pending = pending[1:]
				}
			case *protocol.Error:
				obs.verdicts = append(obs.verdicts, verdictSeen{at, m.Code})
				if !obs.acks && len(pending) > 0 { // no acknowledgements: the error answers the probe
					obs.probes[pending[0]].rtt = at.Sub(obs.probes[pending[0]].sent)
					pending = pending[1:]
				}
			case *protocol.Finished:
				obs.rounds = m.Rounds
				obs.mu.Unlock()
				return
			}
			obs.mu.Unlock()
		}
	}()
	// The observer's probes: a dummy update for the next round every 15 ms.
	go func() {
		tick := time.NewTicker(15 * time.Millisecond)
		defer tick.Stop()
		zeros := make([]float64, dim)
		for {
			select {
			case <-ctx.Done():
				return
			case <-finished:
				return
			case <-tick.C:
			}
			obs.mu.Lock()
			r := released + 1
			obs.mu.Unlock()
			_, b, _ := protocol.Encode(&protocol.Update{Round: r, Weights: zeros})
			obs.mu.Lock()
			obs.probes = append(obs.probes, probe{sent: time.Now()})
			pending = append(pending, len(obs.probes)-1)
			obs.mu.Unlock()
			if obsConn.write(websocket.MessageBinary, b) != nil {
				return
			}
		}
	}()
	// The observer's status poll, until it shows the last round.
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-ctx.Done():
				return
			default:
			}
			obs.mu.Lock()
			done := obs.done
			obs.mu.Unlock()
			if done {
				return
			}
			resp, err := http.Get(f.http.URL + "/api/status")
			if err == nil {
				var st struct {
					Round int    `json:"round"`
					State string `json:"state"`
				}
				json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				at := time.Now()
				obs.mu.Lock()
				for k := 1; k <= st.Round; k++ {
					if _, ok := obs.status[k]; !ok {
						obs.status[k] = at
					}
				}
				obs.done = st.State == protocol.StateFinished
				obs.mu.Unlock()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	select {
	case <-finished:
		if readErr != nil {
			t.Fatalf("the observer's connection ended before the study: %v", readErr)
		}
	case <-time.After(time.Duration(rounds)*time.Second + time.Minute):
		t.Fatal("the study did not finish")
	}
	select {
	case <-polled:
	case <-time.After(10 * time.Second):
		t.Fatal("the status never showed the end of the study")
	}
	cancel()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if obs.rounds < rounds-1 {
		t.Fatalf("only %d of %d rounds released", obs.rounds, rounds)
	}
	rounds = obs.rounds // the budget may end the study one round early

	// Per round k ≥ 2 (the interval between results k−1 and k): four
	// features.
	var truth []bool
	feats := map[string][]float64{}
	names := []string{"release gap", "status gap", "probe round-trip", "not_sampled answers"}
	for k := 2; k <= rounds; k++ {
		r0, ok0 := obs.result[k-1]
		r1, ok1 := obs.result[k]
		s0, ok2 := obs.status[k-1]
		s1, ok3 := obs.status[k]
		if !ok0 || !ok1 || !ok2 || !ok3 {
			t.Fatalf("round %d: the observer missed a release or a status change", k)
		}
		truth = append(truth, slowSampled[k])
		feats[names[0]] = append(feats[names[0]], r1.Sub(r0).Seconds())
		feats[names[1]] = append(feats[names[1]], s1.Sub(s0).Seconds())
		var sum float64
		var cnt int
		for _, p := range obs.probes {
			if !p.sent.Before(r0) && p.sent.Before(r1) && p.rtt > 0 {
				sum += p.rtt.Seconds()
				cnt++
			}
		}
		feats[names[2]] = append(feats[names[2]], sum/math.Max(1, float64(cnt)))
		ns := 0
		for _, v := range obs.verdicts {
			if !v.at.Before(r0) && v.at.Before(r1) && v.code == protocol.CodeNotSampled {
				ns++
			}
		}
		feats[names[3]] = append(feats[names[3]], float64(ns))
	}
	n := len(truth)
	part := 0
	for _, p := range truth {
		if p {
			part++
		}
	}
	lo, hi := chanceBand(n, 0.001/float64(len(names)))
	t.Logf("n = %d rounds, slow LHA sampled in %d; chance band: %d…%d correct (false-rejection rate ≤ 0.001)", n, part, lo, hi)
	for _, name := range names {
		correct := splitGuess(feats[name], truth)
		t.Logf("%-20s %2d/%d correct (accuracy %.2f)", name, correct, n, float64(correct)/float64(n))
		if correct < lo || correct > hi {
			t.Errorf("%s predicts the slow LHA's participation: %d of %d rounds right, outside the chance band %d…%d",
				name, correct, n, lo, hi)
		}
	}
}

// splitGuess guesses "took part" for the rounds whose feature is in the
// upper half (ties broken by round order) and returns how many guesses
// are right.
func splitGuess(x []float64, truth []bool) int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	guess := make([]bool, len(x))
	for _, i := range idx[len(x)-len(x)/2:] {
		guess[i] = true
	}
	correct := 0
	for i := range truth {
		if guess[i] == truth[i] {
			correct++
		}
	}
	return correct
}

// chanceBand returns the least lo and the largest hi such that a
// Binomial(n, 1/2) count falls below lo or above hi with probability at
// most alpha (two-sided, alpha/2 per side).
func chanceBand(n int, alpha float64) (lo, hi int) {
	// P(X ≤ k) for X ~ Bin(n, 1/2), in log space.
	logC := func(k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c - float64(n)*math.Ln2
	}
	cdf := 0.0
	lo = 0
	for k := 0; k <= n; k++ {
		cdf += math.Exp(logC(k))
		if cdf > alpha/2 {
			lo = k
			break
		}
	}
	return lo, n - lo
}

func TestChanceBand(t *testing.T) {
	// Bin(39, 1/2): P(X ≤ 7) ≈ 3.5e-5 ≤ 1.25e-4 < P(X ≤ 8) ≈ 1.5e-4.
	if lo, hi := chanceBand(39, 0.001/4); lo != 8 || hi != 31 {
		t.Errorf("chanceBand(39, 0.00025) = %d, %d; want 8, 31", lo, hi)
	}
	// Bin(10, 1/2): P(X ≤ 3) ≈ 0.17 ≤ 0.25 < P(X ≤ 4) ≈ 0.38.
	if lo, hi := chanceBand(10, 0.5); lo != 4 || hi != 6 {
		t.Errorf("chanceBand(10, 0.5) = %d, %d; want 4, 6", lo, hi)
	}
}
