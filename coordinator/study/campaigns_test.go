package study

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// campaignStudy is 3 campaigns of 2 rounds, one every 10 slots, with
// every LHA sampled (q = 1) so that who gets a round_start is who is
// online.
func campaignStudy(t *testing.T, n int) (*File, []byte) {
	t.Helper()
	f, _, err := Create(CreateOptions{Names: names(n), Template: File{
		Settings: protocol.Settings{Name: "continuing", Epsilon: 2, Rounds: 6, Campaigns: 3, Every: Duration(10 * time.Minute), ExpectedClients: n,
			History: 4, Horizon: 2, Hidden: []int{8, 4}, LocalEpochs: 5, LearningRate: 0.01, RoundLength: Duration(time.Minute),
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return f, raw
}

// campaignCoordinator opens f on store with the seed and starts a
// Coordinator at at over a fresh fake transport of 3 LHAs: the first
// start on an empty store, a restart on one that holds rounds.
func campaignCoordinator(t *testing.T, f *File, raw []byte, store *MemStore, seed uint64, at time.Time) (*Engine, *Coordinator, *fakeTransport) {
	t.Helper()
	e, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFake(3)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, at)
	if err != nil {
		t.Fatal(err)
	}
	return e, c, tr
}

// openings ticks c from at until the study finishes and returns when each
// round opened (its round_start to LHA 0) and when the end was announced.
func openings(t *testing.T, c *Coordinator, tr *fakeTransport, at time.Time) (opens map[int]time.Time, finished time.Time) {
	t.Helper()
	opens = map[int]time.Time{}
	for range 200 {
		next, err := c.Tick(at)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tr.take(0) {
			switch m := m.(type) {
			case *protocol.RoundStart:
				opens[m.Round] = at
			case *protocol.Finished:
				finished = at
			}
		}
		if next.Finished {
			return opens, finished
		}
		at = next.At
	}
	t.Fatal("the study did not finish")
	return nil, time.Time{}
}

// TestCampaignSchedule: the rounds of campaign k open at t₀ + (k−1)·every
// in consecutive slots; the last round of a campaign is released at its
// slot's end (not at the next campaign's start); nothing is sent between
// campaigns; the noise makes all 6 planned rounds compose to the lifetime
// ε exactly, and the study ends with the last campaign. LHA 2 misses
// campaign 2 (offline) and is back for campaign 3: it gets its round
// starts again and the lifetime ε counts every round.
func TestCampaignSchedule(t *testing.T) {
	f, raw := campaignStudy(t, 3)
	seed := uint64(3)
	store := &MemStore{}
	e, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFake(3)
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, t0)
	if err != nil {
		t.Fatal(err)
	}
	L, every := time.Minute, 10*time.Minute
	opens, releases, nextOpens := map[int]time.Time{}, map[int]time.Time{}, map[int]time.Time{}
	starts := map[int][]int{} // LHA → rounds it was asked to train
	at := t0
	var finishedAt time.Time
	for range 200 {
		// LHA 2 is offline during campaign 2.
		tr.online[2] = at.Before(t0.Add(every)) || !at.Before(t0.Add(2*every))
		next, err := c.Tick(at)
		if err != nil {
			t.Fatal(err)
		}
		for lha := range 3 {
			for _, m := range tr.take(lha) {
				switch m := m.(type) {
				case *protocol.RoundStart:
					starts[lha] = append(starts[lha], m.Round)
					opens[m.Round] = at
				case *protocol.RoundResult:
					releases[m.Event.Round] = at
					if m.Schedule != nil && m.Schedule.Opens != nil {
						nextOpens[m.Event.Round] = *m.Schedule.Opens
					}
				case *protocol.Finished:
					finishedAt = at
				}
			}
		}
		if next.Finished {
			break
		}
		at = next.At
	}
	for r := 1; r <= 6; r++ {
		k, i := e.Study.CampaignOf(r)
		wantOpen := t0.Add(time.Duration(k-1)*every + time.Duration(i-1)*L)
		if !opens[r].Equal(wantOpen) || !releases[r].Equal(wantOpen.Add(L)) {
			t.Errorf("round %d (campaign %d): opened %v released %v, want %v and %v", r, k,
				opens[r].Sub(t0), releases[r].Sub(t0), wantOpen.Sub(t0), wantOpen.Add(L).Sub(t0))
		}
	}
	// The last round of campaign 1 says when campaign 2 opens.
	if !nextOpens[2].Equal(t0.Add(every)) || !nextOpens[1].Equal(t0.Add(L)) {
		t.Errorf("after round 2 the next round opens at %v, after round 1 at %v", nextOpens[2].Sub(t0), nextOpens[1].Sub(t0))
	}
	if _, ok := nextOpens[6]; ok {
		t.Error("the last round's result announces a next round")
	}
	if want := t0.Add(2*every + 2*L); !finishedAt.Equal(want) {
		t.Errorf("finished at %v, want at the last release %v", finishedAt.Sub(t0), want.Sub(t0))
	}
	if got := starts[2]; len(got) != 4 || got[1] != 2 || got[2] != 5 {
		t.Errorf("LHA 2 (offline for campaign 2) was asked to train in rounds %v, want 1, 2, 5, 6", got)
	}
	if len(starts[0]) != 6 {
		t.Errorf("LHA 0 trained in rounds %v", starts[0])
	}
	// Lifetime ε: every round of every campaign, composing to the budget.
	_, eps := c.Progress()
	want, err := privacy.EpsilonFor(f.AccountantKind(), []privacy.Event{{SampleRate: 1, NoiseMultiplier: e.Study.NoiseMultiplier, Rounds: 6}}, f.Delta)
	if err != nil || math.Abs(eps-want) > 1e-9 || eps > f.Epsilon || f.Epsilon-eps > 0.01 {
		t.Errorf("lifetime ε %v after 3 campaigns, recomputed %v (%v), budget %v", eps, want, err, f.Epsilon)
	}
	if store.S.Rounds() != 6 || c.Status().State != protocol.StateFinished {
		t.Errorf("%d rounds stored, state %s", store.S.Rounds(), c.Status().State)
	}
}

func TestCampaignFileChecks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		campaigns int
		rounds    int
		every     time.Duration
		want      string
	}{
		{"not a multiple", 4, 6, time.Hour, "not a multiple of campaigns 4"},
		{"overlap", 3, 6, time.Minute, "campaigns would overlap"},
		{"every without campaigns", 0, 6, time.Hour, "every is set"},
		{"negative", -1, 6, 0, "campaigns is -1"},
	} {
		_, _, err := Create(CreateOptions{Names: names(3), Template: File{Settings: protocol.Settings{Name: "x", Epsilon: 2, Rounds: tc.rounds, Campaigns: tc.campaigns,
			Every: Duration(tc.every), ExpectedClients: 3, RoundLength: Duration(time.Minute)}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A crash between the commit and the release of a campaign's last round,
// and a restart in the gap: the round is released at a slot end of its
// own campaign at or after the restart, and the next campaign still
// opens at its start.
func TestCampaignReReleaseInTheGap(t *testing.T) {
	f, raw := campaignStudy(t, 3)
	store := &MemStore{}
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	_, c, _ := campaignCoordinator(t, f, raw, store, 3, t0)
	runTo(t, c, t0, 2) // round 2, campaign 1's last, committed; the crash
	if store.S.Released == nil || *store.S.Released != 1 {
		t.Fatalf("before the crash: released %v", store.S.Released)
	}
	restart := t0.Add(5*time.Minute + 20*time.Second)
	_, c2, tr := campaignCoordinator(t, f, raw, store, 3, restart)
	next, err := c2.Tick(restart)
	if err != nil {
		t.Fatal(err)
	}
	wantRelease := t0.Add(6 * time.Minute) // round 2 opened at 1 min; slot ends every minute after
	if !next.At.Equal(wantRelease) {
		t.Fatalf("after the restart the next tick is at %v, want the re-release at %v", next.At.Sub(t0), wantRelease.Sub(t0))
	}
	if next, err = c2.Tick(wantRelease); err != nil || !next.At.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("after the re-release: next %v (%v), want campaign 2's start", next.At.Sub(t0), err)
	}
	var got *protocol.RoundResult
	for _, m := range tr.take(0) {
		if r, ok := m.(*protocol.RoundResult); ok {
			got = r
		}
	}
	if got == nil || got.Event.Round != 2 || got.Schedule == nil || !got.Schedule.Opens.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("re-release %+v", got)
	}
}

// TestCampaignRestartCatchesUp: a crash in the middle of a campaign, with
// a round open, and a restart before the campaign's window is over: the
// abandoned round runs at the next slot of its own campaign's window,
// and the later campaigns open at their planned starts, so the study ends
// when planned. (Before, the rest of the campaign waited for the next
// campaign's slots and every later campaign moved by one.)
func TestCampaignRestartCatchesUp(t *testing.T) {
	f, raw := campaignStudy(t, 3)
	store := &MemStore{}
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	L, every := time.Minute, 10*time.Minute
	e, c, _ := campaignCoordinator(t, f, raw, store, 3, t0)
	at := runTo(t, c, t0, 1) // round 1 committed
	for at.Before(t0.Add(L + 20*time.Second)) {
		next, err := c.Tick(at)
		if err != nil {
			t.Fatal(err)
		}
		at = next.At
	}
	if r := e.Current(); r == nil || r.ID != 2 || store.S.Rounds() != 1 {
		t.Fatalf("before the crash: round %v open, %d stored", r, store.S.Rounds())
	}
	c.Stop() // the crash: round 2 is abandoned

	restart := t0.Add(3*L + 30*time.Second)
	_, c2, tr := campaignCoordinator(t, f, raw, store, 3, restart)
	// The public status says when the delayed round opens, so a page that
	// reconnects now is not told the planned timetable's next campaign.
	if _, err := c2.Tick(restart); err != nil {
		t.Fatal(err)
	}
	if sch := c2.Status().Schedule; sch == nil || sch.Round != 2 || sch.Opens == nil || !sch.Opens.Equal(t0.Add(4*L)) ||
		sch.TrainBy == nil || !sch.TrainBy.Equal(t0.Add(5*L-time.Duration(f.RoundSlack))) {
		t.Errorf("status after the restart: schedule %+v, want round 2 opening at +4m", sch)
	}
	opens, finishedAt := openings(t, c2, tr, restart)
	want := map[int]time.Duration{2: 4 * L, 3: every, 4: every + L, 5: 2 * every, 6: 2*every + L}
	for r, d := range want {
		if !opens[r].Equal(t0.Add(d)) {
			t.Errorf("round %d opened at %v, want %v", r, opens[r].Sub(t0), d)
		}
	}
	if end := t0.Add(2*every + 2*L); !finishedAt.Equal(end) {
		t.Errorf("finished at %v, want the planned end %v", finishedAt.Sub(t0), end.Sub(t0))
	}
	if store.S.Rounds() != 6 {
		t.Errorf("%d rounds stored, want 6", store.S.Rounds())
	}
}
