package study

import (
	"errors"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// runAll ticks c from at until the study finishes and returns the rounds
// each LHA was asked to train in.
func runAll(t *testing.T, c *Coordinator, tr *fakeTransport, at time.Time) map[int][]int {
	t.Helper()
	starts := map[int][]int{}
	for range 400 {
		next, err := c.Tick(at)
		if err != nil {
			t.Fatal(err)
		}
		for lha := range tr.online {
			for _, m := range tr.take(lha) {
				if m, ok := m.(*protocol.RoundStart); ok {
					starts[lha] = append(starts[lha], m.Round)
				}
			}
		}
		if next.Finished {
			return starts
		}
		at = next.At
	}
	t.Fatal("the study did not finish")
	return nil
}

// TestTopUpAfterTheLastCampaign: a study of 3 campaigns at ε = 2 ends; a
// top-up to ε = 3 with 2 more campaigns is recorded in the store, the
// study runs again (rounds 7–10, campaigns 4 and 5, at the top-up's c'),
// and the lifetime ε ends at most at the new budget. A reopened engine
// rebuilds the same public parameters; a tampered top-up is refused.
func TestTopUpAfterTheLastCampaign(t *testing.T) {
	f, raw := campaignStudy(t, 3)
	seed := uint64(5)
	store := &MemStore{}
	e, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	tr := newFake(3)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, t0)
	if err != nil {
		t.Fatal(err)
	}
	runAll(t, c, tr, t0)
	if e.Finished() != ReasonRounds || store.S.Rounds() != 6 {
		t.Fatalf("before the top-up: finished %q after %d rounds", e.Finished(), store.S.Rounds())
	}
	before := e.Study

	// The coordinator stops, tops up, and starts again.
	e2, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(25 * time.Minute)
	tu, err := e2.TopUp(3, 2, at)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Finished() != "" || e2.Study.Rounds != 10 || e2.Study.Epsilon != 3 || len(store.S.TopUps) != 1 {
		t.Fatalf("after the top-up: finished %q, %d rounds, ε=%v, %d top-ups stored", e2.Finished(), e2.Study.Rounds, e2.Study.Epsilon, len(store.S.TopUps))
	}
	if tu.Previous != before.ID() {
		t.Fatal("the top-up does not name the parameters it raised")
	}
	e3, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if e3.Finished() != "" || e3.Study.ID() != e2.Study.ID() {
		t.Fatalf("reopened: finished %q, parameters %s, want %s", e3.Finished(), e3.Study.ID(), e2.Study.ID())
	}
	tr = newFake(3)
	c3, err := NewCoordinator(e3, DriverOptions{Transport: tr}, at)
	if err != nil {
		t.Fatal(err)
	}
	starts := runAll(t, c3, tr, at)
	if got := starts[0]; len(got) != 4 || got[0] != 7 || got[3] != 10 {
		t.Fatalf("after the top-up LHA 0 trained in rounds %v, want 7–10", got)
	}
	if store.S.Rounds() != 10 || e3.Finished() != ReasonRounds {
		t.Fatalf("%d rounds stored, finished %q", store.S.Rounds(), e3.Finished())
	}
	for _, ev := range store.S.Events[6:] {
		if ev.NoiseMultiplier != tu.NoiseMultiplier {
			t.Fatalf("added round %d has c=%v, the top-up calibrated %v", ev.Round, ev.NoiseMultiplier, tu.NoiseMultiplier)
		}
		if k, _ := e3.Study.CampaignOf(ev.Round); k < 4 {
			t.Fatalf("added round %d is in campaign %d", ev.Round, k)
		}
	}
	filter, err := privacy.FilterEpsilon(e3.Study.PlannedEvents(), f.Delta, tu.Order)
	if err != nil || filter > 3 || filter < 2.99 {
		t.Fatalf("all 10 rounds under the filter: ε=%v (%v), want 3", filter, err)
	}
	if _, eps := c3.Progress(); !(eps <= filter) || eps <= 2 {
		t.Fatalf("lifetime ε %v after the top-up (filter %v)", eps, filter)
	}

	// A store whose top-up was rewritten (less noise) does not open.
	bad := &MemStore{S: store.S.Clone()}
	bad.S.TopUps[0].NoiseMultiplier *= 0.5
	if _, err := Open(f, raw, bad, &Options{InsecureSeed: &seed}); !errors.Is(err, ErrMismatch) {
		t.Fatalf("tampered top-up: %v, want ErrMismatch", err)
	}
}

func TestTopUpRefusedForPLD(t *testing.T) {
	f, _ := campaignStudy(t, 3)
	f.Accountant = privacy.AccountantPLD
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(f, raw, &MemStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.TopUp(3, 1, time.Now()); !errors.Is(err, protocol.ErrTopUp) {
		t.Fatalf("top-up of a PLD study: %v", err)
	}
}

// TestTopUpPastStartOpensAtNextFreeSlot: a top-up whose added campaigns'
// starts on the timetable have passed runs them from the next free slot
// after the restart, one after the other, instead of waiting for a later
// campaign start; one whose start lies ahead keeps it.
func TestTopUpPastStartOpensAtNextFreeSlot(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		restart time.Duration
		want    map[int]time.Duration // round → opening after t₀
	}{
		// Campaigns 4 and 5 start at 30 and 40 minutes on the timetable.
		{"ahead", 25 * time.Minute, map[int]time.Duration{7: 30 * time.Minute, 8: 31 * time.Minute, 9: 40 * time.Minute, 10: 41 * time.Minute}},
		{"passed", 45*time.Minute + 20*time.Second, map[int]time.Duration{7: 46 * time.Minute, 8: 47 * time.Minute, 9: 48 * time.Minute, 10: 49 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, raw := campaignStudy(t, 3)
			store := &MemStore{}
			_, c, tr := campaignCoordinator(t, f, raw, store, 5, t0)
			runAll(t, c, tr, t0)
			at := t0.Add(tc.restart)
			seed := uint64(5)
			e2, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e2.TopUp(3, 2, at); err != nil {
				t.Fatal(err)
			}
			_, c2, tr := campaignCoordinator(t, f, raw, store, 5, at)
			opens, _ := openings(t, c2, tr, at)
			for r, d := range tc.want {
				if !opens[r].Equal(t0.Add(d)) {
					t.Errorf("round %d opened at %v, want %v", r, opens[r].Sub(t0), d)
				}
			}
		})
	}
}
