package study

import (
	"time"
)

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
