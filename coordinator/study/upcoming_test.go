package study

import (
	"strconv"
	"testing"
	"time"
)

// TestUpcoming: what the dashboard is told the round loop waits for, at
// each step of a continuing study of 3 campaigns of 2 rounds (one every
// 10 slots of 1 minute) with a start quorum of 2 of 3, and after a
// restart with a round committed and not yet sent.
func TestUpcoming(t *testing.T) {
	f, raw := campaignStudy(t, 3)
	f.StartQuorum = 2
	seed := uint64(3)
	store := &MemStore{}
	e, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFake(3)
	tr.online[1], tr.online[2] = false, false
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, t0)
	if err != nil {
		t.Fatal(err)
	}
	L, every, slack := time.Minute, 10*time.Minute, time.Duration(f.RoundSlack)
	tick := func(at time.Time) Next {
		t.Helper()
		next, err := c.Tick(at)
		if err != nil {
			t.Fatal(err)
		}
		for lha := range 3 {
			tr.take(lha)
		}
		return next
	}
	ptr := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	check := func(name string, want Upcoming) {
		t.Helper()
		got := c.Upcoming()
		if got.StartQuorum != want.StartQuorum || got.NextRound != want.NextRound || got.PendingRound != want.PendingRound ||
			!sameTime(got.NextRoundOpens, want.NextRoundOpens) || !sameTime(got.ResumeBy, want.ResumeBy) || !sameTime(got.PendingRelease, want.PendingRelease) {
			t.Errorf("%s: %s, want %s", name, upcomingString(got, t0), upcomingString(want, t0))
		}
	}

	tick(t0)
	check("1 of the 2 of the quorum online", Upcoming{StartQuorum: 2})
	tr.online[1], tr.online[2] = true, true
	tick(t0) // t₀: the quorum is ready, round 1 opens
	check("round 1 open", Upcoming{StartQuorum: 2})
	tick(t0.Add(L - slack)) // round 1's window closes, it is committed
	check("round 1 committed", Upcoming{StartQuorum: 2, PendingRound: 1, PendingRelease: ptr(L), NextRound: 2, NextRoundOpens: ptr(L)})
	tick(t0.Add(L))           // round 1 released, round 2 opens
	tick(t0.Add(2*L - slack)) // round 2 committed
	tick(t0.Add(2 * L))       // round 2 released: campaign 1 is done
	check("between campaigns", Upcoming{StartQuorum: 2, NextRound: 3, NextRoundOpens: ptr(every)})
	tick(t0.Add(every))             // round 3 opens
	tick(t0.Add(every + L - slack)) // round 3 committed; the coordinator is killed before its release

	// The restart: round 3 is recorded and not yet sent; the coordinator
	// waits for 2 LHAs for at most the grace (one round length).
	restart := t0.Add(every + L + 10*time.Second)
	e2, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	tr.online[0], tr.online[1], tr.online[2] = false, false, false
	c, err = NewCoordinator(e2, DriverOptions{Transport: tr}, restart)
	if err != nil {
		t.Fatal(err)
	}
	tick(restart)
	check("restarted, no LHA back", Upcoming{StartQuorum: 2, PendingRound: 3, ResumeBy: ptr(every + 2*L + 10*time.Second)})
	tr.online[0], tr.online[1] = true, true
	tick(restart) // the quorum is back: round 3 goes out at the end of a slot of its own, round 4 opens then
	// Campaign 2's planned slots are over by then, but its window (until
	// campaign 3's start) is not: round 4 opens at once, not at campaign
	// 3's start.
	check("resumed", Upcoming{StartQuorum: 2, PendingRound: 3, PendingRelease: ptr(every + 2*L), NextRound: 4, NextRoundOpens: ptr(every + 2*L)})
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func upcomingString(u Upcoming, t0 time.Time) string {
	at := func(p *time.Time) string {
		if p == nil {
			return "–"
		}
		return "t₀+" + p.Sub(t0).String()
	}
	return "quorum " + strconv.Itoa(u.StartQuorum) + ", resume by " + at(u.ResumeBy) + ", next round " + strconv.Itoa(u.NextRound) + " at " + at(u.NextRoundOpens) +
		", pending round " + strconv.Itoa(u.PendingRound) + " released at " + at(u.PendingRelease)
}
