package study

import "time"

// Upcoming is what the round loop waits for, for the admin dashboard:
// the start quorum, a restarted study's wait for its LHAs, and when the
// next round opens. It is admin-only, like the open round: the public
// status carries the schedule's start and slots, and a restart's wait
// depends on who reconnects.
type Upcoming struct {
	// StartQuorum is the number of LHAs that must be ready before round 1
	// opens, and again after a restart (File.Quorum: the study file's
	// start_quorum, or all N).
	StartQuorum int `json:"start_quorum"`
	// ResumeBy is set while a restarted study waits for StartQuorum LHAs
	// to be ready again: the end of the restart grace, when the rounds
	// resume whoever is back.
	ResumeBy *time.Time `json:"resume_by,omitempty"`
	// NextRound is the round that opens next, at NextRoundOpens (both
	// zero while no opening is planned: waiting for a quorum, a round
	// open, or the study over). It may be the first round of a later
	// campaign, or a round moved to a later slot by a restart.
	NextRound      int        `json:"next_round,omitempty"`
	NextRoundOpens *time.Time `json:"next_round_opens,omitempty"`
	// PendingRound is a round committed to the ledger but not yet sent
	// to the LHAs (0: none): committed before a restart, or between its
	// window's close and its slot's end. It is released at PendingRelease
	// (nil while the restarted study waits for its LHAs).
	PendingRound   int        `json:"pending_round,omitempty"`
	PendingRelease *time.Time `json:"pending_release,omitempty"`
}

// Upcoming returns what the round loop waits for now (see Upcoming).
func (c *Coordinator) Upcoming() Upcoming {
	c.emu.Lock()
	defer c.emu.Unlock()
	u := Upcoming{StartQuorum: c.quorum}
	if c.pending != nil && c.pending.res != nil {
		u.PendingRound = c.pending.res.Event.Round
	}
	switch c.phase {
	case driveResume:
		by := c.deadline
		u.ResumeBy = &by
	case driveSlot:
		if c.pending != nil {
			at := c.releaseAt
			u.PendingRelease = &at
		}
		if c.eng.Finished() == "" && c.eng.Rounds() < c.eng.Study.Rounds {
			opens := c.next
			if c.pending != nil && opens.Before(c.releaseAt) {
				opens = c.releaseAt
			}
			u.NextRound, u.NextRoundOpens = c.eng.Rounds()+1, &opens
		}
	}
	return u
}
