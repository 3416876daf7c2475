package ui

import (
	"strings"
	"testing"
	"time"
)

// scheduledSession is a fakeSession that knows the public timetable.
type scheduledSession struct {
	fakeSession
	opens, trainBy time.Time
	ok             bool
}

func (s *scheduledSession) NextRound(time.Time) (time.Time, time.Time, bool) {
	return s.opens, s.trainBy, s.ok
}

// The running page says when the next round opens and by when training
// must be sent, from the session's public schedule; before the schedule
// starts it says rounds start once enough authorities joined; a session
// without a schedule, or a page not running, says nothing; a finished
// study no longer speaks of training in a round.
func TestScheduleWords(t *testing.T) {
	opens := time.Date(2026, 11, 24, 15, 2, 10, 0, time.Local)
	for _, tc := range []struct {
		name    string
		phase   Phase
		session Session
		want    string
	}{
		{"running", PhaseRunning, &scheduledSession{opens: opens, trainBy: opens.Add(18 * time.Second), ok: true},
			"the next opens at 15:02:10; if this computer is picked, its training must be sent by 15:02:28."},
		{"not started", PhaseRunning, &scheduledSession{}, "Round 1 starts when enough authorities have chosen their file and pressed Join."},
		{"no schedule", PhaseRunning, &fakeSession{}, "Round 1 starts when enough authorities have chosen their file and pressed Join."},
		{"finished", PhaseFinished, &scheduledSession{opens: opens, ok: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &JoinPage{S: &JoinState{Phase: tc.phase, session: tc.session}}
			got := c.scheduleWords()
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	c := &JoinPage{S: &JoinState{Phase: PhaseFinished, Steps: 30, Step: 30, TrainRound: 13}}
	if got := c.trainWords(); strings.Contains(got, "Local training in round") || !strings.Contains(got, "ended") {
		t.Errorf("finished study: %q", got)
	}
}

// readSized reads exactly what the reader holds, whether the announced
// size is right, too small or too large.
func TestReadSized(t *testing.T) {
	for _, size := range []int{0, 3, 11, 12, 40} {
		got, err := readSized(strings.NewReader("hello, file"), size)
		if err != nil || string(got) != "hello, file" {
			t.Errorf("size %d: %q, %v", size, got, err)
		}
	}
}
