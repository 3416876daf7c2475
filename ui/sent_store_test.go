package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// helloSession is a session whose hello has left (TakeSent), as a page
// that has just connected.
type helloSession struct{ fakeSession }

func (helloSession) TakeSent() []session.Outgoing {
	return []session.Outgoing{{Type: "hello", Bytes: 76}}
}

// openPage plays the join page opened, or reloaded, in a study: it
// connects, and its hello leaves.
func openPage(t *testing.T, study string) *JoinState {
	t.Helper()
	st := protocol.Study{Settings: protocol.Settings{Name: study, Rounds: 1000}}
	s := &JoinState{Link: "x", Connect: func(context.Context, string) (Session, *protocol.Welcome, error) {
		return &helloSession{}, &protocol.Welcome{Study: st, LHA: "me", State: protocol.StateRunning}, nil
	}}
	s.connect(context.Background())
	if s.Phase != PhaseReady {
		t.Fatalf("the page did not connect: %v", s.Phase)
	}
	return s
}

// sendRounds plays n rounds of updates after the hello, one a minute,
// each counted.
func sendRounds(s *JoinState, n int) {
	hello := s.Sent[0].At
	for r := 1; r <= n; r++ {
		s.RecordSent("update", 2088, r)
		s.Sent[len(s.Sent)-1].At = hello.Add(time.Duration(r) * time.Minute)
		s.UpdateOutcome(r, OutcomeCounted, "")
	}
}

// TestSentKeptAcrossReloads: "What left this computer" is kept in this
// browser per study and LHA, and a reload mid-study lists what left
// before it, then the new hello: all of it with a store, the latest
// SentKept one by one and the rest in the summary row, with true totals;
// a damaged record is dropped and the list says so once; without a store
// the list lasts for the page's life.
func TestSentKeptAcrossReloads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		store  bool
		rounds int    // updates sent before the reload
		stored string // what the store holds instead ("": what the page wrote)
		// After the reload: messages listed one by one, in all, and the
		// summary row's start.
		kept, count int
		earlier     string
		lost        bool
	}{
		{name: "round trip", store: true, rounds: 3, kept: 5, count: 5, earlier: ""},
		{name: "cap with totals", store: true, rounds: 620, kept: SentKept, count: 622,
			earlier: "610 earlier messages, 1,271,668 bytes in all, sent "}, // the hello and 609 updates
		{name: "damaged value", store: true, rounds: 3, stored: `{"v":1,"sent":[{"type":"upd`, kept: 1, count: 1, lost: true},
		{name: "foreign version", store: true, rounds: 3, stored: `{"v":7,"sent":[]}`, kept: 1, count: 1, lost: true},
		{name: "nil store", store: false, rounds: 3, kept: 1, count: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memAccounts{}
			SentStore = nil
			if tc.store {
				SentStore = store
			}
			defer func() { SentStore = nil }()
			before := openPage(t, "sent-test")
			sendRounds(before, tc.rounds)
			if tc.stored != "" {
				store["fedcast-sent:sent-test:me"] = []byte(tc.stored)
			}
			s := openPage(t, "sent-test")
			if len(s.Sent) != tc.kept || s.SentCount() != tc.count || s.SentLost != tc.lost {
				t.Fatalf("after the reload: %d listed, %d in all, lost %v; want %d, %d, %v", len(s.Sent), s.SentCount(), s.SentLost, tc.kept, tc.count, tc.lost)
			}
			if last := s.Sent[len(s.Sent)-1]; last.Type != "hello" {
				t.Errorf("the last message listed is %+v, want the new hello", last)
			}
			if tc.lost {
				// The record written since is readable and keeps the note,
				// once, for the next reload.
				again := openPage(t, "sent-test")
				if !again.SentLost || len(again.Sent) != 2 || again.SentCount() != 2 {
					t.Errorf("next reload: lost %v, %d listed, %d in all; want the note and both hellos", again.SentLost, len(again.Sent), again.SentCount())
				}
			}
			if tc.lost || !tc.store {
				if s.SentTotal() != 76 {
					t.Errorf("total %d bytes, want the new hello's 76", s.SentTotal())
				}
				return
			}
			if want := before.SentTotal() + 76; s.SentTotal() != want {
				t.Errorf("total %d bytes, want %d", s.SentTotal(), want)
			}
			want := ""
			if tc.earlier != "" {
				// From the first hello to round 609, a minute apart.
				hello := before.SentEarlier.add(before.Sent).From
				want = tc.earlier + spanWords(hello, hello.Add(609*time.Minute)) + "."
			}
			if got := s.SentHiddenWords(); got != want {
				t.Errorf("summary row %q, want %q", got, want)
			}
			for i, e := range s.Sent[:len(s.Sent)-1] {
				if w := before.Sent[len(before.Sent)-len(s.Sent)+1+i]; e.What != w.What || !e.At.Equal(w.At) || e.Bytes != w.Bytes || e.Outcome != w.Outcome {
					t.Fatalf("message %d after the reload %+v, before it %+v", i, e, w)
				}
			}
		})
	}
}

// TestSentCapTotals: the summary row counts the messages kept as totals
// and those not shown alike, from the very first message on.
func TestSentCapTotals(t *testing.T) {
	s := &JoinState{}
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i := range SentKept + 100 {
		s.addSent(SentEntry{At: t0.Add(time.Duration(i) * time.Hour), Type: "report", Bytes: 100, Round: i + 1})
	}
	if len(s.Sent) != SentKept || s.SentEarlier.N != 100 || s.SentCount() != SentKept+100 || s.SentTotal() != 100*(SentKept+100) {
		t.Fatalf("%d kept, %+v earlier, %d in all, %d bytes", len(s.Sent), s.SentEarlier, s.SentCount(), s.SentTotal())
	}
	hidden := SentKept + 100 - SentShown
	want := fmt.Sprintf("%s earlier messages, %s bytes in all, sent from 2 Nov 09:00 to %s.", FormatCount(float64(hidden)),
		FormatCount(float64(100*hidden)), t0.Add(time.Duration(hidden-1)*time.Hour).Format("2 Jan 15:04"))
	if got := s.SentHiddenWords(); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	s.ToggleSentAll()
	if got := s.SentHiddenWords(); !strings.HasPrefix(got, "100 earlier messages, 10,000 bytes in all, sent from 2 Nov 09:00 to 6 Nov 12:00.") ||
		!strings.Contains(got, "Only the latest 500 are listed one by one.") {
		t.Errorf("summary with all shown: %q", got)
	}
}

// TestSentUnknownOutcome: an update still waiting for its answer when the
// page was reloaded will not get one; it says so instead of waiting.
func TestSentUnknownOutcome(t *testing.T) {
	store := memAccounts{}
	SentStore = store
	defer func() { SentStore = nil }()
	before := openPage(t, "unknown-test")
	before.RecordSent("update", 2088, 1)
	before.UpdateOutcome(1, OutcomeRefused, "too late")
	before.RecordSent("update", 2088, 2)
	var r sentRecord
	if err := json.Unmarshal(store["fedcast-sent:unknown-test:me"], &r); err != nil || len(r.Sent) != 3 || r.Sent[1].Reason != "too late" {
		t.Fatalf("stored %+v (%v): want the hello and both updates, the first refused", r, err)
	}
	s := openPage(t, "unknown-test")
	c := &JoinPage{S: s}
	if got := c.outcomeWords(s.Sent[1]); got != "not counted: too late" {
		t.Errorf("round 1: %q", got)
	}
	if got := c.outcomeWords(s.Sent[2]); !strings.Contains(got, "reloaded before the coordinator answered") {
		t.Errorf("round 2: %q", got)
	}
}

// TestSentClock: a message sent today shows its time; one from another
// day (kept across a reload) its day too.
func TestSentClock(t *testing.T) {
	c := &JoinPage{S: &JoinState{}}
	now := time.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 9, 5, 7, 0, time.Local)
	if got := c.clock(today); got != "09:05:07" {
		t.Errorf("today: %q", got)
	}
	if got := c.clock(today.AddDate(0, 0, -3)); got != today.AddDate(0, 0, -3).Format("2 Jan")+" 09:05:07" {
		t.Errorf("three days ago: %q", got)
	}
}
