package object

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// newStudy returns a study file of n LHAs (round length 10 s) and its
// join tokens.
func newStudy(t *testing.T, n int) ([]byte, *study.Secrets) {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = string(rune('A' + i))
	}
	return createStudy(t, names, protocol.Settings{Epsilon: 4, Rounds: 2, ExpectedClients: n,
		Hidden: []int{4}, RoundLength: study.Duration(10 * time.Second), RoundSlack: study.Duration(time.Second)})
}

// createStudy returns the study file of the named LHAs with settings s
// and its join tokens.
func createStudy(t *testing.T, names []string, s protocol.Settings) ([]byte, *study.Secrets) {
	t.Helper()
	f, sec, err := study.Create(study.CreateOptions{Names: names, Template: study.File{Settings: s}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return raw, sec
}

// join connects c with token in its handshake (as the JavaScript glue
// passes the Sec-WebSocket-Protocol header) and says ready, as an LHA
// whose file is checked; the effects of both, in order (the alarm and
// stored state as of the ready).
func join(t *testing.T, o *Object, c int, token string, now time.Time) *Effects {
	t.Helper()
	fx := connect(t, o, c, token, now)
	r := o.Message(c, false, readyFrame(t), now)
	fx.Sends, fx.Closes, fx.Log = append(fx.Sends, r.Sends...), append(fx.Closes, r.Closes...), append(fx.Log, r.Log...)
	fx.Alarm = r.Alarm
	if r.State != nil {
		fx.State = r.State
	}
	return fx
}

// connect connects c with token in its handshake; it is not ready.
func connect(t *testing.T, o *Object, c int, token string, now time.Time) *Effects {
	t.Helper()
	fx, err := o.Connect(c, []string{strings.Join(protocol.Subprotocols(token), ", ")}, "203.0.113.7", now)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

func readyFrame(t *testing.T) []byte {
	t.Helper()
	_, b, err := protocol.Encode(&protocol.Ready{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode reads the frames fx sends to connection c.
func decode(t *testing.T, fx *Effects, c int) []protocol.Message {
	t.Helper()
	var out []protocol.Message
	for _, s := range fx.Sends {
		if s.Conn != c {
			continue
		}
		k := protocol.Text
		if s.Binary {
			k = protocol.Binary
		}
		m, err := protocol.Decode(k, s.Data)
		if err != nil {
			t.Fatalf("frame to %d: %v", c, err)
		}
		out = append(out, m)
	}
	return out
}

func code(m protocol.Message) protocol.Code {
	if e, ok := m.(*protocol.Error); ok {
		return e.Code
	}
	return 0
}

func closed(fx *Effects, c int) bool {
	for _, cl := range fx.Closes {
		if cl.Conn == c {
			return true
		}
	}
	return false
}

// A new study stores its genesis at once, waits for its quorum without an
// alarm, and starts the schedule (round 1 opens) when the last LHA joins.
func TestQuorumStartsTheSchedule(t *testing.T) {
	raw, sec := newStudy(t, 2)
	o, fx, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if fx.State == nil || !fx.Alarm.IsZero() {
		t.Fatalf("new study: state %d bytes, alarm %v; want the genesis and no alarm", len(fx.State), fx.Alarm)
	}
	fx = join(t, o, 1, sec.LHAs[0], t0)
	if ms := decode(t, fx, 1); len(ms) != 1 || ms[0].Type() != protocol.TypeWelcome || !fx.Alarm.IsZero() {
		t.Fatalf("first join: %+v, alarm %v", ms, fx.Alarm)
	}
	at := t0.Add(time.Second)
	fx = join(t, o, 2, sec.LHAs[1], at)
	var starts int
	for _, c := range []int{1, 2} {
		for _, m := range decode(t, fx, c) {
			if rs, ok := m.(*protocol.RoundStart); ok && rs.Round == 1 {
				starts++
			}
		}
	}
	if starts != 2 || !fx.Alarm.Equal(at.Add(9*time.Second)) {
		t.Fatalf("quorum: %d round_starts (m = N: want 2), alarm %v, want the window's close %v", starts, fx.Alarm, at.Add(9*time.Second))
	}
	if st := o.Status(); st.State != protocol.StateRunning || st.Schedule.Round != 1 {
		t.Fatalf("status %+v", st)
	}
}

// Rounds move only with the alarm: each phase at its time, a repeated or
// early alarm does nothing, and the round is stored (Effects.State) at
// its commit, before the release one slot later.
func TestAlarmsAreIdempotentAndCommitBeforeRelease(t *testing.T) {
	raw, sec := newStudy(t, 2)
	o, _, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range sec.LHAs {
		join(t, o, i+1, tok, t0)
	}
	closeAt := t0.Add(9 * time.Second)
	if fx := o.Alarm(t0.Add(5 * time.Second)); len(fx.Sends) != 0 || fx.State != nil || !fx.Alarm.Equal(closeAt) {
		t.Fatalf("early alarm: %d sends, state %v, alarm %v", len(fx.Sends), fx.State != nil, fx.Alarm)
	}
	// Both LHAs answer, with updates whose numbers are easy to find.
	var frames [][]byte
	for i := range sec.LHAs {
		u := make([]float64, len(o.eng.Global()))
		for j := range u {
			u[j] = 0.0123456789 * float64(i+1)
		}
		_, b, err := protocol.Encode(&protocol.Update{Round: 1, Weights: u})
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
		fx := o.Message(i+1, true, b, t0.Add(2*time.Second))
		if ms := decode(t, fx, i+1); len(ms) != 1 || ms[0].Type() != protocol.TypeAccepted {
			t.Fatalf("update of LHA %d answered %+v", i, ms)
		}
		if fx.State != nil {
			t.Fatalf("an update changed the stored state")
		}
	}
	fx := o.Alarm(closeAt)
	// Nothing un-noised is stored: neither an update nor the raw sum.
	for i, f := range frames {
		if bytes.Contains(fx.State, f[protocol.HeaderSize:][:64]) ||
			bytes.Contains(fx.State, []byte(strconv.FormatFloat(0.0123456789*float64(i+1), 'g', -1, 64))) {
			t.Errorf("the stored state holds LHA %d's update", i)
		}
	}
	if bytes.Contains(fx.State, []byte(strconv.FormatFloat(0.0123456789*3, 'g', -1, 64))) {
		t.Error("the stored state holds the un-noised sum")
	}
	if fx.State == nil || len(fx.Sends) != 0 || !fx.Alarm.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("close: state %v, %d sends (nothing is released before the slot's end), alarm %v", fx.State != nil, len(fx.Sends), fx.Alarm)
	}
	var st study.State
	if err := st.UnmarshalBinary(fx.State); err != nil || st.Rounds() != 1 {
		t.Fatalf("stored state: %v, %d rounds", err, st.Rounds())
	}
	if again := o.Alarm(closeAt); again.State != nil || len(again.Sends) != 0 {
		t.Fatalf("repeated alarm changed something: %+v", again)
	}
	fx = o.Alarm(t0.Add(10 * time.Second))
	ms := decode(t, fx, 1)
	if len(ms) < 1 {
		t.Fatal("nothing released at the slot's end")
	}
	rr, ok := ms[0].(*protocol.RoundResult)
	if !ok || rr.Event.ModelSHA256 != st.Events[0].ModelSHA256 {
		t.Fatalf("release: %+v; stored model %s", ms, st.Events[0].ModelSHA256)
	}
	if again := o.Alarm(t0.Add(10 * time.Second)); len(again.Sends) != 0 || again.State != nil {
		t.Fatalf("repeated release: %+v", again)
	}
}

// A restart resumes from the stored bytes: the open round was abandoned,
// and the round committed before the crash and never released is released
// at the first slot after the restart, marked as a re-release.
func TestRestartResumesFromStoredState(t *testing.T) {
	raw, sec := newStudy(t, 2)
	o, fx, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	stored := fx.State
	for i, tok := range sec.LHAs {
		if fx := join(t, o, i+1, tok, t0); fx.State != nil {
			stored = fx.State // t₀
		}
	}
	if fx := o.Alarm(t0.Add(9 * time.Second)); fx.State != nil {
		stored = fx.State
	}
	// The process dies before the release; round 1 is committed.
	now := t0.Add(30 * time.Second)
	o2, fx, err := New(raw, stored, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if fx.Alarm.IsZero() || fx.Alarm.After(now.Add(time.Duration(10*time.Second))) {
		t.Fatalf("restart: alarm %v, want the restart grace's end", fx.Alarm)
	}
	fx = join(t, o2, 7, sec.LHAs[1], now)
	ms := decode(t, fx, 7)
	if w, ok := ms[0].(*protocol.Welcome); !ok || len(w.Log) != 0 || len(ms) != 1 {
		t.Fatalf("rejoin before the release: %+v; want only a welcome without round 1 (committed, not yet released)", ms)
	}
	// Round 1 is released at the first slot after the restart, like any
	// release, and recorded as a re-release (issue 22).
	at := o2.Alarm(now).Alarm
	var rr *protocol.RoundResult
	for range 4 {
		fx = o2.Alarm(at)
		for _, m := range decode(t, fx, 7) {
			if r, ok := m.(*protocol.RoundResult); ok {
				rr = r
			}
		}
		if fx.State != nil {
			stored = fx.State
		}
		if rr != nil || fx.Alarm.IsZero() {
			break
		}
		at = fx.Alarm
	}
	var st study.State
	if err := st.UnmarshalBinary(stored); err != nil {
		t.Fatal(err)
	}
	if rr == nil || rr.Event.Round != 1 || rr.Event.ModelSHA256 != st.Events[0].ModelSHA256 {
		t.Fatalf("after the restart: round_result %+v, want round 1 with the stored model %s", rr, st.Events[0].ModelSHA256)
	}
	if st.Released == nil || *st.Released != 1 || len(st.Rereleased) != 1 || st.Rereleased[0] != 1 {
		t.Errorf("stored state: released %v, re-released %v; want 1 and [1]", st.Released, st.Rereleased)
	}
}

// Connection rules: an unknown token, no token, the failed-attempt limit
// and a second
// connection with the same token (which replaces the first).
func TestConnectionRules(t *testing.T) {
	raw, sec := newStudy(t, 2)
	o, _, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if fx := join(t, o, 1, "not-a-token", t0); len(decode(t, fx, 1)) != 1 || code(decode(t, fx, 1)[0]) != protocol.CodeUnauthorized || !closed(fx, 1) {
		t.Errorf("unknown token: %+v", fx)
	}
	// No token in the handshake (a client that would send hello): refused
	// at once, nothing kept; a frame on it is ignored.
	if fx, err := o.Connect(2, nil, "203.0.113.7", t0); err != nil || code(decode(t, fx, 2)[0]) != protocol.CodeVersion || !closed(fx, 2) {
		t.Errorf("no token: %+v, %v", fx, err)
	}
	if fx := o.Message(2, true, []byte("fc"), t0); len(fx.Sends) != 0 {
		t.Errorf("a frame on a refused connection was answered: %+v", fx.Sends)
	}
	// Past the limit of failed attempts, an address gets no socket; a
	// valid token from it still joins.
	for i := range study.DefaultMaxFailedAuth {
		if _, err := o.Connect(100+i, []string{"fedcast.v1, fedcast.auth.Z3Vlc3M"}, "203.0.113.8", t0); err != nil {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	if _, err := o.Connect(200, []string{"fedcast.v1, fedcast.auth.Z3Vlc3M"}, "203.0.113.8", t0); !errors.Is(err, ErrTooManyFailures) {
		t.Errorf("failure past the limit: %v, want ErrTooManyFailures", err)
	}
	if fx, err := o.Connect(201, protocol.Subprotocols(sec.LHAs[1]), "203.0.113.8", t0); err != nil || decode(t, fx, 201)[0].Type() != protocol.TypeWelcome {
		t.Errorf("valid token from an address past its limit: %v", err)
	}
	if o.AdminStatus().Online != 1 {
		t.Fatalf("online %d after the failures", o.AdminStatus().Online)
	}
	o.Disconnect(201, t0)
	join(t, o, 3, sec.LHAs[0], t0)
	fx := join(t, o, 4, sec.LHAs[0], t0)
	if ms := decode(t, fx, 3); len(ms) != 1 || code(ms[0]) != protocol.CodeReplaced || !closed(fx, 3) {
		t.Errorf("replaced connection got %+v", ms)
	}
	if ms := decode(t, fx, 4); len(ms) != 1 || ms[0].Type() != protocol.TypeWelcome {
		t.Errorf("new connection got %+v", ms)
	}
	big := make([]byte, o.ReadLimit()+1)
	if fx := o.Message(4, true, big, t0); code(decode(t, fx, 4)[0]) != protocol.CodeTooLarge || !closed(fx, 4) {
		t.Errorf("frame over the limit: %+v", fx.Closes)
	}
	if got := o.AdminStatus(); got.Online != 0 || got.Enrolled != 2 {
		t.Errorf("admin status after the closes: %d online of %d", got.Online, got.Enrolled)
	}
}

func TestCheckOrigin(t *testing.T) {
	raw, _ := newStudy(t, 1)
	f, err := study.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	f.Origins = []string{"*.lha.example.org", "https://dash.example.net"}
	raw, err = f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		origin, host string
		ok           bool
	}{
		{"", "fedcast.example.com", true}, // native client
		{"https://fedcast.example.com", "fedcast.example.com", true},
		{"https://a.lha.example.org", "fedcast.example.com", true},
		{"https://dash.example.net", "fedcast.example.com", true},
		{"http://dash.example.net", "fedcast.example.com", false},
		{"https://evil.example.com", "fedcast.example.com", false},
		{"not a url", "fedcast.example.com", false},
	} {
		if err := o.CheckOrigin(c.origin, c.host); (err == nil) != c.ok {
			t.Errorf("origin %q on %q: %v, want ok=%v", c.origin, c.host, err, c.ok)
		}
	}
}

// A study whose update frames exceed the platform's websocket message
// limit is refused when the object starts.
func TestModelOverPlatformLimit(t *testing.T) {
	raw, _ := newStudy(t, 1)
	f, err := study.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	// 10-4094-1013-1: 4 194 283 parameters, within the protocol's
	// MaxWeights, but a frame of 33 558 408 bytes is over 32 MiB.
	f.Hidden = []int{4094, 1013}
	raw, err = f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = New(raw, nil, nil, t0)
	if err == nil || !strings.Contains(err.Error(), "websocket message limit") {
		t.Fatalf("a 4 194 283-parameter model: %v; want the platform's limit", err)
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	rr := []byte{1, 2, 3}
	fx := &Effects{State: []byte(`{"x":1}`), Alarm: t0.Add(1500 * time.Microsecond),
		Sends:  []Send{{1, true, rr}, {2, true, rr}, {2, false, []byte("hi")}},
		Closes: []Close{{2, 1008, "bad frame"}}, Log: []string{"a"}}
	b, err := fx.Encode()
	if err != nil {
		t.Fatal(err)
	}
	_, blobs, err := DecodeEnvelope(b)
	if err != nil || len(blobs) != 3 {
		t.Fatalf("%d blobs (the shared round_result once), err %v", len(blobs), err)
	}
	got, err := DecodeEffects(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.State, fx.State) || len(got.Sends) != 3 || !bytes.Equal(got.Sends[1].Data, rr) || got.Sends[2].Binary ||
		got.Closes[0] != fx.Closes[0] || !got.Alarm.Equal(t0.Add(2*time.Millisecond)) {
		t.Fatalf("round trip: %+v", got)
	}
	// A helper study's forwarded set and request travel as blobs too.
	fx.Forwarded, fx.Fetch = []byte("set"), &Fetch{URL: "https://helper.example.org/helper/v1/aggregate", Round: 3, Body: []byte("{}"), Timeout: 12 * time.Second}
	if b, err = fx.Encode(); err != nil {
		t.Fatal(err)
	}
	if got, err = DecodeEffects(b); err != nil || !bytes.Equal(got.Forwarded, fx.Forwarded) || got.Fetch == nil ||
		got.Fetch.URL != fx.Fetch.URL || got.Fetch.Round != 3 || !bytes.Equal(got.Fetch.Body, fx.Fetch.Body) || got.Fetch.Timeout != fx.Fetch.Timeout {
		t.Fatalf("round trip with a helper: %+v, %v", got, err)
	}
	fx.KeyFetch = &KeyFetch{URL: "https://helper.example.org/helper/v1/key", Timeout: 10 * time.Second}
	if b, err = fx.Encode(); err != nil {
		t.Fatal(err)
	}
	if got, err = DecodeEffects(b); err != nil || got.KeyFetch == nil || *got.KeyFetch != *fx.KeyFetch {
		t.Fatalf("round trip with a key request: %+v, %v", got.KeyFetch, err)
	}
	for _, bad := range [][]byte{nil, []byte("fcdo"), b[:len(b)-1], append(bytes.Clone(b), 0)} {
		if _, _, err := DecodeEnvelope(bad); !errors.Is(err, ErrEnvelope) {
			t.Errorf("%d bytes: %v", len(bad), err)
		}
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	b, _ := (&Effects{State: []byte("{}"), Sends: []Send{{1, true, []byte{9}}}}).Encode()
	f.Add(b)
	f.Add([]byte("fcdo\x02\x00\x00\x00{}\x01\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, blobs, err := DecodeEnvelope(b)
		if err != nil {
			return
		}
		again, err := EncodeEnvelope(jsonRaw(h), blobs)
		if err != nil {
			t.Fatal(err)
		}
		if _, blobs2, err := DecodeEnvelope(again); err != nil || len(blobs2) != len(blobs) {
			t.Fatalf("re-encoded envelope: %v", err)
		}
	})
}

// jsonRaw marshals as itself.
type jsonRaw []byte

func (j jsonRaw) MarshalJSON() ([]byte, error) { return j, nil }

// A connection starts not ready: with one LHA ready and the other only
// connected, the quorum (N = 2) is not reached and nobody gets a
// round_start; the dashboard counts 2 online, 1 ready. The other's ready
// starts the schedule: both get round 1's round_start.
func TestReadyStartsTheSchedule(t *testing.T) {
	raw, sec := newStudy(t, 2)
	o, _, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	join(t, o, 1, sec.LHAs[0], t0)
	fx := connect(t, o, 2, sec.LHAs[1], t0)
	if ms := decode(t, fx, 2); len(ms) != 1 || ms[0].Type() != protocol.TypeWelcome || !fx.Alarm.IsZero() {
		t.Fatalf("a connection not ready: %+v, alarm %v; want the welcome only and no alarm", ms, fx.Alarm)
	}
	if a := o.AdminStatus(); a.Online != 2 || a.Ready != 1 || a.State != protocol.StateWaiting {
		t.Fatalf("admin status: %d online, %d ready, state %q; want 2, 1, waiting", a.Online, a.Ready, a.State)
	}
	// The dashboard's answer says what round 1 waits for, as serve's does.
	if b, err := json.Marshal(o.AdminView()); err != nil || !strings.Contains(string(b), `"start_quorum":2`) || !strings.Contains(string(b), `"ready":1`) {
		t.Errorf("admin view %s (%v): want the start quorum of 2 beside the status", b, err)
	}
	at := t0.Add(time.Second)
	fx = o.Message(2, false, readyFrame(t), at)
	for _, c := range []int{1, 2} {
		ms := decode(t, fx, c)
		if len(ms) != 1 || ms[0].Type() != protocol.TypeRoundStart || ms[0].(*protocol.RoundStart).Round != 1 {
			t.Fatalf("after the ready, connection %d got %+v; want round 1's round_start", c, ms)
		}
	}
	if a := o.AdminStatus(); a.Ready != 2 || a.State != protocol.StateRunning {
		t.Fatalf("admin status after the ready: %d ready, state %q", a.Ready, a.State)
	}
}

// The Worker's log names each LHA once, quoted: "LHA 001" is not logged
// as "LHA LHA 001".
func TestJoinLogLine(t *testing.T) {
	for _, c := range []struct {
		name string
		want string
	}{
		{"LHA 001", `LHA "LHA 001" joined (1 online)`},
		{"Gesundheitsamt Nord", `LHA "Gesundheitsamt Nord" joined (1 online)`},
	} {
		raw, sec := createStudy(t, []string{c.name, "other"}, protocol.Settings{Epsilon: 4, Rounds: 2, ExpectedClients: 2,
			Hidden: []int{4}, RoundLength: study.Duration(10 * time.Second), RoundSlack: study.Duration(time.Second)})
		o, _, err := New(raw, nil, nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		fx := join(t, o, 1, sec.LHAs[0], t0)
		if !slices.Contains(fx.Log, c.want) {
			t.Errorf("log %q; want the line %q", fx.Log, c.want)
		}
	}
}
