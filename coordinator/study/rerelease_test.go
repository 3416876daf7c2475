package study

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestReReleaseAfterCrash: a round committed and never released (a crash
// between commit and release) is released after the restart at the first
// slot of the resumed schedule, like any release: the same round_result
// (model bit for bit) to every connected LHA, a "round released" log line,
// and a release record marked as a re-release in the store. Before that
// slot the public status counts only the released rounds, and no round
// begins before it.
func TestReReleaseAfterCrash(t *testing.T) {
	d := newDriven(t, 6, 5, DriverOptions{})
	f, store, c, t0 := d.f, d.store, d.c, d.t0
	// Round 1 released normally, round 2 committed; then the crash.
	at := runTo(t, c, t0, 2)
	if store.S.Rounds() != 2 || store.S.Released == nil || *store.S.Released != 1 || len(store.S.Rereleased) != 0 {
		t.Fatalf("before the crash: %d rounds, released %v, re-released %v; want 2, 1, none", store.S.Rounds(), store.S.Released, store.S.Rereleased)
	}
	committed := store.S.Events[1]

	// The restart, from the store alone.
	var logs bytes.Buffer
	tr := newFake(6)
	restart := at.Add(3 * time.Second)
	e2, c2 := d.open(t, DriverOptions{Transport: tr, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, restart)
	if r := e2.Unreleased(); r == nil || r.Event.Round != 2 {
		t.Fatalf("Unreleased after the restart: %+v, want round 2", r)
	}
	if st := c2.Status(); st.Round != 1 || st.EpsilonSpent != store.S.Events[0].Epsilon {
		t.Errorf("status before the re-release: round %d, ε %v; want round 1, ε %v", st.Round, st.EpsilonSpent, store.S.Events[0].Epsilon)
	}
	next, err := c2.Tick(restart)
	if err != nil {
		t.Fatal(err)
	}
	L := time.Duration(f.RoundLength)
	slot := e2.ScheduleStart().Add(time.Duration(protocol.FirstSlotAt(e2.ScheduleStart(), L, restart)) * L)
	if !next.At.Equal(slot) {
		t.Fatalf("after the restart the next tick is %v, want the slot %v", next.At, slot)
	}
	for lha := range 6 {
		if got := tr.take(lha); len(got) != 0 {
			t.Fatalf("LHA %d got %v before the slot", lha, got)
		}
	}
	if _, err := c2.Tick(slot); err != nil {
		t.Fatal(err)
	}
	for lha := range 6 {
		var res *protocol.RoundResult
		for _, m := range tr.take(lha) {
			if m, ok := m.(*protocol.RoundResult); ok {
				res = m
			}
		}
		if res == nil || res.Event.Round != 2 || res.Event.ModelSHA256 != committed.ModelSHA256 || protocol.HashHex(res.Weights) != committed.ModelSHA256 {
			t.Fatalf("LHA %d: round_result %+v, want round 2 with model %s", lha, res, committed.ModelSHA256)
		}
	}
	if store.S.Released == nil || *store.S.Released != 2 || len(store.S.Rereleased) != 1 || store.S.Rereleased[0] != 2 {
		t.Errorf("store after the re-release: released %v, re-released %v; want 2 and [2]", store.S.Released, store.S.Rereleased)
	}
	if l := logs.String(); !strings.Contains(l, `msg="round released" round=2 model_sha256=`+committed.ModelSHA256+" rereleased=true") {
		t.Errorf("no release line for round 2 in the log:\n%s", l)
	}
	if st := c2.Status(); st.Round != 2 {
		t.Errorf("status after the re-release: round %d, want 2", st.Round)
	}
	var cur *Round
	c2.WithEngine(func(e *Engine) { cur = e.Current() })
	if cur == nil || cur.ID != 3 {
		t.Errorf("after the re-release round %v is open, want round 3", cur)
	}
	// A second restart has nothing to release again.
	if e3, _ := d.open(t, DriverOptions{}, slot); e3.Unreleased() != nil {
		t.Errorf("after the re-release a restart finds round %d unreleased", e3.Unreleased().Event.Round)
	}
}
