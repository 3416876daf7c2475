package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// budgetState is everything a hostile input must leave unchanged: the
// public round count and ε, the ledger's rounds, and the open round's
// accepted updates.
type budgetState struct {
	round    int
	eps      float64
	ledger   []string
	received int
}

func (f *fixture) budget(t *testing.T) budgetState {
	t.Helper()
	st := f.srv.PublicStatus()
	e, err := f.srv.ledger.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := budgetState{round: st.Round, eps: st.EpsilonSpent}
	for _, r := range e.Rounds {
		b.ledger = append(b.ledger, r.ModelSHA256)
	}
	f.srv.mu.Lock()
	if o := f.eng.Open; o != nil {
		b.received = o.Received
	}
	f.srv.mu.Unlock()
	return b
}

// outcome describes what the coordinator did with a hostile input, in the
// words of the table in docs/coordinator.md.
// Broadcasts (welcome, round_start, round_result) are skipped.
func outcome(r *raw) string {
	m, err := r.read()
	for err == nil && (m.Type() == protocol.TypeWelcome || m.Type() == protocol.TypeRoundStart || m.Type() == protocol.TypeRoundResult) {
		m, err = r.read()
	}
	if err != nil {
		return fmt.Sprintf("socket closed (status %d), no error message", websocket.CloseStatus(err))
	}
	e, ok := m.(*protocol.Error)
	if !ok {
		return "answered " + m.Type().String()
	}
	s := fmt.Sprintf("error %s (%d)", e.Code, int(e.Code))
	if !e.Code.Fatal() {
		return s + ", connection kept"
	}
	return s + fmt.Sprintf(", socket closed (status %d)", expectClosed(r))
}

// seedFor returns a research seed whose first round samples LHA 0 and one
// of LHAs 1-2 but not LHA 3, and whose second round samples LHA 0 (N = 4,
// q = 1/2), so that every rejection below has a well-defined subject.
func seedFor(t *testing.T) (seed uint64, other int) {
	for s := uint64(1); s < 1000; s++ {
		rng := fl.NewRand(s, fl.StreamSampling)
		r1 := fl.PoissonSample(4, 0.5, rng)
		r2 := fl.PoissonSample(4, 0.5, rng)
		if slices.Contains(r1, 0) && !slices.Contains(r1, 3) && slices.Contains(r2, 0) {
			for _, o := range []int{1, 2} {
				if slices.Contains(r1, o) {
					return s, o
				}
			}
		}
	}
	t.Fatal("no suitable seed")
	return 0, 0
}

// TestHostileInputsTable tries every hostile input of the coordinator's
// safety rules (issue 3 §3, plus malformed JSON/binary and random bytes)
// against a live handler over real websockets while round 1 is open, and
// checks after each one that the coordinator still serves, that the budget,
// the ledger and the round's aggregate are unchanged, and what it answered.
// The table it logs (go test -v) is the one in docs/coordinator.md.
func TestHostileInputsTable(t *testing.T) {
	seed, other := seedFor(t)
	f := start(t, study.File{Name: "hostile-table", Epsilon: 10, Rounds: 3, ExpectedClients: 2, Hidden: []int{4},
		LocalEpochs: 1, StartQuorum: 1, RoundDeadline: study.Duration(30 * time.Second)}, lhaNames(4), &seed)
	a := dialRaw(t, f, f.secrets.LHAs[0]) // honest, sampled; answers only at the end of round 1
	expect[*protocol.Welcome](a)
	rs := expect[*protocol.RoundStart](a)
	dim := len(rs.Weights)
	before := f.budget(t)
	if before.round != 0 || before.eps != 0 || len(before.ledger) != 0 {
		t.Fatalf("before: %+v", before)
	}
	frame := func(m protocol.Message) []byte {
		_, b, err := protocol.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withWeight := func(v float64) []byte {
		b := frame(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
		binary.LittleEndian.PutUint64(b[protocol.HeaderSize:], math.Float64bits(v))
		sum := hashOf(b[protocol.HeaderSize:])
		copy(b[16:48], sum[:]) // a correct hash: only the value is wrong
		return b
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randomBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	// joined dials as LHA lha (sampled ones get their round_start first).
	joined := func(lha int) *raw {
		c := dialRaw(t, f, f.secrets.LHAs[lha])
		expect[*protocol.Welcome](c)
		if lha == other || lha == 0 {
			expect[*protocol.RoundStart](c)
		}
		return c
	}
	send := func(lha int, k protocol.Kind, b []byte) string {
		c := joined(lha)
		c.write(k, b)
		return outcome(c)
	}
	badMagic := frame(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
	badMagic[0] = 'x'
	badHash := frame(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
	badHash[20] ^= 1
	badCount := frame(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
	binary.LittleEndian.PutUint32(badCount[8:], uint32(dim+1))

	rows := []struct {
		name string
		try  func() string
		want string
	}{
		{"update with wrong length (n−1 weights)", func() string {
			return send(other, protocol.Binary, frame(&protocol.Update{Round: 1, Weights: make([]float64, dim-1)}))
		}, "error bad_update (8), connection kept"},
		{"update with a NaN weight", func() string { return send(other, protocol.Binary, withWeight(math.NaN())) },
			"error bad_update (8), connection kept"},
		{"update with a +Inf weight", func() string { return send(other, protocol.Binary, withWeight(math.Inf(1))) },
			"error bad_update (8), connection kept"},
		{"update for an unknown (future) round id 99", func() string {
			return send(other, protocol.Binary, frame(&protocol.Update{Round: 99, Weights: make([]float64, dim)}))
		}, "error stale_round (6), connection kept"},
		{"update for round id 4294967295 (max uint32)", func() string {
			return send(other, protocol.Binary, frame(&protocol.Update{Round: math.MaxUint32, Weights: make([]float64, dim)}))
		}, "error stale_round (6), connection kept"},
		{"update from an LHA not sampled in the round", func() string {
			return send(3, protocol.Binary, frame(&protocol.Update{Round: 1, Weights: make([]float64, dim)}))
		}, "error not_sampled (5), connection kept"},
		{"binary frame one byte over the read limit", func() string {
			return send(3, protocol.Binary, make([]byte, protocol.FrameSize(dim)+1))
		}, "socket closed (status 1009), no error message"},
		{"text frame one byte over the read limit", func() string {
			return send(3, protocol.Text, make([]byte, protocol.FrameSize(dim)+1))
		}, "socket closed (status 1009), no error message"},
		{"hello with an unknown token", func() string { return outcome(dialRaw(t, f, "not-a-token")) },
			"error unauthorized (3), socket closed (status 1008)"},
		{"hello with the admin token", func() string { return outcome(dialRaw(t, f, f.secrets.Admin)) },
			"error unauthorized (3), socket closed (status 1008)"},
		{"hello with an empty token", func() string {
			c := dialRaw(t, f, "")
			c.write(protocol.Text, []byte(`{"v":1,"type":"hello","token":""}`))
			return outcome(c)
		}, "error hello_expected (12), socket closed (status 1008)"},
		{"update before hello (unauthenticated)", func() string {
			c := dialRaw(t, f, "")
			c.write(protocol.Binary, frame(&protocol.Update{Round: 1, Weights: make([]float64, dim)}))
			return outcome(c)
		}, "error hello_expected (12), socket closed (status 1008)"},
		{"second hello on a joined connection", func() string {
			return send(3, protocol.Text, frame(&protocol.Hello{Token: f.secrets.LHAs[3]}))
		}, "error hello_expected (12), socket closed (status 1008)"},
		{"hello with protocol version 99", func() string {
			c := dialRaw(t, f, "")
			c.write(protocol.Text, []byte(`{"v":99,"type":"hello","token":"x"}`))
			return outcome(c)
		}, "error version (2), socket closed (status 1008)"},
		{"malformed JSON (not JSON)", func() string { return send(3, protocol.Text, []byte(`not json`)) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"malformed JSON (truncated object)", func() string { return send(3, protocol.Text, []byte(`{"v":1,"type":"upd`)) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"JSON with an unknown field (\"rows\": a data statistic)", func() string {
			return send(3, protocol.Text, []byte(`{"v":1,"type":"update","rows":12}`))
		}, "error bad_frame (1), socket closed (status 1008)"},
		{"JSON update in a text frame (wrong frame kind)", func() string {
			return send(3, protocol.Text, []byte(`{"v":1,"type":"update","round":1}`))
		}, "error bad_frame (1), socket closed (status 1008)"},
		{"server-only message from a client (round_result)", func() string {
			return send(3, protocol.Binary, frame(&protocol.RoundResult{Event: protocol.Event{Round: 1, SampleRate: 0.5, NoiseMultiplier: 1, Epsilon: 1, Delta: 1e-5}, Weights: make([]float64, dim)}))
		}, "error bad_frame (1), socket closed (status 1008)"},
		{"malformed binary: bad magic", func() string { return send(other, protocol.Binary, badMagic) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"malformed binary: truncated (header only, 2 bytes)", func() string { return send(other, protocol.Binary, []byte("fc")) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"malformed binary: weight hash mismatch", func() string { return send(other, protocol.Binary, badHash) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"malformed binary: weight count ≠ payload", func() string { return send(other, protocol.Binary, badCount) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"random bytes, binary frame (4 KiB)", func() string { return send(other, protocol.Binary, randomBytes(4096)) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"random bytes, text frame (4 KiB)", func() string { return send(other, protocol.Text, randomBytes(4096)) },
			"error bad_frame (1), socket closed (status 1008)"},
		{"random bytes as the first frame (no hello)", func() string {
			c := dialRaw(t, f, "")
			c.write(protocol.Binary, randomBytes(512))
			return outcome(c)
		}, "error hello_expected (12), socket closed (status 1008)"},
		{"second connection with the same token (old one)", func() string {
			old := joined(3)
			joined(3)
			return outcome(old)
		}, "error replaced (4), socket closed (status 1008)"},
		{"websocket from a foreign Origin", func() string {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, resp, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
			if err == nil || resp == nil {
				return fmt.Sprintf("accepted (%v)", err)
			}
			return fmt.Sprintf("handshake refused: HTTP %d", resp.StatusCode)
		}, "handshake refused: HTTP 403"},
		{"admin API without the admin token", func() string {
			code, _ := get(t, f.http.URL+"/api/admin/ledger", f.secrets.LHAs[0])
			return fmt.Sprintf("HTTP %d", code)
		}, "HTTP 401"},
	}
	for _, row := range rows {
		got := row.try()
		if got != row.want {
			t.Errorf("%s: %s, want %s", row.name, got, row.want)
		}
		if after := f.budget(t); !budgetEqual(after, before) {
			t.Fatalf("%s changed the budget or the aggregate: %+v → %+v", row.name, before, after)
		}
		if code, _ := get(t, f.http.URL+"/api/status", ""); code != 200 {
			t.Fatalf("after %s: status %d", row.name, code)
		}
		t.Logf("| %s | %s |", row.name, got)
	}

	// The honest LHA was never disturbed: its update is accepted and round
	// 1 is committed with it. Then the replays and late updates.
	first := frame(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
	a.write(protocol.Binary, first)
	expect[*protocol.Accepted](a)
	// LHA `other` is sampled but not connected: it is a dropout.
	res := expect[*protocol.RoundResult](a)
	rs2 := expect[*protocol.RoundStart](a)
	if res.Event.Round != 1 || rs2.Round != 2 {
		t.Fatalf("round %d committed, round %d started", res.Event.Round, rs2.Round)
	}
	before = f.budget(t)
	if before.round != 1 || len(before.ledger) != 1 {
		t.Fatalf("after round 1: %+v", before)
	}
	late := []struct {
		name string
		try  func() string
		want string
	}{
		{"replay of an accepted update (round 1, identical bytes) in round 2", func() string {
			a.write(protocol.Binary, first)
			return outcome(a)
		}, "error stale_round (6), connection kept"},
		{"late update for a committed round (round 1, from a sampled dropout)", func() string {
			c := dialRaw(t, f, f.secrets.LHAs[other])
			expect[*protocol.Welcome](c)
			c.write(protocol.Binary, first)
			return outcome(c)
		}, "error stale_round (6), connection kept"},
		{"second update in the same round", func() string {
			b := frame(&protocol.Update{Round: 2, Weights: make([]float64, dim)})
			a.write(protocol.Binary, b)
			expect[*protocol.Accepted](a)
			before.received++ // the first one counts
			a.write(protocol.Binary, b)
			return outcome(a)
		}, "error duplicate_update (7), connection kept"},
	}
	for _, row := range late {
		got := row.try()
		if got != row.want {
			t.Errorf("%s: %s, want %s", row.name, got, row.want)
		}
		if after := f.budget(t); !budgetEqual(after, before) {
			t.Fatalf("%s changed the budget or the aggregate: %+v → %+v", row.name, before, after)
		}
		t.Logf("| %s | %s |", row.name, got)
	}
}

func budgetEqual(a, b budgetState) bool {
	return a.round == b.round && a.eps == b.eps && a.received == b.received && slices.Equal(a.ledger, b.ledger)
}
