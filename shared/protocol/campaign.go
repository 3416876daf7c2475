package protocol

import "time"

// A continuing study trains in campaigns that follow a public schedule
// fixed at creation: Campaigns campaigns of Rounds/Campaigns rounds each,
// campaign k (1-based) starting at t₀ + (k−1)·Every, its rounds in
// consecutive slots of length L from there. Its ε is the lifetime budget
// of all campaigns; the noise is calibrated so that all planned rounds
// compose to it exactly. A study without campaigns is one campaign.

// CampaignCount is the number of campaigns (at least 1).
func (st Study) CampaignCount() int { return max(st.Campaigns, 1) }

// CampaignRounds is the number of rounds of one campaign.
func (st Study) CampaignRounds() int {
	return max(st.Rounds/st.CampaignCount(), 1)
}

// CampaignOf returns the campaign (1-based) of round (1-based) and the
// round's place in it (1-based).
func (st Study) CampaignOf(round int) (campaign, within int) {
	t := st.CampaignRounds()
	if round < 1 {
		return 1, 0
	}
	return (round-1)/t + 1, (round-1)%t + 1
}

// SlotStart is when slot j (0-based: the j-th round to open, round j+1)
// opens, for a schedule that started at t0 with slots of length l.
func (st Study) SlotStart(t0 time.Time, l time.Duration, j int64) time.Time {
	if st.CampaignCount() <= 1 || time.Duration(st.Every) <= 0 {
		return t0.Add(time.Duration(j) * l)
	}
	t := int64(st.CampaignRounds())
	return t0.Add(time.Duration(j/t)*time.Duration(st.Every) + time.Duration(j%t)*l)
}

// CampaignStart is when campaign k (1-based) starts.
func (st Study) CampaignStart(t0 time.Time, k int) time.Time {
	return st.SlotStart(t0, 0, int64((k-1)*st.CampaignRounds()))
}

// NextSlotAt returns the first slot j that opens at or after now.
func (st Study) NextSlotAt(t0 time.Time, l time.Duration, now time.Time) int64 {
	if !now.After(t0) {
		return 0
	}
	if st.CampaignCount() <= 1 || time.Duration(st.Every) <= 0 {
		return int64((now.Sub(t0) + l - 1) / l)
	}
	t := int64(st.CampaignRounds())
	k := int64(now.Sub(t0) / time.Duration(st.Every))
	i := int64((now.Sub(t0) - time.Duration(k)*time.Duration(st.Every) + l - 1) / l)
	if i >= t {
		k, i = k+1, 0
	}
	return k*t + i
}

// OpeningAt returns when round (1-based) opens if it cannot open before
// now: the first slot start at or after both now and its campaign's start
// on the campaigns' grid. Each campaign's window, from its start to the
// next one's, holds the slots t₀ + (k−1)·Every + i·L whose end is inside
// it (i·L + L ≤ Every); the campaign's rounds normally take the first of
// them (SlotStart), and a round that could not (a restart or an overrun
// of the slack delayed it) takes the next free one of the same window, so
// a delay never moves later campaigns. When the window is over, the round
// takes the next window's first free slot. Without campaigns it is the
// first slot t₀ + j·L at or after now.
func (st Study) OpeningAt(t0 time.Time, l time.Duration, round int, now time.Time) time.Time {
	every := time.Duration(st.Every)
	if st.CampaignCount() <= 1 || every <= 0 || l <= 0 {
		return st.SlotStart(t0, l, FirstSlotAt(t0, l, now))
	}
	k, _ := st.CampaignOf(round)
	from := st.CampaignStart(t0, k)
	if now.After(from) {
		from = now
	}
	m := from.Sub(t0) / every
	i := (from.Sub(t0) - m*every + l - 1) / l
	if (i+1)*l > every {
		m, i = m+1, 0
	}
	return t0.Add(m*every + i*l)
}

// FirstSlotAt returns the index of the first slot t₀ + j·L (slots back to
// back, no campaigns) that starts at or after now.
func FirstSlotAt(t0 time.Time, l time.Duration, now time.Time) int64 {
	if !now.After(t0) || l <= 0 {
		return 0
	}
	return int64((now.Sub(t0) + l - 1) / l)
}

// NextCampaign returns the first campaign (1-based) that starts after
// now, and when; ok is false when the last one has started.
func (st Study) NextCampaign(t0, now time.Time) (k int, at time.Time, ok bool) {
	for k = 1; k <= st.CampaignCount(); k++ {
		if at = st.CampaignStart(t0, k); at.After(now) {
			return k, at, true
		}
	}
	return 0, time.Time{}, false
}
