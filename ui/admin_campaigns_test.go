package ui

import (
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
)

func TestAdminCampaignWords(t *testing.T) {
	c := &AdminPage{S: &AdminState{Status: &AdminStatus{}}}
	c.S.Status.Status = protocol.Status{Round: 4, Rounds: 6, Campaigns: 3, Delta: 1e-5}
	if got := c.roundWords(); got != "4 of 6 (2 of 3 campaigns done)" {
		t.Errorf("rounds tile %q", got)
	}
	if got := c.epsilonLabel(); !strings.HasPrefix(got, "lifetime privacy budget ε spent, all 3 campaigns together") {
		t.Errorf("ε label %q", got)
	}
	c.S.Status.Status = protocol.Status{Round: 4, Rounds: 6}
	if got := c.roundWords(); got != "4 of 6" {
		t.Errorf("one campaign: %q", got)
	}
}
