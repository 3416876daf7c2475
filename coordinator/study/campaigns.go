package study

import (
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// checkRounds checks the number of rounds and a continuing study's
// schedule (campaigns, every): whole campaigns, each fitting before the
// next starts.
func (f *File) checkRounds() error {
	switch {
	case f.Rounds < 1 || f.Rounds > protocol.MaxRound:
		return configErr("rounds is %d, must be in [1, %d]", f.Rounds, uint32(protocol.MaxRound))
	case f.Campaigns < 0:
		return configErr("campaigns is %d, must be 0 or more", f.Campaigns)
	case f.Campaigns <= 1:
		if f.Every != 0 && f.Campaigns == 0 {
			return configErr("every is set (%v) but campaigns is not: give both, e.g. \"campaigns\": 4, \"every\": \"168h\"", time.Duration(f.Every))
		}
		return nil
	case f.Rounds%f.Campaigns != 0:
		return configErr("rounds is %d, not a multiple of campaigns %d: rounds counts every round of every campaign", f.Rounds, f.Campaigns)
	case f.Strategy == string(fl.Cyclic):
		return configErr("strategy \"cyclic\" cannot run in campaigns")
	}
	per := time.Duration(f.Rounds/f.Campaigns) * time.Duration(f.RoundLength)
	if time.Duration(f.Every) < per {
		return configErr("every is %v, shorter than one campaign (%d rounds of %v = %v): campaigns would overlap",
			time.Duration(f.Every), f.Rounds/f.Campaigns, time.Duration(f.RoundLength), per)
	}
	return nil
}

// CheckFinishedAt records the study's end at t when no further round
// fits (all planned rounds done, or the budget), and reports whether it
// has ended.
func (e *Engine) CheckFinishedAt(t time.Time) bool {
	e.checkFinishedAt(t)
	return e.finished != ""
}

// resumeRelease times the re-release of the round committed before a
// restart (c.pending): the first slot end of its own schedule (its
// opening plus a whole number of round lengths) at or after t, and the
// next round opens at the first slot after that. Without campaigns this
// is the first slot at or after t, as the schedule always had it.
func (c *Coordinator) resumeRelease(t time.Time) {
	opened := c.slot(int64(c.pending.res.Event.Round - 1))
	m := max(int64((t.Sub(opened)+c.length-1)/c.length), 1)
	c.releaseAt = opened.Add(time.Duration(m) * c.length)
	c.j = max(c.j, c.eng.Study.NextSlotAt(c.eng.ScheduleStart(), c.length, c.releaseAt))
}

// scheduleRelease times the release of round id, just committed at now
// (emu held): at its slot's end, or, when committing overran the slack,
// at the first slot end of its schedule after now; the next round opens
// at the first slot from then on (in a continuing study, possibly the
// next campaign's start).
func (c *Coordinator) scheduleRelease(id int, now time.Time) {
	opened := c.slot(c.j)
	c.j++
	c.releaseAt = opened.Add(c.length)
	if now.After(c.releaseAt) {
		skipped := int64((now.Sub(opened) + c.length - 1) / c.length)
		c.releaseAt = opened.Add(time.Duration(skipped) * c.length)
		c.log.Warn("committing overran the slack: the release moves to a later slot", "round", id,
			"slots_skipped", skipped-1, "slack", c.slack, "took", now.Sub(c.closeAt).Round(time.Millisecond))
		c.j = max(c.j, c.eng.Study.NextSlotAt(c.eng.ScheduleStart(), c.length, c.releaseAt))
	}
}

// nextOpening is when the next round opens, as announced with a release at
// tick: at once, or at the next campaign's start.
func (c *Coordinator) nextOpening(tick time.Time) time.Time {
	if next := c.slot(c.j); next.After(tick) {
		return next
	}
	return tick
}
