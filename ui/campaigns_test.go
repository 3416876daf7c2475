package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

func TestCampaignWords(t *testing.T) {
	st := protocol.Study{Epsilon: 2, Rounds: 6, Campaigns: 3, EveryMillis: (7 * 24 * time.Hour).Milliseconds()}
	c := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{Study: st}}}
	if got := c.campaignsWords(); !strings.Contains(got, "3 training campaigns of 2 rounds, one every 7 days") || !strings.Contains(got, "lifetime budget") {
		t.Errorf("campaigns: %q", got)
	}
	if got := c.lifetimeWords(); got != "" {
		t.Errorf("before any campaign ended: %q", got)
	}
	c.S.Rounds = []RoundReport{{Round: 1, Epsilon: 0.5}, {Round: 2, Epsilon: 0.9}, {Round: 3, Epsilon: 1.2}, {Round: 4, Epsilon: 1.5}}
	if got, want := c.lifetimeWords(), "Lifetime budget spent: after campaign 1, ε = 0.9; after campaign 2, ε = 1.5, of ε = 2 planned for all 3 campaigns."; got != want {
		t.Errorf("lifetime:\n got %q\nwant %q", got, want)
	}
	one := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{Study: protocol.Study{Epsilon: 2, Rounds: 6}}}}
	if one.campaignsWords() != "" || one.lifetimeWords() != "" || one.nextCampaignWords() != "" {
		t.Error("campaign words for a study of one campaign")
	}
	for d, want := range map[time.Duration]string{time.Hour: "1 hour", 90 * time.Second: "1m30s", 2 * time.Minute: "2 minutes"} {
		if got := durationWords(d); got != want {
			t.Errorf("durationWords(%v) = %q, want %q", d, got, want)
		}
	}
}
