package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// taken returns the number of updates the ledger's participation records
// count as received, over all committed rounds.
func (f *fixture) taken(t *testing.T) int {
	t.Helper()
	parts, err := f.srv.ledger.Participation()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range parts {
		n += p.Received
	}
	return n
}

// outcome describes what the coordinator did with a hostile input, in the
// words of the table in docs/coordinator.md.
// Broadcasts (welcome, round_start, round_result) and the fixed
// acknowledgement of binary frames are skipped: a binary frame's answer
// comes at its round's release.
func outcome(r *raw) string {
	m, err := r.read()
	for err == nil && (m.Type() == protocol.TypeWelcome || m.Type() == protocol.TypeRoundStart || m.Type() == protocol.TypeRoundResult || m.Type() == protocol.TypeAccepted) {
		m, err = r.read()
	}
	if err != nil {
		return fmt.Sprintf("socket closed (%s), no error message", closeStatus(err))
	}
	e, ok := m.(*protocol.Error)
	if !ok {
		return "answered " + m.Type().String()
	}
	s := fmt.Sprintf("error %s (%d)", e.Code, int(e.Code))
	if !e.Code.Fatal() {
		return s + ", connection kept"
	}
	return s + fmt.Sprintf(", socket closed (%s)", closeStatus(expectClosedErr(r)))
}

// closeStatus names how a socket was closed: its close status, or none
// (closed at once, without a close frame).
func closeStatus(err error) string {
	if st := websocket.CloseStatus(err); st >= 0 {
		return fmt.Sprintf("status %d", st)
	}
	return "at once"
}

// expectClosedErr reads until the socket ends and returns the error.
func expectClosedErr(r *raw) error {
	for {
		if _, err := r.read(); err != nil {
			return err
		}
	}
}

// TestHostileInputsTable tries every hostile input of the coordinator's
// safety rules (issue 3 §3, plus malformed JSON/binary and random bytes)
// against a live handler over real websockets while rounds run on a short
// schedule (every LHA sampled, q = 1), and checks after each one that the
// coordinator still serves, that no hostile frame was ever aggregated, and
// what it answered (binary frames: at their round's release). The table it
// logs (go test -v) is the one in docs/coordinator.md.
func TestHostileInputsTable(t *testing.T) {
	f := start(t, study.File{StartQuorum: 1,
		Settings: protocol.Settings{Name: "hostile-table", Epsilon: 10, Rounds: 200, ExpectedClients: 4, Hidden: []int{4},
			LocalEpochs: 1, RoundLength: study.Duration(400 * time.Millisecond), RoundSlack: study.Duration(100 * time.Millisecond)}}, lhaNames(4), nil)
	a := readyRaw(t, f, f.secrets.LHAs[0]) // honest; answers only after the table
	expect[*protocol.Welcome](a)
	rs := expect[*protocol.RoundStart](a)
	dim := len(rs.Weights)
	const other = 1
	frame := func(m protocol.Message) []byte {
		_, b, err := protocol.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	round := 1 // the round open when the row's LHA joined
	withWeight := func(v float64) []byte {
		b := frame(&protocol.Update{Round: round, Weights: make([]float64, dim)})
		w := protocol.HeaderSize + len(`{"dummy":0}`) // after the metadata
		binary.LittleEndian.PutUint64(b[w:], math.Float64bits(v))
		sum := hashOf(b[w:])
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
	// joined dials as LHA lha and waits until a round's window has time
	// left (q = 1: every LHA gets every round_start).
	joined := func(lha int) *raw {
		c := readyRaw(t, f, f.secrets.LHAs[lha])
		expect[*protocol.Welcome](c)
		round = inWindow(c).Round
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
			c := joined(other)
			c.write(protocol.Binary, frame(&protocol.Update{Round: round, Weights: make([]float64, dim-1)}))
			return outcome(c)
		}, "error bad_update (8), connection kept"},
		{"update with a NaN weight", func() string {
			c := joined(other)
			c.write(protocol.Binary, withWeight(math.NaN()))
			return outcome(c)
		}, "error bad_update (8), connection kept"},
		{"update with a +Inf weight", func() string {
			c := joined(other)
			c.write(protocol.Binary, withWeight(math.Inf(1)))
			return outcome(c)
		}, "error bad_update (8), connection kept"},
		{"update for an unknown (future) round id 99", func() string {
			return send(other, protocol.Binary, frame(&protocol.Update{Round: 99, Weights: make([]float64, dim)}))
		}, "error stale_round (6), connection kept"},
		{"update for round id 4294967295 (max uint32)", func() string {
			return send(other, protocol.Binary, frame(&protocol.Update{Round: math.MaxUint32, Weights: make([]float64, dim)}))
		}, "error stale_round (6), connection kept"},
		{"join token over 256 bytes in the handshake", func() string {
			return outcome(dialRaw(t, f, strings.Repeat("x", protocol.MaxToken+1)))
		}, "error unauthorized (3), socket closed (at once)"},
		{"binary frame one byte over the read limit", func() string {
			return send(3, protocol.Binary, make([]byte, protocol.FrameSize(dim)+1))
		}, "socket closed (status 1009), no error message"},
		{"text frame one byte over the read limit", func() string {
			return send(3, protocol.Text, make([]byte, protocol.FrameSize(dim)+1))
		}, "socket closed (status 1009), no error message"},
		{"handshake with an unknown join token", func() string { return outcome(dialRaw(t, f, "not-a-token")) },
			"error unauthorized (3), socket closed (at once)"},
		{"handshake with the admin token", func() string { return outcome(dialRaw(t, f, f.secrets.Admin)) },
			"error unauthorized (3), socket closed (at once)"},
		{"handshake without a join token (a client that sends hello)", func() string { return outcome(dialRaw(t, f, "")) },
			"error version (2), socket closed (at once)"},
		{"hello frame on a joined connection", func() string {
			return send(3, protocol.Text, frame(&protocol.Hello{Token: f.secrets.LHAs[3]}))
		}, "error hello_expected (12), socket closed (status 1008)"},
		{"handshake offering protocol version 99", func() string {
			return outcome(dialProtos(t, f, []string{"fedcast.v99", protocol.Subprotocols(f.secrets.LHAs[2])[1]}))
		}, "error version (2), socket closed (at once)"},
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
		{"second connection with the same token (old one)", func() string {
			old := joined(3)
			joined(3)
			return outcome(old)
		}, "error replaced (4), socket closed (status 1008)"},
		{"websocket from a foreign Origin", func() string {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, resp, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}},
				Subprotocols: protocol.Subprotocols(f.secrets.LHAs[2])})
			if err == nil || resp == nil {
				return fmt.Sprintf("accepted (%v)", err)
			}
			return fmt.Sprintf("handshake refused: HTTP %d", resp.StatusCode)
		}, "handshake refused: HTTP 403"},
		{"failed handshakes from one address past the limit (20 a minute)", func() string {
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				ws, resp, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{Subprotocols: protocol.Subprotocols("guess")})
				cancel()
				if err == nil {
					ws.CloseNow()
					continue
				}
				if resp == nil {
					return err.Error()
				}
				// A valid token from the same address still joins.
				expect[*protocol.Welcome](dialRaw(t, f, f.secrets.LHAs[2]))
				return fmt.Sprintf("handshake refused: HTTP %d; a valid token from the address still joins", resp.StatusCode)
			}
		}, "handshake refused: HTTP 429; a valid token from the address still joins"},
		{"admin API without the admin token", func() string {
			code, _ := get(t, f.http.URL+"/api/admin/ledger", f.secrets.LHAs[0])
			return fmt.Sprintf("HTTP %d", code)
		}, "HTTP 401"},
	}
	honest := 0 // updates of the honest LHA taken so far
	check := func(name, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
		if n := f.taken(t); n != honest {
			t.Fatalf("after %s: %d update(s) aggregated, want %d (the honest LHA's)", name, n, honest)
		}
		if code, _ := get(t, f.http.URL+"/api/status", ""); code != 200 {
			t.Fatalf("after %s: status %d", name, code)
		}
		t.Logf("| %s | %s |", name, got)
	}
	for _, row := range rows {
		check(row.name, row.try(), row.want)
	}

	// Replays and late updates.
	rs = inWindow(a)
	first := frame(&protocol.Update{Round: rs.Round, Weights: make([]float64, dim)})
	a.write(protocol.Binary, first)
	if v := verdictOf(a); v != nil {
		t.Fatalf("honest update: %v", v)
	}
	if honest = f.taken(t); honest != 1 {
		t.Fatalf("the honest update: %d taken, want 1", honest)
	}
	late := []struct {
		name string
		try  func() string
		want string
	}{
		{"replay of an accepted update (identical bytes) in a later round", func() string {
			inWindow(a)
			a.write(protocol.Binary, first)
			return outcome(a)
		}, "error stale_round (6), connection kept"},
		{"late update for a committed round (from a sampled dropout)", func() string {
			c := joined(other)
			c.write(protocol.Binary, first)
			return outcome(c)
		}, "error stale_round (6), connection kept"},
	}
	for _, row := range late {
		check(row.name, row.try(), row.want)
	}
}
