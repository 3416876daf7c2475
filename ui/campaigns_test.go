package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

func TestCampaignWords(t *testing.T) {
	st := protocol.Study{Settings: protocol.Settings{Epsilon: 2, Rounds: 6, Campaigns: 3, Every: protocol.Duration((7 * 24 * time.Hour))}}
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
	one := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Epsilon: 2, Rounds: 6}}}}}
	if one.campaignsWords() != "" || one.lifetimeWords() != "" || one.nextCampaignWords() != "" {
		t.Error("campaign words for a study of one campaign")
	}
	for d, want := range map[time.Duration]string{time.Hour: "1 hour", 90 * time.Second: "1m30s", 2 * time.Minute: "2 minutes"} {
		if got := durationWords(d); got != want {
			t.Errorf("durationWords(%v) = %q, want %q", d, got, want)
		}
	}
}

// topUpSession is a session stub that holds a topped-up study.
type topUpSession struct {
	Session
	st protocol.Study
}

func (s topUpSession) Study() protocol.Study { return s.st }

// After a top-up announced on reconnect, the page says the budget was
// raised, and that the LHA's own limit (the budget it joined under) keeps
// it out of the added rounds.
func TestTopUpWords(t *testing.T) {
	st := protocol.Study{Params: 4, Settings: protocol.Settings{Epsilon: 2, Rounds: 6, Campaigns: 3, Every: protocol.Duration(time.Hour)}}
	up := st
	up.Epsilon, up.Rounds, up.Campaigns = 3, 10, 5
	up.TopUps = []protocol.TopUp{{Number: 1, FromEpsilon: 2, Epsilon: 3, Campaigns: 2, Rounds: 4, At: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}}
	c := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{Study: st}, session: topUpSession{st: up}}}
	c.S.Rounds = []RoundReport{{Round: 1, Epsilon: 0.5}, {Round: 2, Epsilon: 0.9}}
	got := c.lifetimeWords()
	for _, want := range []string{"of ε = 3 planned for all 5 campaigns", "raised the study's lifetime budget after you joined", "from ε = 2 to ε = 3, adding 2 campaigns",
		"Your own limit stays ε = 2", "open your join link again"} {
		if !strings.Contains(got, want) {
			t.Errorf("lifetime words lack %q:\n%s", want, got)
		}
	}
	c.S.MaxEpsilon = 0
	if w := topUpWords(st, up, 3); !strings.Contains(w, "Your own limit, ε = 3, allows it.") {
		t.Errorf("limit at the new budget: %q", w)
	}
	if w := topUpWords(up, up, 2); w != "" {
		t.Errorf("no new top-up: %q", w)
	}
}

func TestPublicInputsWords(t *testing.T) {
	st := protocol.Study{PublicInputs: []protocol.PublicInput{
		{Name: protocol.PublicTotals, Source: "RKI, 2026-11-27", SHA256: strings.Repeat("ab", 32), Bytes: 2048},
		{Name: protocol.PublicHolidays, Source: "holidays built into fedcast"}}}
	c := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{Study: st}}}
	got := c.publicInputsWords()
	for _, want := range []string{"public data", "never taken from anyone's file", "National and state case totals: RKI, 2026-11-27",
		"SHA-256 " + strings.Repeat("ab", 32), "Public holidays: holidays built into fedcast."} {
		if !strings.Contains(got, want) {
			t.Errorf("public inputs words lack %q:\n%s", want, got)
		}
	}
	none := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{}}}
	if none.publicInputsWords() != "" {
		t.Error("words for a study without public inputs")
	}
}

// betweenCampaigns is a session stub whose next campaign is k (2 when
// zero), starting at at.
type betweenCampaigns struct {
	Session
	k  int
	at time.Time
}

func (b betweenCampaigns) NextCampaign(time.Time) (int, time.Time, bool) {
	return max(b.k, 2), b.at, true
}

// Between campaigns the page says when the next starts and asks to reload
// the page and choose that week's file then.
func TestNextCampaignAsksForThisWeeksFile(t *testing.T) {
	st := protocol.Study{Settings: protocol.Settings{Epsilon: 2, Rounds: 6, Campaigns: 3, Every: protocol.Duration(time.Hour)}}
	c := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{Study: st}, Round: 2, FileName: "week47.csv",
		session: betweenCampaigns{at: time.Now().Add(time.Hour)}}}
	got := c.nextCampaignWords()
	for _, want := range []string{"Campaign 1 of 3 ended. Campaign 2 starts on", "reload this page when it starts and choose that week's file",
		"If you leave this page open as it is, campaign 2 trains on the file chosen earlier (week47.csv)", "keeps the forecasts you make"} {
		if !strings.Contains(got, want) {
			t.Errorf("words lack %q:\n%s", want, got)
		}
	}
	// One instruction, not "keep this page open" and "reload this page" side by side.
	if strings.Contains(got, "keep this page open") {
		t.Errorf("words ask both to keep the page open and to reload it:\n%s", got)
	}
	c.S.Round = 1 // within campaign 1
	if w := c.nextCampaignWords(); w != "" {
		t.Errorf("within a campaign: %q", w)
	}
	// Campaign 2 has started (the next to start is 3), its first round
	// not yet released: campaign 1's last is still the latest round.
	c.S.Round, c.S.session = 2, betweenCampaigns{k: 3, at: time.Now().Add(time.Hour)}
	if w := c.nextCampaignWords(); w != "" {
		t.Errorf("in campaign 2's first round: %q", w)
	}
}
