package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/ui"
)

// TestAdminUpcoming: /api/admin/status says, beside the admin status,
// how many LHAs the start quorum needs and, between rounds of a
// continuing study, which round opens next and when (the campaign's
// start), in the names the dashboard reads (ui.AdminUpcoming). The
// public status says neither.
func TestAdminUpcoming(t *testing.T) {
	every := 2 * time.Second
	f := start(t, study.File{StartQuorum: 2,
		Settings: protocol.Settings{Name: "upcoming", Epsilon: 10, Rounds: 4, Campaigns: 2, Every: study.Duration(every), ExpectedClients: 3, Hidden: []int{4},
			LocalEpochs: 1, RoundLength: study.Duration(400 * time.Millisecond), RoundSlack: study.Duration(100 * time.Millisecond)}}, lhaNames(3), nil)
	upcoming := func() (AdminStatus, ui.AdminUpcoming) {
		t.Helper()
		_, b := get(t, f.http.URL+"/api/admin/status", f.secrets.Admin)
		var a AdminStatus
		var up ui.AdminUpcoming
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &up); err != nil {
			t.Fatal(err)
		}
		return a, up
	}
	if a, up := upcoming(); a.State != protocol.StateWaiting || up.StartQuorum != 2 || up.NextRound != 0 {
		t.Fatalf("before the start: state %s, quorum %d, next round %d; want waiting, 2, none", a.State, up.StartQuorum, up.NextRound)
	}
	_, pub := get(t, f.http.URL+"/api/status", "")
	var m map[string]any
	if err := json.Unmarshal(pub, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"start_quorum", "next_round", "resume_by", "pending_round"} {
		if _, ok := m[k]; ok {
			t.Errorf("the public status has %q", k)
		}
	}
	for i := range 2 {
		expect[*protocol.Welcome](readyRaw(t, f, f.secrets.LHAs[i]))
	}
	// Campaign 1 (rounds 1 and 2) runs for 0.8 s; then round 3 opens at
	// t₀ + every.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		a, up := upcoming()
		if a.Round == 2 && a.OpenRound == nil && up.PendingRound == 0 {
			t0 := f.srv.PublicStatus().Schedule.Start
			if up.NextRound != 3 || up.NextRoundOpens == nil || t0 == nil || !up.NextRoundOpens.Equal(t0.Add(every)) {
				t.Fatalf("between campaigns: next round %d at %v, want 3 at t₀ + %v (t₀ %v)", up.NextRound, up.NextRoundOpens, every, t0)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("campaign 1 did not end in 10 s")
}
