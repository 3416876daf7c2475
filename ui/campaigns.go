package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// A continuing study's words: its campaigns, the lifetime budget and when
// the next campaign starts (protocol.Study's public schedule).

// campaignsWords describes the schedule on the study card ("" for a
// study of one campaign).
func (c *JoinPage) campaignsWords() string {
	st := c.S.Welcome.Study
	if st.CampaignCount() <= 1 {
		return ""
	}
	return fmt.Sprintf("A continuing study: %d training campaigns of %d rounds, one every %s, on a public timetable fixed when the study was created. "+
		"ε is the lifetime budget of all of them together: the noise is set so that all planned campaigns use exactly that, and nothing trains past it. "+
		"Between campaigns you can forecast each week with the latest model at no privacy cost; you may miss a campaign and come back for the next.",
		st.CampaignCount(), st.CampaignRounds(), durationWords(time.Duration(st.Every)))
}

// lifetimeWords gives the lifetime ε after each finished campaign ("" for
// a study of one campaign or before the first campaign ended).
func (c *JoinPage) lifetimeWords() string {
	st := c.currentStudy()
	if st.CampaignCount() <= 1 {
		return ""
	}
	raised := topUpWords(c.S.Welcome.Study, st, c.S.EpsilonLimit())
	var parts []string
	for _, r := range c.S.Rounds {
		if k, i := st.CampaignOf(r.Round); i == st.CampaignRounds() {
			parts = append(parts, fmt.Sprintf("after campaign %d, ε = %s", k, FormatEpsilon(r.Epsilon)))
		}
	}
	if len(parts) == 0 {
		return raised
	}
	return strings.TrimSpace(fmt.Sprintf("Lifetime budget spent: %s, of ε = %s planned for all %d campaigns. %s",
		strings.Join(parts, "; "), FormatEpsilon(st.Epsilon), st.CampaignCount(), raised))
}

// currentStudy is the study as the session holds it now: the welcome's,
// with any top-up announced since this page joined.
func (c *JoinPage) currentStudy() protocol.Study {
	if sc, ok := c.S.session.(interface{ Study() protocol.Study }); ok && sc.Study().Params > 0 {
		return sc.Study()
	}
	return c.S.Welcome.Study
}

// topUpWords says that the lifetime budget was raised since joined was
// shown (st holds the top-ups), and what this computer's limit does about
// it ("" without a new top-up).
func topUpWords(joined, st protocol.Study, limit float64) string {
	if len(st.TopUps) <= len(joined.TopUps) {
		return ""
	}
	var parts []string
	for _, t := range st.TopUps[len(joined.TopUps):] {
		parts = append(parts, fmt.Sprintf("on %s from ε = %s to ε = %s, adding %s",
			t.At.Local().Format("2 January 2006"), FormatEpsilon(t.FromEpsilon), FormatEpsilon(t.Epsilon), Plural(t.Campaigns, "campaign")))
	}
	words := fmt.Sprintf("The coordinator raised the study's lifetime budget after you joined: %s. "+
		"The noise of the added rounds is set so that all rounds together use exactly the new budget. ", strings.Join(parts, "; "))
	if limit > 0 && limit < st.Epsilon {
		return words + fmt.Sprintf("Your own limit stays ε = %s: this computer sits out any round that would take it past that. "+
			"To agree to the new budget, open your join link again.", FormatEpsilon(limit))
	}
	return words + fmt.Sprintf("Your own limit, ε = %s, allows it.", FormatEpsilon(limit))
}

// nextCampaignWords says when the next campaign starts while the study
// waits between campaigns ("" otherwise).
func (c *JoinPage) nextCampaignWords() string {
	now := time.Now()
	st := c.currentStudy()
	if st.CampaignCount() <= 1 || c.S.Round == 0 || c.S.Round >= st.Rounds {
		return ""
	}
	if _, i := st.CampaignOf(c.S.Round); i != st.CampaignRounds() {
		return ""
	}
	sc, ok := c.S.session.(interface {
		NextCampaign(time.Time) (int, time.Time, bool)
	})
	if !ok {
		return ""
	}
	k, at, ok := sc.NextCampaign(now)
	if done, _ := st.CampaignOf(c.S.Round); !ok || k != done+1 {
		// Campaign done+1 has started: its first round is under way but
		// not yet released (c.S.Round is still done's last).
		return ""
	}
	return fmt.Sprintf("Campaign %d of %d ended. Campaign %d starts on %s. To train it on that week's data, reload this page when it starts "+
		"and choose that week's file (this page cannot read a file again by itself). If you leave this page open as it is, campaign %d trains on the file chosen %s; "+
		"if you close it, open your link again to take part. "+
		"Meanwhile, forecast this week with the latest model below: nothing is sent, and this browser keeps the forecasts you make so that the model is judged on them later.",
		k-1, st.CampaignCount(), k, at.Local().Format("Monday 2 January at 15:04:05"), k, c.fileChosenWords())
}

// durationWords says a duration in plain words: days, hours or minutes.
func durationWords(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return Plural(int(d/(24*time.Hour)), "day")
	case d >= time.Hour && d%time.Hour == 0:
		return Plural(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return Plural(int(d/time.Minute), "minute")
	}
	return d.String()
}

// fileChosenWords says which file the page trains on ("earlier" when it
// does not know).
func (c *JoinPage) fileChosenWords() string {
	if c.S.FileName != "" {
		return "earlier (" + c.S.FileName + ")"
	}
	return "earlier"
}
