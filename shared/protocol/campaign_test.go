package protocol

import (
	"testing"
	"time"
)

func TestCampaignSchedule(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	L, every := time.Minute, time.Hour
	st := Study{Settings: Settings{Rounds: 6, Campaigns: 3, Every: Duration(every)}}
	for j, want := range []time.Duration{0, L, every, every + L, 2 * every, 2*every + L} {
		if got := st.SlotStart(t0, L, int64(j)).Sub(t0); got != want {
			t.Errorf("slot %d at %v, want %v", j, got, want)
		}
		if k, i := st.CampaignOf(j + 1); k != j/2+1 || i != j%2+1 {
			t.Errorf("round %d: campaign %d, place %d", j+1, k, i)
		}
	}
	for _, tc := range []struct {
		now  time.Duration
		slot int64
	}{{0, 0}, {time.Second, 1}, {L, 1}, {L + time.Second, 2}, {30 * time.Minute, 2}, {every, 2}, {every + 2*L, 4}} {
		if got := st.NextSlotAt(t0, L, t0.Add(tc.now)); got != tc.slot {
			t.Errorf("next slot at +%v: %d, want %d", tc.now, got, tc.slot)
		}
	}
	if k, at, ok := st.NextCampaign(t0, t0.Add(2*L)); !ok || k != 2 || !at.Equal(t0.Add(every)) {
		t.Errorf("next campaign %d at %v (%v)", k, at, ok)
	}
	if _, _, ok := st.NextCampaign(t0, t0.Add(2*every)); ok {
		t.Error("a next campaign after the last started")
	}
	// One campaign: slots every L, as before campaigns.
	one := Study{Settings: Settings{Rounds: 6}}
	if got := one.SlotStart(t0, L, 4); !got.Equal(t0.Add(4 * L)) {
		t.Errorf("one campaign: slot 4 at %v", got.Sub(t0))
	}
	if got := one.NextSlotAt(t0, L, t0.Add(90*time.Second)); got != 2 {
		t.Errorf("one campaign: next slot %d", got)
	}
}

// TestOpeningAt: when a round opens if it cannot open before now. On
// time, every round opens at its planned slot (SlotStart); a delayed
// round takes the next free slot of its own campaign's window, so the
// later campaigns keep their starts; a round whose window is over takes
// the next window's first free slot; no round opens before its
// campaign's start; a slot must end inside its window.
func TestOpeningAt(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	L := time.Minute
	// 3 campaigns of 2 rounds every 10 minutes and a half: 10 slots fit
	// in each window, the 11th would end after the next campaign's start.
	st := Study{Settings: Settings{Rounds: 6, Campaigns: 3, Every: Duration(10*time.Minute + 30*time.Second)}}
	every := time.Duration(st.Every)
	for r := 1; r <= 6; r++ {
		planned := st.SlotStart(t0, L, int64(r-1))
		if got := st.OpeningAt(t0, L, r, planned); !got.Equal(planned) {
			t.Errorf("round %d on time: opens at %v, want its slot %v", r, got.Sub(t0), planned.Sub(t0))
		}
	}
	for _, tc := range []struct {
		name  string
		round int
		now   time.Duration
		want  time.Duration
	}{
		{"round 2 delayed inside campaign 1", 2, 3*L + 20*time.Second, 4 * L},
		{"round 2 at a slot boundary", 2, 4 * L, 4 * L},
		{"round 2 after the last slot that fits: the next window", 2, 9*L + time.Second, every},
		{"round 2 exactly at the last slot that fits", 2, 9 * L, 9 * L},
		{"round 2 after its window", 2, every + 3*L + time.Second, every + 4*L},
		{"round 3 not before campaign 2's start", 3, 4 * L, every},
		{"round 3 delayed inside campaign 2", 3, every + 90*time.Second, every + 2*L},
		{"round 5 long after its window", 5, 5*every + 10*time.Second, 5*every + L},
		{"round 1 before t0", 1, -time.Hour, 0},
	} {
		if got := st.OpeningAt(t0, L, tc.round, t0.Add(tc.now)); !got.Equal(t0.Add(tc.want)) {
			t.Errorf("%s: opens at %v, want %v", tc.name, got.Sub(t0), tc.want)
		}
	}
	// One campaign: the first slot t₀ + j·L at or after now, as before
	// campaigns, whatever the round.
	one := Study{Settings: Settings{Rounds: 6}}
	for _, tc := range []struct{ now, want time.Duration }{{-time.Minute, 0}, {0, 0}, {time.Second, L}, {L, L}, {90 * time.Second, 2 * L}} {
		if got := one.OpeningAt(t0, L, 4, t0.Add(tc.now)); !got.Equal(t0.Add(tc.want)) {
			t.Errorf("one campaign at +%v: opens at %v, want %v", tc.now, got.Sub(t0), tc.want)
		}
	}
}
