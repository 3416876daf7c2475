package backtest

import (
	"strings"
	"testing"
)

// TestHeadlineCounts: the headline counts in words, "1 campaign of 5
// rounds", not "1 campaigns of 5 rounds" (a replay of four origins).
func TestHeadlineCounts(t *testing.T) {
	for _, c := range []struct {
		lhas, campaigns, rounds int
		want                    string
	}{
		{400, 10, 5, "400 LHAs, 10 campaigns of 5 rounds,"},
		{400, 1, 5, "400 LHAs, 1 campaign of 5 rounds,"},
		{1, 2, 1, "1 LHA, 2 campaigns of 1 round,"},
	} {
		s := Summary{Design: "weekly", LHAs: c.lhas, Campaigns: c.campaigns, RoundsPerCampaign: c.rounds, EpsilonBudget: 2, EpsilonSpent: 2, Delta: 1e-5}
		if h := s.Headline(); !strings.Contains(h, c.want) {
			t.Errorf("headline %q: want %q", h, c.want)
		}
	}
}
