package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// fakeStudy is a valid public study of H=3 and a linear model (4
// parameters): N=2 LHAs, m=1 per round, two rounds.
func fakeStudy() protocol.Study {
	return protocol.Study{Protocol: protocol.Version,
		Clients: 2, SampleRate: 0.5, NoiseMultiplier: 1,
		Layers: []int{3, 1}, Params: 4,
		Settings: protocol.Settings{Name: "pipe", Epsilon: 50, Delta: 1e-5, Rounds: 2,
			ExpectedClients: 1, ClipNorm: 1,
			LocalEpochs: 2, LearningRate: 0.01,
			History: 3, Horizon: 1, Smoothing: "centered", TrainFraction: 0.8, Accountant: "rdp",
			RoundLength: protocol.Duration(60000 * time.Millisecond), RoundSlack: protocol.Duration(6000 * time.Millisecond)}}
}

// coordinator plays the coordinator's side of one pipe end: it checks what
// the session sends and answers with frames the test scripts.
type coordinator struct {
	t    *testing.T
	conn Conn
}

func (c coordinator) send(m protocol.Message) {
	c.t.Helper()
	k, b, err := protocol.Encode(m)
	if err != nil {
		c.t.Fatalf("encode %s: %v", m.Type(), err)
	}
	if err := c.conn.Write(context.Background(), k, b); err != nil {
		c.t.Errorf("send %s: %v", m.Type(), err)
	}
}

// recv reads the session's next message, passing over its ready (sent
// once Run starts; TestSessionSaysReady checks it).
func (c coordinator) recv() (protocol.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		k, b, err := c.conn.Read(ctx, protocol.FrameSize(1<<10))
		if err != nil {
			return nil, err
		}
		m, err := protocol.Decode(k, b)
		if _, ready := m.(*protocol.Ready); ready && err == nil {
			continue
		}
		return m, err
	}
}

// awaitReady reads the session's next message and fails unless it is
// ready: a coordinator sends round_start to ready connections only.
func (c coordinator) awaitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, b, err := c.conn.Read(ctx, protocol.MaxText)
	if err != nil {
		return err
	}
	if m, err := protocol.Decode(k, b); err != nil || m.Type() != protocol.TypeReady {
		return fmt.Errorf("the session's first message is %v (%v), want ready", m, err)
	}
	return nil
}

// pickedRounds plays rounds 1, 2, 3 with this LHA picked in each, from
// w[r−1] to w[r], released by release, then the end of the study; the
// LHA's budget covers two rounds: it must answer rounds 1 and 2 with
// updates and round 3 with a dummy.
func (c coordinator) pickedRounds(st protocol.Study, w [][]float64, release func(protocol.Study, int, []float64) *protocol.RoundResult) error {
	for r := 1; r <= 3; r++ {
		c.send(&protocol.RoundStart{Round: r, TimeLeft: answerIn, Picked: true, Weights: w[r-1]})
		m, err := c.recv()
		if err != nil {
			return err
		}
		if u, ok := m.(*protocol.Update); !ok || u.Round != r || u.Dummy != (r == 3) {
			return errors.New("no update for a round within the example-level budget, or no dummy past it")
		}
		c.send(&protocol.Accepted{})
		c.send(release(st, r, w[r]))
	}
	c.send(&protocol.Finished{Rounds: 3, Reason: "rounds", ModelSHA256: protocol.HashHex(w[3])})
	return nil
}

// runSkips runs s on the test windows to the end of the study, waits for
// the scripted coordinator's side, and returns the rounds s sat out.
func runSkips(t *testing.T, ctx context.Context, s *Session, serverDone <-chan error) []Skip {
	t.Helper()
	var skips []Skip
	x, y := windows()
	if err := s.RunWindows(ctx, x, y, Observer{Skipped: func(k Skip) { skips = append(skips, k) }}); err != nil {
		t.Fatal(err)
	}
	if err := <-serverDone; err != nil {
		t.Fatalf("coordinator side: %v", err)
	}
	return skips
}

// released is round r's event and model as a coordinator releases them,
// with ε from the study's accountant.
func released(st protocol.Study, r int, w []float64) *protocol.RoundResult {
	acc := privacy.NewRDP(nil)
	acc.Compose(st.SampleRate, st.NoiseMultiplier, r)
	eps, _ := acc.Epsilon(st.Delta)
	return &protocol.RoundResult{Weights: w, Event: protocol.Event{Round: r, SampleRate: st.SampleRate,
		NoiseMultiplier: st.NoiseMultiplier, Delta: st.Delta, Epsilon: eps, ModelSHA256: protocol.HashHex(w), Accountant: string(st.Accountant)}}
}

// pipeDialer hands out one in-memory connection per dial and gives the
// coordinator's end to the test.
type pipeDialer struct {
	mu     sync.Mutex
	dials  int
	ends   chan Conn
	url    string
	tokens []string // the join token of each dial's handshake
}

func newPipeDialer() *pipeDialer { return &pipeDialer{ends: make(chan Conn, 4)} }

func (d *pipeDialer) dial(ctx context.Context, url string, protocols []string) (Conn, error) {
	a, b := Pipe()
	tok, err := protocol.ParseAuth(protocols)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.dials++
	d.url = url
	d.tokens = append(d.tokens, tok)
	d.mu.Unlock()
	d.ends <- b
	return a, nil
}

// answerIn is the time left in the tests' round_starts: the session
// answers a fifth of it before the window closes (protocol.AnswerAfter).
const answerIn = 500 * time.Millisecond

// windows are training windows of H=3 (x) and targets (y).
func windows() (x, y []float64) {
	for i := range 20 {
		v := float64(i % 5)
		x = append(x, v, v+1, v+2)
		y = append(y, v+3)
	}
	return x, y
}

// TestSessionOverPipe drives a whole study through the session with no
// network: join (hello, welcome), a round the LHA is sampled in (update,
// acknowledgement, release), a round it is not, a lost connection with a
// redial whose welcome re-sends the log, and the end of the study.
func TestSessionOverPipe(t *testing.T) {
	st := fakeStudy()
	d := newPipeDialer()
	w0 := []float64{0.1, 0.2, 0.3, 0}
	w1 := []float64{0.2, 0.1, 0.3, 0.5}
	w2 := []float64{0.3, 0.1, 0.2, 0.4}
	r1, r2 := released(st, 1, w1), released(st, 2, w2)

	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			c := coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			c.send(&protocol.RoundStart{Round: 1, TimeLeft: answerIn, Picked: true, Weights: w0})
			m, err := c.recv()
			if err != nil {
				return err
			}
			u, ok := m.(*protocol.Update)
			if !ok || u.Round != 1 || len(u.Weights) != st.Params {
				return errors.New("the session did not answer round_start 1 with an update of 4 numbers")
			}
			c.send(&protocol.Accepted{})
			c.send(r1)
			// The connection drops; the session redials.
			c.conn.Close(CloseAbort, "")
			c = coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateRunning, Log: []protocol.Event{r1.Event}})
			c.send(r1) // a re-sent release of round 1: same hash, so fine
			// Round 2: not picked; the answer is a dummy of an update's size.
			c.send(&protocol.RoundStart{Round: 2, TimeLeft: answerIn, Weights: w1})
			if m, err = c.recv(); err != nil {
				return err
			}
			if u, ok := m.(*protocol.Update); !ok || u.Round != 2 || !u.Dummy || len(u.Weights) != st.Params {
				return errors.New("the session did not answer an unpicked round_start with a dummy of 4 numbers")
			}
			c.send(&protocol.Accepted{})
			c.send(r2)
			c.send(&protocol.Finished{Rounds: 2, Epsilon: r2.Event.Epsilon, Reason: "rounds", ModelSHA256: r2.Event.ModelSHA256})
			return nil
		}()
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	if d.url != "wss://coordinator.example/api/ws" || len(d.tokens) == 0 || d.tokens[0] != "TOKEN" {
		t.Errorf("dialled %q, want the websocket URL of the join link", d.url)
	}
	if s.LHA() != "Kreis A" || s.Study().Name != "pipe" {
		t.Errorf("joined as %q in study %q", s.LHA(), s.Study().Name)
	}
	var (
		sent     []string
		results  []Result
		accepted []int
		states   []State
	)
	x, y := windows()
	err = s.RunWindows(ctx, x, y, Observer{
		State:    func(st State) { states = append(states, st) },
		Sent:     func(o Outgoing) { sent = append(sent, o.Type) },
		Result:   func(r Result) { results = append(results, r) },
		Accepted: func(r int) { accepted = append(accepted, r) },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := <-serverDone; err != nil {
		t.Fatalf("coordinator side: %v", err)
	}
	// Every connection starts not ready: the redial says ready again.
	if got := strings.Join(sent, ","); got != "hello,ready,update,hello,ready,dummy" {
		t.Errorf("sent %s, want hello,ready,update,hello,ready,dummy", got)
	}
	if len(accepted) != 1 || accepted[0] != 1 {
		t.Errorf("accepted %v, want [1]", accepted)
	}
	if len(results) != 3 || !results[0].Sampled || results[0].Resent || !results[1].Resent || results[2].Sampled || results[2].Round != 2 {
		t.Errorf("results %+v: want round 1 sampled, its re-send, round 2 not sampled", results)
	}
	for _, r := range results {
		if !EpsilonMatches(r.Epsilon, r.LocalEpsilon) {
			t.Errorf("round %d: ε %v from the coordinator, %v recomputed", r.Round, r.Epsilon, r.LocalEpsilon)
		}
	}
	if !strings.Contains(statesString(states), "reconnecting") || states[len(states)-1] != StateFinished {
		t.Errorf("states %v: want a reconnect and finished last", states)
	}
	if d.dials != 2 || d.tokens[1] != "TOKEN" {
		t.Errorf("%d dials with tokens %q, want 2 with the link's", d.dials, d.tokens)
	}
	if got := protocol.HashHex(s.Model()); got != r2.Event.ModelSHA256 {
		t.Errorf("final model %s, want round 2's %s", got, r2.Event.ModelSHA256)
	}
}

func statesString(ss []State) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(string(s) + " ")
	}
	return b.String()
}

// TestSessionRefusesRenoisedModel: a second release of a round with a
// different model ends the session with ErrModelChanged and closes the
// connection as a policy violation.
func TestSessionRefusesRenoisedModel(t *testing.T) {
	st := fakeStudy()
	d := newPipeDialer()
	go func() {
		c := coordinator{t, <-d.ends}
		c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateRunning})
		c.send(released(st, 1, []float64{1, 2, 3, 4}))
		c.send(released(st, 1, []float64{1, 2, 3, 5}))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "ws://coordinator.example/api/ws", "TOKEN", &Options{Dial: d.dial, ReconnectMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	x, y := windows()
	err = s.RunWindows(ctx, x, y, Observer{})
	if !errors.Is(err, ErrModelChanged) {
		t.Fatalf("Run: %v, want ErrModelChanged", err)
	}
	p := s.ws.(*pipeEnd).p
	<-p.closed
	if p.code != ClosePolicyViolation {
		t.Errorf("closed with %d, want %d", p.code, ClosePolicyViolation)
	}
}

func TestJoinErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Join(ctx, "http://h/join#T", "", nil); !errors.Is(err, ErrNoDialer) {
		t.Errorf("no dialer: %v", err)
	}
	if _, err := Join(ctx, "http://h/join", "", &Options{Dial: newPipeDialer().dial}); !errors.Is(err, ErrBadLink) {
		t.Errorf("no token: %v", err)
	}
	// A refused token: the coordinator's error is Join's.
	d := newPipeDialer()
	go func() {
		c := coordinator{t, <-d.ends}
		c.send(&protocol.Error{Code: protocol.CodeUnauthorized, Message: "unknown token"})
	}()
	var pe *protocol.Error
	if _, err := Join(ctx, "http://h/join#T", "", &Options{Dial: d.dial}); !errors.As(err, &pe) || pe.Code != protocol.CodeUnauthorized {
		t.Errorf("refused token: %v", err)
	}
}

// TestPipe checks the in-memory connection itself: order, kinds, the
// read limit, and that a close reaches the other end after the queued
// frames.
func TestPipe(t *testing.T) {
	ctx := context.Background()
	a, b := Pipe()
	a.Write(ctx, protocol.Text, []byte("one"))
	a.Write(ctx, protocol.Binary, []byte("two"))
	a.Close(CloseNormal, "")
	for _, want := range []struct {
		k protocol.Kind
		s string
	}{{protocol.Text, "one"}, {protocol.Binary, "two"}} {
		k, p, err := b.Read(ctx, 10)
		if err != nil || k != want.k || string(p) != want.s {
			t.Errorf("read %v %q %v, want %v %q", k, p, err, want.k, want.s)
		}
	}
	if _, _, err := b.Read(ctx, 10); !errors.Is(err, ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
	if err := b.Write(ctx, protocol.Text, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	a, b = Pipe()
	a.Write(ctx, protocol.Text, []byte("too long"))
	if _, _, err := b.Read(ctx, 3); err == nil {
		t.Error("a frame over the read limit was read")
	}
	a, _ = Pipe()
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := a.Read(c, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("read with an ended context: %v", err)
	}
}

// TestWelcomeState: the coordinator's state in its welcome is kept, so
// that a study stopped before its last round reads as finished at once,
// before Run has read its finished message.
func TestWelcomeState(t *testing.T) {
	st := fakeStudy()
	r1 := released(st, 1, []float64{0.2, 0.1, 0.3, 0.5})
	for _, state := range []string{protocol.StateFinished, protocol.StateRunning} {
		d := newPipeDialer()
		go func() {
			c := coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: state, Log: []protocol.Event{r1.Event}})
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.WelcomeState(); got != state || s.Finished() != nil {
			t.Errorf("welcome %q: state %q, finished message %v", state, got, s.Finished())
		}
		s.Close()
	}
}
