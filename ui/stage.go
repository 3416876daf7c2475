package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Stage is where this page stands in the study once it has joined: the one
// source of the status line (the round, the status, the timetable and the
// local training words all read it, so they never speak of two rounds).
type Stage int

const (
	// StageStarting: joined; round 1 has not started (the coordinator
	// waits until enough authorities are ready).
	StageStarting Stage = iota
	// StageWaiting: between rounds, or in a round this authority was not
	// picked for.
	StageWaiting
	// StageTraining: picked for StageRound and training on its data.
	StageTraining
	// StageSent: the changes for StageRound are sent; its result is due.
	StageSent
	// StageReconnecting: the connection was lost; the page redials.
	StageReconnecting
	// StageFinished: the study has ended.
	StageFinished
)

// RunStage returns the page's stage at now and the round it is about: the
// round being trained or awaited (training, sent), the last released
// round (waiting, finished), 0 before round 1.
func (s *JoinState) RunStage(now time.Time) (Stage, int) {
	switch {
	case s.Phase == PhaseFinished || s.Status == StatusFinished:
		return StageFinished, s.Round
	case s.Status == StatusReconnecting:
		return StageReconnecting, s.Round
	case s.Status == StatusTraining || s.Status == StatusSampled:
		return StageTraining, max(s.TrainRound, s.Round+1)
	case s.Status == StatusSent && s.TrainRound > s.Round:
		return StageSent, s.TrainRound
	}
	if _, _, ok := s.NextRound(now); !ok && s.Round == 0 {
		return StageStarting, 0
	}
	return StageWaiting, s.Round
}

// Missed counts the rounds whose window had closed before this page said
// ready (pressed Join), from the public timetable; open is a round that
// was taking changes at that moment (0 if none). Both are 0 before the
// timetable is known.
func (s *JoinState) Missed() (missed, open int) {
	sc, ok := s.session.(interface{ Schedule() *protocol.Schedule })
	if !ok || s.JoinedAt.IsZero() || s.Welcome == nil {
		return 0, 0
	}
	sch := sc.Schedule()
	if sch == nil || sch.Start == nil || sch.RoundLength <= 0 || s.JoinedAt.Before(*sch.Start) {
		return 0, 0
	}
	l := time.Duration(sch.RoundLength)
	take := l - time.Duration(sch.RoundSlack)
	// The slot that holds JoinedAt, or the last one before it: in a
	// continuing study the slots of a campaign follow its start, with a
	// gap until the next campaign (protocol.Study.SlotStart).
	st := s.Welcome.Study
	k := int(st.NextSlotAt(*sch.Start, l, s.JoinedAt)) // slots opened before JoinedAt
	if st.SlotStart(*sch.Start, l, int64(k)).Equal(s.JoinedAt) {
		k++ // JoinedAt is a slot's opening moment: that round is open
	}
	opened := st.SlotStart(*sch.Start, l, int64(k-1))
	missed, open = k-1, 0
	if s.JoinedAt.Before(opened.Add(take)) {
		open = k
	} else {
		missed = k
	}
	// A round this page answered after joining was not missed: after a
	// coordinator restart a delayed round opens later than the timetable
	// says (protocol.Study.OpeningAt), and the timetable alone would call
	// it missed.
	if r0 := s.firstAnswered(); r0 > 0 && missed >= r0 {
		missed, open = r0-1, 0
	}
	T := s.Welcome.Study.Rounds
	if missed >= T {
		return T, 0
	}
	return missed, open
}

// firstAnswered is the first round this page answered (an update, a
// dummy or a report) since it joined, 0 if none is in the sent log.
func (s *JoinState) firstAnswered() int {
	first := 0
	for _, e := range s.Sent {
		if e.Round > 0 && !e.At.Before(s.JoinedAt) && (first == 0 || e.Round < first) {
			first = e.Round
		}
	}
	return first
}

// MissedWords tells, in plain words, which rounds ran before this page
// joined and why that is fine ("" when none did).
func (s *JoinState) MissedWords() string {
	missed, open := s.Missed()
	T := 0
	if s.Welcome != nil {
		T = s.Welcome.Study.Rounds
	}
	var w string
	switch {
	case missed == 0 && open == 0:
		return ""
	case missed >= T:
		return fmt.Sprintf("All %d rounds ran before you joined, so this page trains in none of them. "+
			"If you did not take part earlier (before reloading this page, or from another computer), your data were not used and cost you no privacy. "+
			"Either way, this page gives you the final model's forecast for your areas.", T)
	case missed == 1:
		w = "Round 1 ran before you joined."
	case missed == 2:
		w = "Rounds 1 and 2 ran before you joined."
	case missed > 2:
		w = fmt.Sprintf("Rounds 1 to %d ran before you joined.", missed)
	}
	if missed > 0 {
		w += " That is fine: the shared model you start from has already learnt from them. If you did not take part in them earlier (before reloading this page, or from another computer), " +
			"your data were not used in them and they cost you no privacy (the study's ε below counts every round either way)."
	}
	if open > 0 {
		w += fmt.Sprintf(" Round %d was already under way when you joined: you take part in it if you were picked and there is time left, otherwise from round %d on.", open, open+1)
	} else {
		w += fmt.Sprintf(" You take part from round %d on.", missed+1)
	}
	return strings.TrimSpace(w)
}

// scheduler is implemented by sessions that know the study's public round
// timetable (*session.Session).
type scheduler interface {
	NextRound(now time.Time) (opens, trainBy time.Time, ok bool)
}

// RoundDue returns, for round r under way at now, by when its changes
// must arrive and when its result is released: from the schedule of the
// last release when it announced round r, else from the public timetable
// (the slot holding now). ok is false when neither tells. Unlike
// NextRound's opening, this is right for the last round of a campaign
// too, which the next campaign's start follows only after a gap.
func (s *JoinState) RoundDue(r int, now time.Time) (trainBy, release time.Time, ok bool) {
	sc, is := s.session.(interface{ Schedule() *protocol.Schedule })
	if !is {
		return time.Time{}, time.Time{}, false
	}
	sch := sc.Schedule()
	if sch == nil || sch.RoundLength <= 0 {
		return time.Time{}, time.Time{}, false
	}
	if sch.Round == r && sch.TrainBy != nil && sch.Release != nil {
		return *sch.TrainBy, *sch.Release, true
	}
	if sch.Start == nil || now.Before(*sch.Start) {
		return time.Time{}, time.Time{}, false
	}
	var st protocol.Study
	if s.Welcome != nil {
		st = s.Welcome.Study
	}
	l := time.Duration(sch.RoundLength)
	j := st.NextSlotAt(*sch.Start, l, now)
	if o := st.SlotStart(*sch.Start, l, j); !o.Equal(now) {
		j-- // the last slot opened before now
	}
	opened := st.SlotStart(*sch.Start, l, j)
	if !now.Before(opened.Add(l)) {
		return time.Time{}, time.Time{}, false // between campaigns: no round under way
	}
	return opened.Add(l - time.Duration(sch.RoundSlack)), opened.Add(l), true
}

// NextRound returns when the next round opens after now and by when its
// update must arrive, from the public schedule; ok is false when the
// session does not know it (yet).
func (s *JoinState) NextRound(now time.Time) (opens, trainBy time.Time, ok bool) {
	if sc, is := s.session.(scheduler); is {
		return sc.NextRound(now)
	}
	return time.Time{}, time.Time{}, false
}
