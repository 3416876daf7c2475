package object

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// secureFixture is a study of two LHAs with a helper on the Durable
// Object, and the helper itself (coordinator/helper, in process) behind
// the HTTP API the object's Fetch effects address.
type secureFixture struct {
	raw    []byte
	sec    *study.Secrets
	key    *secagg.PrivateKey
	h      *helper.Helper
	hdir   string
	o      *Object
	now    time.Time
	states [][]byte // every state stored, in order
	loaded *Effects // New's effects at the last open
}

func newSecure(t *testing.T) *secureFixture {
	t.Helper()
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	f, sec, err := study.Create(study.CreateOptions{Names: []string{"A", "B"}, Template: study.File{Helper: &study.HelperRef{URL: "http://helper.test/", PublicKey: key.PublicKey().Bytes()},
		Settings: protocol.Settings{Epsilon: 4, Rounds: 2, ExpectedClients: 1,
			Hidden: []int{4}, RoundLength: study.Duration(10 * time.Second), RoundSlack: study.Duration(time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	x := &secureFixture{raw: raw, sec: sec, key: key, hdir: t.TempDir(), now: t0}
	if x.h, err = helper.New(key, x.hdir, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.h.Close() })
	x.open(t, nil, nil)
	return x
}

// open starts the object on stored state and forwarded set, and joins
// both LHAs.
func (x *secureFixture) open(t *testing.T, state, forwarded []byte) *Effects {
	t.Helper()
	o, fx, err := New(x.raw, state, forwarded, x.now)
	if err != nil {
		t.Fatal(err)
	}
	x.o, x.loaded = o, fx
	x.keep(fx)
	all := &Effects{}
	for c := 1; c <= 2; c++ {
		fx = join(t, o, c, x.sec.LHAs[c-1], x.now)
		x.keep(fx)
		all.Sends = append(all.Sends, fx.Sends...)
		all.Alarm = fx.Alarm
	}
	return all
}

func (x *secureFixture) keep(fx *Effects) *Effects {
	if fx.State != nil {
		x.states = append(x.states, fx.State)
	}
	return fx
}

// report sends each LHA's report (zeros) for round at x.now.
func (x *secureFixture) report(t *testing.T, round int) {
	t.Helper()
	st := x.o.eng.Study
	hash, _ := st.Hash()
	for c := 1; c <= 2; c++ {
		rep, err := secagg.NewReport(x.key.PublicKey(), hash, round, uint32(c-1), make([]int64, st.Params))
		if err != nil {
			t.Fatal(err)
		}
		_, b, err := protocol.Encode(&protocol.Report{Round: round, Body: rep.Marshal()})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decode(t, x.keep(x.o.Message(c, true, b, x.now)), c) {
			if m.Type() != protocol.TypeAccepted {
				t.Fatalf("report of LHA %d answered %T %+v", c, m, m)
			}
		}
	}
}

// ask posts the Fetch to the helper as the Durable Object would and
// returns its answer (status, status line, body).
func (x *secureFixture) ask(t *testing.T, f *Fetch) (int, string, []byte) {
	t.Helper()
	if f.URL != "http://helper.test/helper/v1/aggregate" || f.Timeout < 10*time.Second {
		t.Fatalf("fetch to %s with a timeout of %v", f.URL, f.Timeout)
	}
	rec := httptest.NewRecorder()
	x.h.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/helper/v1/aggregate", bytes.NewReader(f.Body)))
	return rec.Code, http.StatusText(rec.Code), rec.Body.Bytes()
}

// told reports whether both LHAs got a code message for round.
func told(t *testing.T, fx *Effects, want protocol.Code, round int) bool {
	for c := 1; c <= 2; c++ {
		ok := false
		for _, m := range decode(t, fx, c) {
			if e, is := m.(*protocol.Error); is && e.Code == want && e.Round == round {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// The Durable Object leads a study with a helper: at the window's close
// it stores the forwarded set and asks for a fetch to the helper (once,
// however often the alarm comes), commits when the helper's share comes
// back, releases at the slot's end, and the helper's ledger has the round.
func TestHelperRoundOnWorkers(t *testing.T) {
	x := newSecure(t)
	x.report(t, 1)
	close := x.o.next.At
	fx := x.keep(x.o.Alarm(close))
	if fx.Fetch == nil || fx.Forwarded == nil || fx.Fetch.Round != 1 {
		t.Fatalf("window closed: fetch %+v, forwarded %d bytes", fx.Fetch, len(fx.Forwarded))
	}
	if again := x.o.Alarm(close.Add(time.Millisecond)); again.Fetch != nil || again.Forwarded != nil {
		t.Fatal("a second alarm while the helper is asked asks again")
	}
	if rounds, _, _, _ := x.o.co.Committed(); rounds != 0 {
		t.Fatal("committed before the helper's share")
	}
	status, text, body := x.ask(t, fx.Fetch)
	if status != http.StatusOK {
		t.Fatalf("helper: %d %s", status, body)
	}
	fx = x.keep(x.o.HelperAnswer(1, status, text, body, close.Add(100*time.Millisecond)))
	if rounds, eps, _, _ := x.o.co.Committed(); rounds != 1 || fx.State == nil || !(eps > 0) {
		t.Fatalf("after the helper's share: %d rounds, ε %v, state %d bytes", rounds, eps, len(fx.State))
	}
	if x.o.HelperAnswer(1, status, text, body, close.Add(200*time.Millisecond)).State != nil {
		t.Fatal("a repeated answer changed the state")
	}
	fx = x.o.Alarm(fx.Alarm)
	for c := 1; c <= 2; c++ {
		got := false
		for _, m := range decode(t, fx, c) {
			if r, ok := m.(*protocol.RoundResult); ok && r.Event.Round == 1 && r.Event.Epsilon > 0 {
				got = true
			}
		}
		if !got {
			t.Fatalf("release to %d: no round_result of round 1 with secure aggregation", c)
		}
	}
	ex, err := helper.ExportLedger(x.hdir, "")
	if err != nil || len(ex.Rounds) != 1 || ex.Rounds[0].Reports != 2 {
		t.Fatalf("helper ledger: %v, %+v", err, ex)
	}
}

// A helper that is down, refuses, or has not answered by the release
// time: the round is abandoned, nothing committed or spent, and the LHAs
// are told in plain words.
func TestHelperDownOnWorkers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(x *secureFixture, f *Fetch, at time.Time) *Effects
	}{
		{"down", func(x *secureFixture, f *Fetch, at time.Time) *Effects {
			return x.o.HelperAnswer(f.Round, 0, "connection refused", nil, at)
		}},
		{"refuses", func(x *secureFixture, f *Fetch, at time.Time) *Effects {
			return x.o.HelperAnswer(f.Round, http.StatusConflict, "Conflict", []byte(`{"error":"round 1 was released with other reports"}`), at)
		}},
		{"late", func(x *secureFixture, f *Fetch, at time.Time) *Effects {
			return x.o.Alarm(x.o.next.At) // the release time, no answer
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newSecure(t)
			x.report(t, 1)
			close := x.o.next.At
			fx := x.o.Alarm(close)
			if fx.Fetch == nil {
				t.Fatal("no fetch at the window's close")
			}
			fx = tc.answer(x, fx.Fetch, close.Add(time.Second/2))
			if !told(t, fx, protocol.CodeRoundAbandoned, 1) {
				t.Fatalf("LHAs not told of the abandoned round: %+v", decode(t, fx, 1))
			}
			for _, m := range decode(t, fx, 1) {
				if e, ok := m.(*protocol.Error); ok && e.Code == protocol.CodeRoundAbandoned && !strings.Contains(e.Message, "no privacy budget was spent") {
					t.Fatalf("abandon message %q", e.Message)
				}
			}
			if rounds, eps, _, _ := x.o.co.Committed(); rounds != 0 || eps != 0 {
				t.Fatalf("abandoned round committed: %d rounds, ε %v", rounds, eps)
			}
		})
	}
}

// The forwarded set is stored before the request leaves: an object
// restarted after the helper released its share (the answer lost) forwards
// the same set again when the round reopens, though its LHAs sent new
// reports, and the helper's repeated share commits the round.
func TestHelperForwardedSetSurvivesRestart(t *testing.T) {
	x := newSecure(t)
	x.report(t, 1)
	close := x.o.next.At
	fx := x.keep(x.o.Alarm(close))
	first, forwarded := fx.Fetch, fx.Forwarded
	if status, _, body := x.ask(t, first); status != http.StatusOK { // the answer is lost
		t.Fatalf("helper: %d %s", status, body)
	}
	x.now = close.Add(time.Minute)
	fx = x.open(t, x.states[len(x.states)-1], forwarded)
	for i := 0; i < 10 && !roundOpen(x.o, x.now); i++ {
		x.now = fx.Alarm
		fx = x.keep(x.o.Alarm(x.now))
	}
	x.report(t, 1)
	fx = x.keep(x.o.Alarm(x.o.next.At))
	if fx.Fetch == nil || !bytes.Equal(fx.Fetch.Body, first.Body) || fx.Forwarded != nil {
		t.Fatalf("reopened round 1: fetch %v, same body %v, stored again %v", fx.Fetch != nil, fx.Fetch != nil && bytes.Equal(fx.Fetch.Body, first.Body), fx.Forwarded != nil)
	}
	status, text, body := x.ask(t, fx.Fetch)
	fx = x.o.HelperAnswer(1, status, text, body, x.o.next.At.Add(-time.Second/2))
	if rounds, _, _, _ := x.o.co.Committed(); rounds != 1 {
		t.Fatalf("after the repeated share: %d rounds (%d %s)", rounds, status, body)
	}
}

// A failure that comes after the round was abandoned (its release time
// passed) does not abandon the round's next attempt: that asks again.
func TestHelperLateFailureNotKept(t *testing.T) {
	x := newSecure(t)
	x.report(t, 1)
	fx := x.o.Alarm(x.o.next.At)
	if fx.Fetch == nil {
		t.Fatal("no fetch at the window's close")
	}
	release := x.o.next.At
	if fx = x.o.Alarm(release); !told(t, fx, protocol.CodeRoundAbandoned, 1) {
		t.Fatal("round 1 not abandoned at its release time")
	}
	x.o.HelperAnswer(1, 0, "timed out", nil, release.Add(time.Second))
	for at := release.Add(time.Second); !roundOpen(x.o, at); {
		at = x.o.next.At
		if !at.Before(release.Add(time.Hour)) {
			t.Fatal("round 1 not opened again within an hour")
		}
		x.o.Alarm(at)
	}
	x.now = x.o.next.At.Add(-2 * time.Second)
	x.report(t, 1)
	fx = x.o.Alarm(x.o.next.At)
	if fx.Fetch == nil || told(t, fx, protocol.CodeRoundAbandoned, 1) {
		t.Fatalf("the next attempt at round 1: fetch %v, abandoned at once %v", fx.Fetch != nil, told(t, fx, protocol.CodeRoundAbandoned, 1))
	}
}

// roundOpen says whether the public status has a round open at now (it
// also names the next round, with its opening still ahead, between a
// release or a restart and that opening).
func roundOpen(o *Object, now time.Time) bool {
	sch := o.co.Status().Schedule
	return sch != nil && sch.Round != 0 && sch.Opens != nil && !sch.Opens.After(now)
}
