package ui

import (
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/session"
)

// TestLateTrainingSaysStandIn: when the local training of a picked round
// has not finished by the moment the answer leaves, the session sends a
// stand-in of zeros on time; the page says so, in the sent list and in
// the training line, instead of "sent when this computer was not picked"
// and the previous round's training time.
func TestLateTrainingSaysStandIn(t *testing.T) {
	for _, typ := range []string{"dummy", "report"} {
		s := &JoinState{Phase: PhaseRunning}
		c := &JoinPage{S: s}
		// Round 2 trained in time; round 3 was at step 12 of 30 when its
		// answer left.
		s.Progress(2, 0, 30)
		s.Progress(2, 30, 30)
		s.RecordSent(typ, 2088, 2)
		s.RoundDone(RoundReport{Round: 2})
		s.Progress(3, 0, 30)
		s.Progress(3, 12, 30)
		s.RecordSent(typ, 2088, 3)
		s.SetStatus(string(session.StateWaiting))
		if len(s.Late) != 1 || s.Late[0] != 3 {
			t.Errorf("%s: late rounds %v, want [3]", typ, s.Late)
		}
		last := s.Sent[len(s.Sent)-1].What
		if !strings.Contains(last, "round 3") || !strings.Contains(last, "had not finished") || strings.Contains(last, "not picked") {
			t.Errorf("%s: sent list says %q", typ, last)
		}
		if strings.Contains(s.Sent[len(s.Sent)-2].What, "had not finished") {
			t.Errorf("%s: round 2, trained in time, is said to be late: %q", typ, s.Sent[len(s.Sent)-2].What)
		}
		if got := c.trainWords(); !strings.Contains(got, "round 3: not finished in time (step 12 of 30") || !strings.Contains(got, "stand-in") {
			t.Errorf("%s: training line %q", typ, got)
		}
		// Picked again in round 4: the line follows the new training.
		s.RoundDone(RoundReport{Round: 3})
		s.Progress(4, 0, 30)
		s.Progress(4, 5, 30)
		if got := c.trainWords(); !strings.Contains(got, "round 4: step 5 of 30") {
			t.Errorf("%s: training line in round 4 %q", typ, got)
		}
	}
	// A round sat out for the ε limit, and a round not picked, are not late.
	s := &JoinState{Phase: PhaseRunning}
	s.Progress(1, 0, 30)
	s.Progress(1, 30, 30)
	s.RecordSent("update", 2088, 1)
	s.RecordSent("dummy", 2088, 2)
	s.Skipped(session.Skip{Round: 3})
	s.RecordSent("dummy", 2088, 3)
	if len(s.Late) != 0 || !strings.Contains(s.Sent[1].What, "not picked") {
		t.Errorf("late %v; round 2 not picked: %q", s.Late, s.Sent[1].What)
	}
}
