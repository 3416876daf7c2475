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
	k := int(s.JoinedAt.Sub(*sch.Start)/l) + 1 // the round whose slot holds JoinedAt
	opened := sch.Start.Add(time.Duration(k-1) * l)
	missed, open = k-1, 0
	if s.JoinedAt.Before(opened.Add(take)) {
		open = k
	} else {
		missed = k
	}
	T := s.Welcome.Study.Rounds
	if missed >= T {
		return T, 0
	}
	return missed, open
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

// NextRound returns when the next round opens after now and by when its
// update must arrive, from the public schedule; ok is false when the
// session does not know it (yet).
func (s *JoinState) NextRound(now time.Time) (opens, trainBy time.Time, ok bool) {
	if sc, is := s.session.(scheduler); is {
		return sc.NextRound(now)
	}
	return time.Time{}, time.Time{}, false
}
