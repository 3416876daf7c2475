package e2e

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// accountantEpsilon is ε after rounds rounds of the study in st, from the
// accountant composing the rounds one by one as the coordinator does (the
// same q and c every round). It also checks that ε is within 1e-12 of the
// accountant's ε for the rounds composed at once (they may differ in the
// last bits of a float sum).
func accountantEpsilon(t *testing.T, st protocol.Status, kind string, rounds int) float64 {
	t.Helper()
	if kind == "" {
		kind = string(privacy.AccountantRDP)
	}
	k := privacy.AccountantKind(kind)
	ev := privacy.Event{SampleRate: st.SampleRate, NoiseMultiplier: st.NoiseMultiplier, Rounds: 1}
	eps, err := privacy.EpsilonFor(k, slices.Repeat([]privacy.Event{ev}, rounds), st.Delta)
	if err != nil {
		t.Fatal(err)
	}
	ev.Rounds = rounds
	once, err := privacy.EpsilonFor(k, []privacy.Event{ev}, st.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(eps-once) > 1e-12 {
		t.Fatalf("the accountant: ε %v for %d rounds one by one, %v at once", eps, rounds, once)
	}
	return eps
}

var finishedLine = regexp.MustCompile(`study finished \((\w+)\) after (\d+) rounds: ε (\S+) \(recomputed here (\S+)\), final model ([0-9a-f]{64})`)

// A small study end to end on workerd with native `fedcast client`s: every
// round is committed and released on the schedule, the final ε is the
// accountant's for the study's q, c and T, and every LHA ends with the
// model the coordinator committed last.
func TestStudyEndToEnd(t *testing.T) {
	bin := workerdPath(t)
	addr := freeAddr(t)
	names := []string{"A", "B", "C", "D"}
	const rounds = 4
	s := newStudy(t, names, addr, "--epsilon", "4", "--rounds", strconv.Itoa(rounds), "--expected", "3", "--round-length", "3s")
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web"))

	final := finishAll(t, startClients(t, s, names), names, rounds)
	st := w.waitStatus(10*time.Second, func(st protocol.Status) bool { return st.State == protocol.StateFinished })
	want := accountantEpsilon(t, st, "", rounds)
	if st.Round != rounds || st.FinishReason != "rounds" || st.EpsilonSpent != want {
		t.Errorf("final status: %d rounds (%s), ε %v; the accountant gives ε %v for q=%v, c=%v, T=%d, δ=%v",
			st.Round, st.FinishReason, st.EpsilonSpent, want, st.SampleRate, st.NoiseMultiplier, rounds, st.Delta)
	}
	var state storedState
	if err := w.get("/api/admin/state", s.admin, &state); err != nil {
		t.Fatal(err)
	}
	if len(state.Events) != rounds {
		t.Fatalf("stored state has %d events, want %d", len(state.Events), rounds)
	}
	for i, ev := range state.Events {
		if e := accountantEpsilon(t, st, "", i+1); ev.Round != i+1 || ev.Epsilon != e {
			t.Errorf("stored event %d: round %d, ε %v; the accountant gives %v", i+1, ev.Round, ev.Epsilon, e)
		}
	}
	if h := protocol.HashHex(state.Model); h != final || state.Events[rounds-1].ModelSHA256 != final {
		t.Errorf("stored model %s, last event's %s, clients' %s", h, state.Events[rounds-1].ModelSHA256, final)
	}
	if err := w.get("/api/admin/state", "wrong-token", &state); err == nil {
		t.Error("the admin state answered a wrong token")
	}
	t.Logf("worker app.wasm: %d bytes raw; study of %d LHAs, %d rounds, final ε %.6g", wasmSize, len(names), rounds, st.EpsilonSpent)

	// Per-update latency: a connected LHA's update frames (the study's
	// model size) against their acknowledgement, through workerd, the
	// Durable Object and the Go program.
	lat := updateLatency(t, w.base, s.links[0], len(state.Model), 50)
	t.Logf("per-update latency in workerd (%d-weight update, %d-byte frame): median %s, p90 %s, max %s",
		len(state.Model), protocol.FrameSize(len(state.Model)), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
}

// dial opens a websocket to base as the LHA of join link link, says
// ready, and returns it with its welcome.
func dial(ctx context.Context, t *testing.T, base, link string) (*websocket.Conn, *protocol.Welcome) {
	t.Helper()
	token := link[len(link)-43:]
	if i := len(link) - len(token) - 1; link[i] != '#' {
		t.Fatalf("join link %q has no 43-character token", link)
	}
	ws, _, err := websocket.Dial(ctx, "ws"+base[len("http"):]+"/api/ws", &websocket.DialOptions{Subprotocols: protocol.Subprotocols(token)})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	m := read(ctx, t, ws)
	wl, ok := m.(*protocol.Welcome)
	if !ok {
		t.Fatalf("first message %T %+v, want welcome", m, m)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"v":1,"type":"ready"}`)); err != nil {
		t.Fatal(err)
	}
	return ws, wl
}

func read(ctx context.Context, t *testing.T, ws *websocket.Conn) protocol.Message {
	t.Helper()
	typ, b, err := ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := protocol.Text
	if typ == websocket.MessageBinary {
		k = protocol.Binary
	}
	m, err := protocol.Decode(k, b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// updateLatency sends n update frames of dim weights as the LHA of link
// and returns the sorted times to each acknowledgement.
func updateLatency(t *testing.T, base, link string, dim, n int) []time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, _ := dial(ctx, t, base, link)
	defer ws.CloseNow()
	// Skip what a (re)join gets before the acknowledgements.
	_, b, err := protocol.Encode(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
	if err != nil {
		t.Fatal(err)
	}
	var lat []time.Duration
	for range n {
		start := time.Now()
		if err := ws.Write(ctx, websocket.MessageBinary, b); err != nil {
			t.Fatal(err)
		}
		for {
			m := read(ctx, t, ws)
			if _, ok := m.(*protocol.Accepted); ok {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return lat
}

// Killing workerd mid-study (SIGKILL) loses no committed round: after the
// restart the Durable Object resumes from its storage, re-sends the last
// committed round's model to every LHA that rejoins, abandons the round
// that was open (nothing of it was released), and the study ends with T
// rounds and the accountant's ε, the rounds committed before the kill
// unchanged.
func TestRestartKeepsCommittedRounds(t *testing.T) {
	bin := workerdPath(t)
	addr := freeAddr(t)
	names := []string{"A", "B", "C", "Probe"}
	const rounds = 6
	// The paper's model (11 777 weights): the stored state (about 0.5 MB of
	// JSON) is written in chunks.
	s := newStudy(t, names, addr, "--preset", "paper", "--epsilon", "6", "--rounds", strconv.Itoa(rounds), "--expected", "4",
		"--round-length", "3s", "--quorum", "3")
	storage, web := filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web")
	w := startWorkerd(t, bin, s.raw, addr, storage, web)
	var clients []*client
	for i := range 3 {
		clients = append(clients, startClient(t, s, i))
	}
	w.waitStatus(90*time.Second, func(st protocol.Status) bool { return st.Round >= 2 })
	var before storedState
	var raw json.RawMessage
	if err := w.get("/api/admin/state", s.admin, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &before); err != nil {
		t.Fatal(err)
	}
	if len(raw) <= 2*120<<10 {
		t.Fatalf("the stored state has %d bytes: this test wants one over two storage chunks (120 KiB each)", len(raw))
	}
	w.kill()
	files, _ := filepath.Glob(filepath.Join(storage, "*", "*"))
	t.Logf("killed workerd after %d committed rounds; storage: %v", len(before.Events), files)

	w2 := startWorkerd(t, bin, s.raw, addr, storage, web)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, wl := dial(ctx, t, w2.base, s.links[3])
	k := len(wl.Log)
	if k < len(before.Events) || !slices.Equal(wl.Log[:len(before.Events)], before.Events) {
		t.Fatalf("after the restart the welcome's log has %d rounds %+v; before the kill %d were committed: %+v", k, wl.Log, len(before.Events), before.Events)
	}
	m := read(ctx, t, ws)
	rr, ok := m.(*protocol.RoundResult)
	if !ok {
		t.Fatalf("after the welcome: %T, want the last committed round's result", m)
	}
	if rr.Event.Round != k || rr.Event.ModelSHA256 != wl.Log[k-1].ModelSHA256 || protocol.HashHex(rr.Weights) != rr.Event.ModelSHA256 {
		t.Errorf("re-sent round %d with model %s (weights hash %s); the log's last round is %d with %s",
			rr.Event.Round, rr.Event.ModelSHA256, protocol.HashHex(rr.Weights), k, wl.Log[k-1].ModelSHA256)
	}
	ws.Close(websocket.StatusNormalClosure, "")

	for i, c := range clients {
		out := c.wait(t, 3*time.Minute)
		if m := finishedLine.FindStringSubmatch(out); m == nil || m[2] != strconv.Itoa(rounds) || m[3] != m[4] {
			t.Errorf("client %s did not finish the %d rounds:\n%s", names[i], rounds, out)
		}
	}
	st := w2.waitStatus(10*time.Second, func(st protocol.Status) bool { return st.State == protocol.StateFinished })
	var after storedState
	if err := w2.get("/api/admin/state", s.admin, &after); err != nil {
		t.Fatal(err)
	}
	if len(after.Events) != rounds || !slices.Equal(after.Events[:len(before.Events)], before.Events) {
		t.Errorf("after the restart: %d rounds; the %d committed before the kill changed:\nbefore %+v\nafter  %+v", len(after.Events), len(before.Events), before.Events, after.Events)
	}
	if want := accountantEpsilon(t, st, "", rounds); st.Round != rounds || st.EpsilonSpent != want {
		t.Errorf("final status %d rounds, ε %v; the accountant gives %v", st.Round, st.EpsilonSpent, want)
	}
	t.Logf("stored state %d bytes (%d chunks)", len(raw), (len(raw)+120<<10-1)/(120<<10))
	t.Logf("restart: %d rounds committed before the kill, %d in the welcome after it, the model of round %d re-sent; the study ended with %d rounds, ε %.6g",
		len(before.Events), k, k, st.Round, st.EpsilonSpent)
}
