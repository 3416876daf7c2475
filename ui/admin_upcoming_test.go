package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// The dashboard's status line says what the coordinator waits for: how
// many LHAs the start quorum needs, a restart's wait, when the next round
// or campaign opens, and a round recorded but not yet sent. Before, it
// said "Waiting for enough LHAs" (how many?) and, between rounds and
// campaigns, only "Running.".
func TestAdminUpcomingWords(t *testing.T) {
	now := time.Date(2026, 11, 28, 4, 14, 34, 0, time.Local)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	continuing := protocol.Status{State: protocol.StateRunning, Round: 3, Rounds: 9, Campaigns: 3, SampleRate: 1, Clients: 5, ExpectedClients: 5}
	cases := []struct {
		name    string
		status  protocol.Status
		ready   int
		up      string // the admin status's JSON
		want    []string
		wantNot []string
	}{
		{name: "waiting for the quorum", status: protocol.Status{State: protocol.StateWaiting, Rounds: 9, Clients: 5}, ready: 3,
			up:   `{"start_quorum":4}`,
			want: []string{"Waiting for 4 of the 5 enrolled LHAs (the study's start quorum) to be ready before round 1: 3 ready, 3 online."}},
		{name: "a coordinator without it", status: protocol.Status{State: protocol.StateWaiting, Rounds: 9, Clients: 5}, ready: 3,
			up:   `{}`,
			want: []string{"Waiting for enough LHAs to be ready before round 1: 3 ready, 3 online."}},
		{name: "between campaigns", status: continuing, ready: 4,
			up:      `{"start_quorum":4,"next_round":4,"next_round_opens":"` + at(98*time.Second).Format(time.RFC3339) + `"}`,
			want:    []string{"Running. Campaign 1 of 3 is done. Campaign 2 starts at 04:16:12 with round 4."},
			wantNot: []string{"Running. Each"}},
		{name: "within a campaign", status: protocol.Status{State: protocol.StateRunning, Round: 4, Rounds: 9, Campaigns: 3}, ready: 4,
			up:   `{"start_quorum":4,"next_round":5,"next_round_opens":"` + at(20*time.Second).Format(time.RFC3339) + `"}`,
			want: []string{"Round 5 (round 2 of 3 in campaign 2 of 3) opens at 04:14:54."}},
		{name: "one campaign, another day", status: protocol.Status{State: protocol.StateRunning, Round: 1, Rounds: 5}, ready: 4,
			up:   `{"start_quorum":4,"next_round":2,"next_round_opens":"` + at(24*time.Hour).Format(time.RFC3339) + `"}`,
			want: []string{"Round 2 opens at Sunday 29 November 04:14."}},
		{name: "restarted, waiting for the LHAs", status: continuing, ready: 1,
			up: `{"start_quorum":4,"resume_by":"` + at(20*time.Second).Format(time.RFC3339) + `","pending_round":4}`,
			want: []string{"The coordinator has restarted and waits until 4 LHAs are ready again (1 ready, 1 online now), at the latest until 04:14:54",
				"Round 4 is recorded in the ledger (its ε counts in the table below) and is sent to the LHAs when the rounds go on."}},
		{name: "restarted, round recorded before it", status: continuing, ready: 4,
			up: `{"start_quorum":4,"pending_round":4,"pending_release":"` + at(20*time.Second).Format(time.RFC3339) +
				`","next_round":5,"next_round_opens":"` + at(3*time.Minute).Format(time.RFC3339) + `"}`,
			want: []string{"Round 5 (round 2 of 3 in campaign 2 of 3) opens at 04:17:34.",
				"Round 4 is recorded in the ledger (its ε counts in the table below) and is sent to the LHAs at 04:14:54."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var up AdminUpcoming
			if err := json.Unmarshal([]byte(tc.up), &up); err != nil {
				t.Fatal(err)
			}
			st := &AdminStatus{Status: tc.status, Enrolled: 5, Online: tc.ready, Ready: tc.ready}
			c := &AdminPage{S: &AdminState{Status: st, Upcoming: up, Updated: now}}
			got := c.stateWords()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("status line\n%s\nlacks\n%s", got, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("status line\n%s\nstill says %q", got, w)
				}
			}
		})
	}
}

// A round recorded in the ledger and not yet sent (a coordinator killed
// between the two) is marked in the round table, whose ε column counts
// it, while the tiles count only the rounds sent.
func TestAdminPendingRoundLabel(t *testing.T) {
	var led LedgerExport
	if err := json.Unmarshal([]byte(`{"rounds":[{"round":3,"epsilon":1.1},{"round":4,"epsilon":1.28}]}`), &led); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		released int
		pending  int
		want     map[int]string
	}{
		{"round 4 recorded, not sent", 3, 4, map[int]string{3: "3", 4: "4 (recorded, not yet sent)"}},
		{"round 4 sent", 4, 0, map[int]string{3: "3", 4: "4"}},
	} {
		st := &AdminStatus{Status: protocol.Status{Round: tc.released}}
		c := &AdminPage{S: &AdminState{Status: st, Upcoming: AdminUpcoming{PendingRound: tc.pending}}}
		for _, r := range roundRows(st, &led) {
			if got := c.roundLabel(r); got != tc.want[r.Round] {
				t.Errorf("%s: round %d labelled %q, want %q", tc.name, r.Round, got, tc.want[r.Round])
			}
		}
	}
}
