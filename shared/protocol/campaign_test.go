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
