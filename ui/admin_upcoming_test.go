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

// After a top-up the tiles said "noise multiplier c" with the added
// rounds' c alone (3.912, where rounds 1–9 had 6.447) and nothing of the
// raise; a finished continuing study did not say that a top-up can
// continue it.
func TestAdminTopUpWords(t *testing.T) {
	var led LedgerExport
	if err := json.Unmarshal([]byte(`{"noise_multiplier":6.4473311223630265,"study":{"rounds":9,"clip_norm":0.5},
		"top_ups":[{"number":1,"from_epsilon":2,"epsilon":3,"campaigns":1,"rounds":3,"noise_multiplier":3.9115214347839355,"at":"2026-11-28T04:23:23Z"}]}`), &led); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 4, 23, 23, 0, time.UTC).Local().Format("2 January 15:04")
	st := &AdminStatus{Status: protocol.Status{State: protocol.StateRunning, Round: 9, Rounds: 12, Campaigns: 4, EpsilonBudget: 3, NoiseMultiplier: 3.9115214347839355, Delta: 1e-5}}
	c := &AdminPage{S: &AdminState{Status: st, Ledger: &led}}
	for _, tc := range []struct{ name, got, want string }{
		{"ε label", c.epsilonLabel(), "lifetime privacy budget ε spent, all 4 campaigns together (δ = 1 in 100,000); raised from ε = 2 to 3 by top-up 1 on " + at},
		{"noise label", c.noiseLabel(), "noise multiplier c: the noise added to each round's average, as a multiple of the most one LHA can change it (σ = c·S/m); " +
			"the smallest of the study's rounds, which after a top-up differ: rounds 1–9: c = 6.447; rounds 10–12 (top-up 1): c = 3.912"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, tc.got, tc.want)
		}
	}
	// A second top-up: the status's c is the smallest (3.912, top-up 1's),
	// not the last top-up's.
	led.TopUps = append(led.TopUps, LedgerTopUp{Number: 2, FromEpsilon: 3, Epsilon: 3.5, Rounds: 3, NoiseMultiplier: 5.531726837158203, At: led.TopUps[0].At.Add(time.Hour)})
	if got := c.noiseLabel(); !strings.HasSuffix(got, "rounds 1–9: c = 6.447; rounds 10–12 (top-up 1): c = 3.912; rounds 13–15 (top-up 2): c = 5.532") {
		t.Errorf("two top-ups, noise label %q", got)
	}
	if got := c.epsilonLabel(); !strings.Contains(got, "raised from ε = 2 to 3.5 by 2 top-ups, the last on ") {
		t.Errorf("two top-ups, ε label %q", got)
	}
	c.S.Ledger = &LedgerExport{}
	if got := c.noiseLabel(); strings.Contains(got, "top-up") || strings.Contains(c.epsilonLabel(), "raised") {
		t.Errorf("without a top-up: %q, %q", got, c.epsilonLabel())
	}
	st.State, st.FinishReason = protocol.StateFinished, "rounds"
	if got := c.stateWords(); !strings.Contains(got, `Finished: all planned rounds done. To train more campaigns, a top-up can raise the lifetime budget ("fedcast study topup"`) {
		t.Errorf("finished continuing study: %q", got)
	}
	st.Campaigns = 0
	if got := c.stateWords(); strings.Contains(got, "top-up") {
		t.Errorf("finished study of one campaign: %q", got)
	}
}

// A round in which no update was counted (every LHA sat out: after a
// top-up past the limits they joined with) showed a bare 0 beside rounds
// that trained; it says the round's model change is noise only.
func TestAdminNoUpdateRound(t *testing.T) {
	var c AdminPage
	for _, tc := range []struct {
		row  AdminRoundRow
		want string
	}{
		{AdminRoundRow{Round: 13, Sampled: 5, Online: 5, Received: 0, HasParticipation: true}, "0 (none: this round's model change is noise only)"},
		{AdminRoundRow{Round: 12, Sampled: 5, Online: 5, Received: 5, HasParticipation: true}, "5"},
		{AdminRoundRow{Round: 3, Sampled: 0, Received: 0, HasParticipation: true}, "0"},
		{AdminRoundRow{Round: 2}, "0"}, // no participation record (before a restart's ledger had it)
	} {
		if got := c.receivedWords(tc.row); got != tc.want {
			t.Errorf("round %d: %q, want %q", tc.row.Round, got, tc.want)
		}
	}
}
