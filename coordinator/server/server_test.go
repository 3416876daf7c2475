package server

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/internal/fltest"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

type fixture struct {
	srv     *Server
	http    *httptest.Server
	eng     *study.Engine
	secrets *study.Secrets
	file    *study.File
	done    chan error
	cancel  context.CancelFunc
}

func (f *fixture) wsURL() string { return "ws" + strings.TrimPrefix(f.http.URL, "http") + "/api/ws" }

func start(t testing.TB, tmpl study.File, names []string, seed *uint64, opts ...func(*Options)) *fixture {
	t.Helper()
	file, secrets, err := study.Create(study.CreateOptions{Template: tmpl, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := file.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := study.Open(file, raw, l.Store(), &study.Options{InsecureSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	opt := &Options{Engine: eng, Ledger: l, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(opt)
	}
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{srv: srv, http: hs, eng: eng, secrets: secrets, file: file, done: make(chan error, 1), cancel: cancel}
	go func() { f.done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-f.done
		srv.Close()
		hs.Close()
		l.Close()
	})
	return f
}

func lhaNames(n int) []string {
	var s []string
	for i := range n {
		s = append(s, "LHA "+string(rune('A'+i)))
	}
	return s
}

// TestEndToEnd runs a study of 8 LHAs on synthetic data over real
// websockets and checks it against the in-process engine with the same
// seed: same final model bit for bit (research mode sums updates in LHA
// order, as fltest.Simulation does), and the ε the accountant predicts.
func TestEndToEnd(t *testing.T) {
	const n, seed = 8, uint64(11)
	data, _, err := synth.Generate(synth.Options{Areas: n, Seed: 3, Days: 61})
	if err != nil {
		t.Fatal(err)
	}
	s := seed
	f := start(t, study.File{Settings: protocol.Settings{Name: "e2e", Epsilon: 4, Rounds: 5, ExpectedClients: 4, Hidden: []int{16, 8},
		LocalEpochs: 10, RoundLength: study.Duration(1500 * time.Millisecond)}}, lhaNames(n), &s)

	var wg sync.WaitGroup
	sessions := make([]*session.Session, n)
	errs := make([]error, n)
	sentBytes := make([]int, n)
	answers := make([]map[int]bool, n)
	var clients []fl.ClientData
	for i := range n {
		one := &series.Dataset{Regions: []*series.Region{data.Regions[i]}}
		x, y, err := session.TrainingData(f.eng.Study, one)
		if err != nil || len(y) == 0 {
			t.Fatalf("LHA %d: %d windows, %v", i, len(y), err)
		}
		clients = append(clients, fl.ClientData{X: x, Y: y})
		sess, err := lhaconn.Join(context.Background(), f.http.URL+"/join#"+f.secrets.LHAs[i], "", nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions[i] = sess
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			answers[i] = map[int]bool{}
			errs[i] = sess.Run(ctx, one, session.Observer{Sent: func(o session.Outgoing) {
				switch o.Type {
				case "hello", "ready":
				case "update", "dummy":
					answers[i][o.Round] = true
					if want := int(protocol.FrameSize(f.eng.Study.Params)) - protocol.MaxMeta + len(`{"dummy":0}`); o.Bytes != want {
						t.Errorf("LHA %d: %s of %d bytes, want %d", i, o.Type, o.Bytes, want)
					}
				default:
					t.Errorf("client sent a %s", o.Type)
				}
				sentBytes[i] += o.Bytes
			}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("LHA %d: %v", i, err)
		}
		if len(answers[i]) != 5 {
			t.Errorf("LHA %d answered rounds %v, want each of the 5 once (an update or a dummy)", i, answers[i])
		}
	}
	if err := <-f.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	f.done <- nil

	sim := &fltest.Simulation{Model: f.eng.Model, Config: f.eng.Config, Clients: clients, Epsilon: 4, Delta: f.file.Delta, Seed: seed, Workers: 1}
	ref, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := f.eng.Global()
	for i := range got {
		if got[i] != ref.Global[i] {
			t.Fatalf("parameter %d: websocket study %v, in-process %v", i, got[i], ref.Global[i])
		}
	}
	wantEps, _ := privacy.Epsilon(f.eng.Config.SampleRate(), f.eng.Config.NoiseMultiplier, 5, f.file.Delta)
	if st := f.srv.PublicStatus(); st.State != protocol.StateFinished || st.Round != 5 || math.Abs(st.EpsilonSpent-wantEps) > 1e-12 {
		t.Errorf("status %+v, want finished after 5 rounds with ε %v", st, wantEps)
	}
	// Every LHA got the public schedule with its welcome.
	if sch := sessions[0].Schedule(); sch == nil || sch.RoundLength != protocol.Duration(1500*time.Millisecond) || sch.RoundSlack != protocol.Duration(150*time.Millisecond) || sch.Start == nil {
		t.Errorf("schedule in the welcome: %+v", sch)
	}
	for i, sess := range sessions {
		if protocol.HashHex(sess.Model()) != protocol.HashHex(got) {
			t.Errorf("LHA %d holds another final model", i)
		}
		if math.Abs(sess.LocalEpsilon()-wantEps) > 1e-12 {
			t.Errorf("LHA %d recomputed ε %v, want %v", i, sess.LocalEpsilon(), wantEps)
		}
	}
	// The ledger's hashes are the released models' hashes.
	exp, err := f.srv.ledger.Export(context.Background())
	if err != nil || len(exp.Rounds) != 5 || exp.Rounds[4].ModelSHA256 != protocol.HashHex(got) {
		t.Fatalf("ledger export %+v, %v", exp, err)
	}
}

// raw is a bare protocol connection for hostile tests.
type raw struct {
	t  *testing.T
	ws *websocket.Conn
	f  *fixture
}

// dialRaw dials with token in the handshake ("": none, as a client
// before handshake authentication would).
func dialRaw(t *testing.T, f *fixture, token string) *raw {
	t.Helper()
	var protos []string
	if token != "" {
		protos = protocol.Subprotocols(token)
	}
	return dialProtos(t, f, protos)
}

// readyRaw dials with token and says ready, as a client whose file is
// checked: only then does the LHA count towards the quorum and get
// round_start (every connection starts not ready).
func readyRaw(t *testing.T, f *fixture, token string) *raw {
	t.Helper()
	r := dialRaw(t, f, token)
	r.send(&protocol.Ready{})
	return r
}

// dialProtos dials offering the subprotocols protos.
func dialProtos(t *testing.T, f *fixture, protos []string) *raw {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(protocol.MaxText + protocol.FrameSize(f.eng.Study.Params))
	r := &raw{t, ws, f}
	t.Cleanup(func() { ws.CloseNow() })
	return r
}

func (r *raw) send(m protocol.Message) {
	r.t.Helper()
	k, b, err := protocol.Encode(m)
	if err != nil {
		r.t.Fatal(err)
	}
	r.write(k, b)
}

func (r *raw) write(k protocol.Kind, b []byte) {
	r.t.Helper()
	typ := websocket.MessageText
	if k == protocol.Binary {
		typ = websocket.MessageBinary
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.ws.Write(ctx, typ, b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *raw) read() (protocol.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	typ, b, err := r.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	k := protocol.Text
	if typ == websocket.MessageBinary {
		k = protocol.Binary
	}
	return protocol.Decode(k, b)
}

// expect reads until a message of type T arrives (skipping others).
func expect[T protocol.Message](r *raw) T {
	r.t.Helper()
	for {
		m, err := r.read()
		if err != nil {
			r.t.Fatalf("waiting for %T: %v", *new(T), err)
		}
		if v, ok := m.(T); ok {
			return v
		}
	}
}

func expectCode(r *raw, code protocol.Code) {
	r.t.Helper()
	e := expect[*protocol.Error](r)
	if e.Code != code {
		r.t.Fatalf("error %v, want code %s", e, code)
	}
}

func expectClosed(r *raw) websocket.StatusCode {
	r.t.Helper()
	for {
		if _, err := r.read(); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// hostile starts a study where every LHA is sampled (m = N, q = 1) on a
// short schedule (L = 400 ms), with StartQuorum 1 (LHA 1 may stay
// offline).
func hostile(t *testing.T) *fixture {
	return start(t, study.File{StartQuorum: 1,
		Settings: protocol.Settings{Name: "hostile", Epsilon: 10, Rounds: 40, ExpectedClients: 2, Hidden: []int{4},
			LocalEpochs: 1, RoundLength: study.Duration(400 * time.Millisecond), RoundSlack: study.Duration(100 * time.Millisecond)}}, lhaNames(2), nil)
}

// inWindow reads c's messages until the round_start of the round that is
// open now arrives with at least 150 ms of its window left, and returns it:
// a frame sent right after it is read in that round's window. (Older
// round_starts may wait in the socket of a client that did not read.)
func inWindow(c *raw) *protocol.RoundStart {
	c.t.Helper()
	for {
		rs := expect[*protocol.RoundStart](c)
		sch := c.f.srv.PublicStatus().Schedule
		if rs.TimeLeft >= 150*time.Millisecond && sch != nil && sch.Round == rs.Round {
			return rs
		}
	}
}

// verdict reads c's messages after a binary frame: the fixed
// acknowledgement at once, then (skipping broadcasts) the round's answer
// to the frame at the release: nil if the frame was taken.
func verdictOf(c *raw) *protocol.Error {
	c.t.Helper()
	if a := expect[*protocol.Accepted](c); a.Round != 0 {
		c.t.Fatalf("acknowledgement names round %d: it must not depend on the frame", a.Round)
	}
	for {
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for the release: %v", err)
		}
		switch m := m.(type) {
		case *protocol.Error:
			return m
		case *protocol.RoundResult:
			// The verdicts follow the result in the same release; a
			// taken frame has none: the next round_start shows the
			// release is over.
			for {
				m, err := c.read()
				if err != nil {
					c.t.Fatalf("after the release: %v", err)
				}
				switch m := m.(type) {
				case *protocol.Error:
					return m
				case *protocol.RoundStart, *protocol.Finished:
					return nil
				}
			}
		}
	}
}

func TestHostileUpdates(t *testing.T) {
	f := hostile(t)
	c := readyRaw(t, f, f.secrets.LHAs[0])
	w := expect[*protocol.Welcome](c)
	if w.LHA != "LHA A" || w.Study.NoiseMultiplier != f.eng.Study.NoiseMultiplier || w.Study.RoundLength != protocol.Duration(400*time.Millisecond) || w.Study.RoundSlack != protocol.Duration(100*time.Millisecond) {
		t.Fatalf("welcome %+v", w)
	}
	rs := inWindow(c)
	dim := len(rs.Weights)
	if dim != f.eng.Study.Params {
		t.Fatalf("round start %d with %d weights", rs.Round, dim)
	}
	_, nan, _ := protocol.Encode(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
	wAt := protocol.HeaderSize + len(`{"dummy":0}`)
	binary.LittleEndian.PutUint64(nan[wAt:], math.Float64bits(math.NaN()))
	sum := hashOf(nan[wAt:])
	copy(nan[16:48], sum[:])
	for _, bad := range []struct {
		name string
		b    func(round int) []byte
		want protocol.Code
	}{
		{"short update", func(r int) []byte {
			_, b, _ := protocol.Encode(&protocol.Update{Round: r, Weights: make([]float64, dim-1)})
			return b
		}, protocol.CodeBadUpdate},
		{"NaN update", func(r int) []byte {
			b := slices.Clone(nan)
			binary.LittleEndian.PutUint32(b[4:], uint32(r))
			return b
		}, protocol.CodeBadUpdate},
		{"future round", func(r int) []byte {
			_, b, _ := protocol.Encode(&protocol.Update{Round: r + 5, Weights: make([]float64, dim)})
			return b
		}, protocol.CodeStaleRound},
	} {
		c.write(protocol.Binary, bad.b(rs.Round))
		if v := verdictOf(c); v == nil || v.Code != bad.want {
			t.Fatalf("%s: answer %v, want %s", bad.name, v, bad.want)
		}
		rs = inWindow(c)
	}

	// Malformed frames are fatal: the socket closes. LHA B (also sampled,
	// q = 1) joins, gets the round's round_start, and misbehaves.
	for _, bad := range []struct {
		kind protocol.Kind
		b    []byte
	}{
		{protocol.Binary, append([]byte(nil), nan[:len(nan)-1]...)},
		{protocol.Text, []byte(`{"v":1,"type":"update","rows":12}`)},
		{protocol.Text, []byte(`not json`)},
		{protocol.Binary, []byte("fc")},
	} {
		b := readyRaw(t, f, f.secrets.LHAs[1])
		expect[*protocol.Welcome](b)
		inWindow(b)
		b.write(bad.kind, bad.b)
		expectCode(b, protocol.CodeBadFrame)
		expectClosed(b)
	}
	parts, err := f.srv.ledger.Participation()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if p.Received != 0 {
			t.Fatalf("round %d took %d update(s): a rejected frame was aggregated", p.Round, p.Received)
		}
	}
	rs = inWindow(c)
	huge := make([]float64, dim)
	huge[0] = 1e9 // re-clipped by the coordinator
	c.send(&protocol.Update{Round: rs.Round, Weights: huge})
	if v := verdictOf(c); v != nil {
		t.Fatalf("honest update answered %v", v)
	}
	model, err := f.srv.ledger.Model(rs.Round)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(model[0] - rs.Weights[0]); d > f.file.ClipNorm/2+10*f.eng.Config.Sigma() {
		t.Errorf("a 1e9 update moved weight 0 by %v: not re-clipped", d)
	}
	// A replay of that update in the next round is refused.
	next := inWindow(c)
	c.send(&protocol.Update{Round: rs.Round, Weights: huge})
	if v := verdictOf(c); v == nil || v.Code != protocol.CodeStaleRound {
		t.Fatalf("replay of round %d in round %d: %v, want stale_round", rs.Round, next.Round, v)
	}
	if f.srv.PublicStatus().EpsilonSpent <= 0 {
		t.Error("no ε spent")
	}
}

func hashOf(p []byte) [32]byte {
	w := make([]float64, len(p)/8)
	for i := range w {
		w[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
	}
	return protocol.HashWeights(w)
}

func TestDuplicateUpdateInRound(t *testing.T) {
	f := hostile(t)
	a := readyRaw(t, f, f.secrets.LHAs[0])
	rs := inWindow(a)
	a.send(&protocol.Update{Round: rs.Round, Weights: make([]float64, len(rs.Weights))})
	a.send(&protocol.Update{Round: rs.Round, Weights: make([]float64, len(rs.Weights))})
	expect[*protocol.Accepted](a)
	if v := verdictOf(a); v == nil || v.Code != protocol.CodeDuplicateUpdate {
		t.Fatalf("second update in round %d: %v, want duplicate_update", rs.Round, v)
	}
	parts, err := f.srv.ledger.Participation()
	if err != nil || parts[rs.Round-1].Received != 1 {
		t.Errorf("round %d participation %+v (%v): want the first update counted once", rs.Round, parts, err)
	}
}

// TestLateFrame: a frame that arrives while no round takes updates (here:
// in the slack between a round's close and its release) is answered
// stale_round at the release, without being read.
func TestLateFrame(t *testing.T) {
	f := hostile(t)
	a := readyRaw(t, f, f.secrets.LHAs[0])
	rs := inWindow(a)
	time.Sleep(rs.TimeLeft + 30*time.Millisecond) // inside the 100 ms slack
	a.send(&protocol.Update{Round: rs.Round, Weights: make([]float64, len(rs.Weights))})
	if v := verdictOf(a); v == nil || v.Code != protocol.CodeStaleRound {
		t.Fatalf("frame after the close: %v, want stale_round", v)
	}
}

func TestConnectionRules(t *testing.T) {
	f := hostile(t)
	t.Run("bad token", func(t *testing.T) {
		c := dialRaw(t, f, "not-a-token")
		expectCode(c, protocol.CodeUnauthorized)
		expectClosed(c)
	})
	t.Run("admin token is not a join token", func(t *testing.T) {
		c := dialRaw(t, f, f.secrets.Admin)
		expectCode(c, protocol.CodeUnauthorized)
	})
	t.Run("no token in the handshake", func(t *testing.T) {
		c := dialRaw(t, f, "")
		expectCode(c, protocol.CodeVersion)
		expectClosed(c)
	})
	t.Run("version", func(t *testing.T) {
		c := dialProtos(t, f, []string{"fedcast.v99", protocol.Subprotocols(f.secrets.LHAs[0])[1]})
		expectCode(c, protocol.CodeVersion)
	})
	t.Run("second connection replaces the first", func(t *testing.T) {
		old := dialRaw(t, f, f.secrets.LHAs[1])
		expect[*protocol.Welcome](old)
		nw := dialRaw(t, f, f.secrets.LHAs[1])
		expect[*protocol.Welcome](nw)
		expectCode(old, protocol.CodeReplaced)
		if st := expectClosed(old); st != websocket.StatusPolicyViolation {
			t.Errorf("old connection closed with %v", st)
		}
	})
	t.Run("oversized frame", func(t *testing.T) {
		c := dialRaw(t, f, f.secrets.LHAs[0])
		expect[*protocol.Welcome](c)
		c.write(protocol.Binary, make([]byte, protocol.FrameSize(f.eng.Study.Params)+1))
		if st := expectClosed(c); st != websocket.StatusMessageTooBig {
			t.Errorf("oversized frame: close status %v, want 1009", st)
		}
	})
	t.Run("bad origin", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, resp, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-origin dial: %v, %v", resp, err)
		}
		ws, _, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {f.http.URL}},
			Subprotocols: protocol.Subprotocols(f.secrets.LHAs[0])})
		if err != nil {
			t.Errorf("same-origin dial refused: %v", err)
		} else {
			if ws.Subprotocol() != protocol.Subprotocol {
				t.Errorf("selected subprotocol %q, want %q", ws.Subprotocol(), protocol.Subprotocol)
			}
			ws.CloseNow()
		}
	})
	if f.srv.PublicStatus().EpsilonSpent != 0 && f.srv.PublicStatus().Round == 0 {
		t.Error("hostile connections changed the budget")
	}
}

func get(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestStatusEndpoints(t *testing.T) {
	f := hostile(t)
	code, b := get(t, f.http.URL+"/api/status", "")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"round", "rounds", "epsilon_spent", "epsilon_budget", "delta", "noise_multiplier", "state", "schedule", "as_of"} {
		if _, ok := st[k]; !ok {
			t.Errorf("public status lacks %q", k)
		}
	}
	for k := range st {
		for _, bad := range []string{"online", "sampled", "participa", "received", "lhas", "duration"} {
			if strings.Contains(k, bad) {
				t.Errorf("public status field %q reveals participation", k)
			}
		}
	}
	if st["state"] != "waiting" || st["insecure_seed"] != false {
		t.Errorf("status %v", st)
	}
	for _, p := range []string{"/api/admin/status", "/api/admin/ledger", "/api/admin/model", "/metrics"} {
		if code, _ := get(t, f.http.URL+p, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without token: %d", p, code)
		}
		if code, _ := get(t, f.http.URL+p, f.secrets.LHAs[0]); code != http.StatusUnauthorized {
			t.Errorf("%s with an LHA token: %d", p, code)
		}
		if code, b := get(t, f.http.URL+p, f.secrets.Admin); code != http.StatusOK {
			t.Errorf("%s with the admin token: %d %s", p, code, b)
		}
	}
	_, b = get(t, f.http.URL+"/api/admin/status", f.secrets.Admin)
	var a AdminStatus
	if err := json.Unmarshal(b, &a); err != nil || a.Enrolled != 2 || len(a.LHAs) != 2 {
		t.Errorf("admin status %s (%v)", b, err)
	}
	if code, _ := get(t, f.http.URL+"/api/nothing", ""); code != http.StatusNotFound {
		t.Errorf("unknown API path: %d", code)
	}
}

func TestResumeResendsCommittedModel(t *testing.T) {
	file, secrets, err := study.Create(study.CreateOptions{Names: lhaNames(2), Template: study.File{StartQuorum: 1,
		Settings: protocol.Settings{Epsilon: 10, Rounds: 4,
			ExpectedClients: 2, Hidden: []int{4}, LocalEpochs: 1, RoundLength: study.Duration(300 * time.Millisecond)}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := file.Marshal()
	path := filepath.Join(t.TempDir(), "ledger.db")
	run := func(rounds int) (string, float64) {
		l, err := ledger.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		eng, err := study.Open(file, raw, l.Store(), nil)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := New(&Options{Engine: eng, Ledger: l, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		defer srv.Close()
		f := &fixture{http: hs, eng: eng}
		c := readyRaw(t, f, secrets.LHAs[0])
		expect[*protocol.Welcome](c)
		var hash string
		var eps float64
		if eng.Rounds() > 0 {
			// The committed model is re-sent unchanged before anything else.
			res := expect[*protocol.RoundResult](c)
			hash, eps = res.Event.ModelSHA256, res.Event.Epsilon
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		for srv.PublicStatus().Round < rounds {
			res := expect[*protocol.RoundResult](c) // dropouts: rounds end at their slot's close
			hash, eps = res.Event.ModelSHA256, res.Event.Epsilon
		}
		cancel()
		<-done
		return hash, eps
	}
	h1, e1 := run(2)
	h2, e2 := run(0) // restart: just reconnect
	if h1 != h2 || e1 != e2 {
		t.Fatalf("after restart the coordinator re-sent %s (ε %v), before %s (ε %v)", h2, e2, h1, e1)
	}
	l, _ := ledger.Open(path)
	defer l.Close()
	rs, _ := l.Rounds()
	if len(rs) != 2 || rs[1].ModelSHA256 != h1 {
		t.Errorf("ledger %+v", rs)
	}
}

// dialStatus dials with token in the handshake and returns the HTTP
// status of a refused handshake (0 when it was upgraded).
func dialStatus(t *testing.T, f *fixture, token string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{Subprotocols: protocol.Subprotocols(token)})
	if err == nil {
		ws.CloseNow()
		return 0
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	return resp.StatusCode
}

// TestFailedAuthLimit: refused handshakes are counted per address; past
// the limit the address gets HTTP 429 before any upgrade, but a valid
// token from the same address is still accepted.
func TestFailedAuthLimit(t *testing.T) {
	f := start(t, study.File{Settings: protocol.Settings{Name: "bounds", Epsilon: 10, Rounds: 3, ExpectedClients: 2, Hidden: []int{4},
		LocalEpochs: 1, RoundLength: study.Duration(time.Hour)}}, lhaNames(2), nil, func(o *Options) {
		o.MaxFailedAuth = 2
	})
	for i := range 2 {
		c := dialRaw(t, f, "not-a-token")
		expectCode(c, protocol.CodeUnauthorized)
		if i == 0 && f.srv.fails.Tracked() != 1 {
			t.Errorf("%d addresses counted, want 1", f.srv.fails.Tracked())
		}
	}
	if code := dialStatus(t, f, "not-a-token"); code != http.StatusTooManyRequests {
		t.Fatalf("third failed attempt: HTTP %d, want 429", code)
	}
	if code := dialStatus(t, f, f.secrets.LHAs[0]); code != 0 {
		t.Fatalf("a valid token from an address past its limit: HTTP %d, want accepted", code)
	}
	if hostile(t).srv.fails.Max() != study.DefaultMaxFailedAuth {
		t.Error("default limit not applied")
	}
}

// TestAddrKey: the limit's unit is an IPv4 address or an IPv6 /64.
func TestAddrKey(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", false},
		{"::ffff:10.0.0.1", "10.0.0.1", true},
		{"2001:db8::1", "2001:db8::ffff:1", true},
		{"2001:db8::1", "2001:db8:0:1::1", false},
	} {
		if got := addrKey(c.a) == addrKey(c.b); got != c.same {
			t.Errorf("addrKey(%s) == addrKey(%s): %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
