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
// restart (c.pending): at the first slot start of the schedule at or
// after t that its campaign may use (protocol.Study.OpeningAt), and the
// next round opens at the first slot from then on.
func (c *Coordinator) resumeRelease(t time.Time) {
	round := c.pending.res.Event.Round
	c.releaseAt = c.openingAt(round, t)
	c.next = c.openingAt(round+1, c.releaseAt)
}

// scheduleRelease times the release of round id, just committed at now
// (emu held): at its slot's end, or, when committing overran the slack,
// at the first slot end of its schedule after now; the next round opens
// at the first slot from then on: the next slot of its campaign, the
// next campaign's start, or, when the campaign's window is over, the
// next window's first slot (protocol.Study.OpeningAt).
func (c *Coordinator) scheduleRelease(id int, now time.Time) {
	opened := c.opened
	c.releaseAt = opened.Add(c.length)
	if now.After(c.releaseAt) {
		skipped := int64((now.Sub(opened) + c.length - 1) / c.length)
		c.releaseAt = opened.Add(time.Duration(skipped) * c.length)
		c.log.Warn("committing overran the slack: the release moves to a later slot", "round", id,
			"slots_skipped", skipped-1, "slack", c.slack, "took", now.Sub(c.closeAt).Round(time.Millisecond))
	}
	c.next = c.openingAt(id+1, c.releaseAt)
}

// nextOpening is when the next round opens, as announced with a release at
// tick: at once, or at the next campaign's start.
func (c *Coordinator) nextOpening(tick time.Time) time.Time {
	if next := c.next; next.After(tick) {
		return next
	}
	return tick
}

// announceNext puts the next round's times (c.next) into the public
// status (emu held), so that a page that joins before that round opens
// (after a restart, or between campaigns) is told when it opens instead
// of reading the planned timetable, which a delayed round no longer
// follows. The round_result of a release says the same.
func (c *Coordinator) announceNext() {
	next := c.eng.Rounds() + 1
	if c.eng.Finished() != "" || next > c.lastRound() {
		return
	}
	opens := c.next
	if c.pending != nil && opens.Before(c.releaseAt) {
		opens = c.releaseAt
	}
	by, rel := opens.Add(c.length-c.slack), opens.Add(c.length)
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if s := c.snap.status.Schedule; s != nil {
		x := *s
		x.Round, x.Opens, x.TrainBy, x.Release = next, &opens, &by, &rel
		c.snap.status.Schedule = &x
	}
}

// lastRound is the number of the study's last round: T, or in a cyclic
// study its last turn, T·N.
func (c *Coordinator) lastRound() int {
	if n := c.eng.Turns(); n > 0 {
		return n
	}
	return c.eng.Study.Rounds
}
