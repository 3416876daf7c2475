package ui

import (
	"fmt"
	"strings"
	"time"
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
		st.CampaignCount(), st.CampaignRounds(), durationWords(st.Every()))
}

// lifetimeWords gives the lifetime ε after each finished campaign ("" for
// a study of one campaign or before the first campaign ended).
func (c *JoinPage) lifetimeWords() string {
	st := c.S.Welcome.Study
	if st.CampaignCount() <= 1 {
		return ""
	}
	var parts []string
	for _, r := range c.S.Rounds {
		if k, i := st.CampaignOf(r.Round); i == st.CampaignRounds() {
			parts = append(parts, fmt.Sprintf("after campaign %d, ε = %s", k, FormatEpsilon(r.Epsilon)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Lifetime budget spent: %s, of ε = %s planned for all %d campaigns.", strings.Join(parts, "; "), FormatEpsilon(st.Epsilon), st.CampaignCount())
}

// nextCampaignWords says when the next campaign starts while the study
// waits between campaigns ("" otherwise).
func (c *JoinPage) nextCampaignWords() string {
	now := time.Now()
	st := c.S.Welcome.Study
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
	if !ok {
		return ""
	}
	return fmt.Sprintf("Campaign %d of %d ended. Campaign %d starts on %s: keep this page open to take part, or open your link again before then. "+
		"Meanwhile, forecast this week with the latest model below: nothing is sent.", k-1, st.CampaignCount(), k, at.Local().Format("Monday 2 January at 15:04:05"))
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
