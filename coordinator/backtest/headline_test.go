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

// TestUnscoredNoteWords: a forecast left unscored because its area's
// counts stop inside the target week is said so; the note said "its area
// has no counts for the whole target week", which reads as a week with no
// counts at all.
func TestUnscoredNoteWords(t *testing.T) {
	s := Summary{LHAs: 30, UnscoredForecasts: 1}
	if n := s.UnscoredNote(); !strings.Contains(n, "its area's counts end before its target week does") {
		t.Errorf("%q", n)
	}
	s = Summary{LHAs: 30, UnscoredOrigins: []string{"2021-06-28"}, UnscoredForecasts: 32}
	if n := s.UnscoredNote(); !strings.Contains(n, "the origin 2021-06-28") || !strings.Contains(n, "2 forecasts at the scored origins are not scored either: their areas' counts end before their target weeks do") {
		t.Errorf("%q", n)
	}
}

// TestUncalibratableBudget: a budget too small for any noise says what
// to change, in words ("1 campaign", not "1 campaigns").
func TestUncalibratableBudget(t *testing.T) {
	d, states := fixture(t, 4)
	o := baseOptions(d, states, 0.001)
	o.To = o.From
	_, err := Run(o)
	if err == nil || !strings.Contains(err.Error(), "for 1 campaign (5 rounds in all) within ε = 0.001") || !strings.Contains(err.Error(), "raise --epsilon") {
		t.Errorf("%v", err)
	}
}
