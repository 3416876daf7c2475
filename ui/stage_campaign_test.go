package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// campaignStudy is the demo's continuing study: 3 campaigns of 5 rounds
// of 20 s (updates until 18 s), one campaign every 2m40s.
func campaignStudy() (*protocol.Welcome, *protocol.Schedule, time.Time) {
	start := time.Date(2026, 11, 28, 5, 13, 38, 0, time.Local)
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Rounds: 15, Campaigns: 3,
		Every: protocol.Duration(160 * time.Second)}}}
	sch := &protocol.Schedule{Start: &start, RoundLength: protocol.Duration(20 * time.Second), RoundSlack: protocol.Duration(2 * time.Second)}
	return w, sch, start
}

// TestRoundEndsAtCampaignEnd: while the last round of a campaign is
// trained, the page gives that round's own end, not the next campaign's
// start (it said "Round 5 ends at 05:16:18" for a round that ended at
// 05:15:18), and by when the changes must be sent.
func TestRoundEndsAtCampaignEnd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		now      time.Duration // after the start
		round    int
		announce bool // the last release announced this round's times (1 s later than the timetable)
		by, end  time.Duration
	}{
		{"timetable, campaign's last round", 85 * time.Second, 5, false, 98 * time.Second, 100 * time.Second},
		{"timetable, next campaign's first round", 165 * time.Second, 6, false, 178 * time.Second, 180 * time.Second},
		{"announced by the last release", 85 * time.Second, 5, true, 99 * time.Second, 101 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, sch, _ := campaignStudy()
			start := time.Now().Add(-tc.now)
			sch.Start = &start
			if tc.announce {
				by, rel := start.Add(tc.by), start.Add(tc.end)
				sch.Round, sch.TrainBy, sch.Release = tc.round, &by, &rel
			}
			s := &JoinState{Welcome: w, Phase: PhaseRunning, Status: StatusTraining, Round: tc.round - 1, TrainRound: tc.round, Steps: 30, Step: 3,
				session: &campaignSession{timetableSession{sch: sch}, w.Study}}
			clock := func(d time.Duration) string { return start.Add(d).Format("15:04:05") }
			want := fmt.Sprintf("Round %d ends at %s: the changes must be sent by %s.", tc.round, clock(tc.end), clock(tc.by))
			if got := (&JoinPage{S: s}).scheduleWords(); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			s.Status = StatusSent
			want = fmt.Sprintf("Round %d's result comes at %s.", tc.round, clock(tc.end))
			if got := (&JoinPage{S: s}).scheduleWords(); got != want {
				t.Errorf("sent: got %q, want %q", got, want)
			}
		})
	}
}

// campaignSession knows the campaign timetable as *session.Session does.
type campaignSession struct {
	timetableSession
	study protocol.Study
}

func (s *campaignSession) NextRound(now time.Time) (time.Time, time.Time, bool) {
	l := time.Duration(s.sch.RoundLength)
	opens := s.study.SlotStart(*s.sch.Start, l, s.study.NextSlotAt(*s.sch.Start, l, now))
	return opens, opens.Add(l - time.Duration(s.sch.RoundSlack)), true
}

// TestMissedWordsInCampaigns: a page that joins in the second campaign of
// a continuing study missed the first campaign's 5 rounds, not as many
// rounds as slots of 20 s have passed since the start (it said "Rounds 1
// to 8" 170 s in).
func TestMissedWordsInCampaigns(t *testing.T) {
	w, sch, start := campaignStudy()
	for _, tc := range []struct {
		joined time.Duration
		want   string
	}{
		{110 * time.Second, "Rounds 1 to 5 ran before you joined."}, // between campaigns 1 and 2
		{170 * time.Second, "Round 6 was already under way"},        // campaign 2's first round
		{170 * time.Second, "Rounds 1 to 5 ran before you joined."},
		{199 * time.Second, "Rounds 1 to 7 ran before you joined."}, // round 7 opened at 180 s, its window closed at 198 s: missed
		{199 * time.Second, "You take part from round 8 on."},
		{90 * time.Second, "Round 5 was already under way"},
	} {
		s := &JoinState{Welcome: w, session: &campaignSession{timetableSession{sch: sch}, w.Study}, JoinedAt: start.Add(tc.joined)}
		if got := s.MissedWords(); !strings.Contains(got, tc.want) {
			t.Errorf("joined %v after the start: %q lacks %q", tc.joined, got, tc.want)
		}
	}
}

// TestMissedWordsAfterRestart: after a coordinator restart a delayed round
// opens later than the timetable says. A page that joined when the
// timetable had rounds 1 to 5 done, and then answered round 4, missed
// rounds 1 to 3 only; what it sent before joining (an earlier visit)
// does not count.
func TestMissedWordsAfterRestart(t *testing.T) {
	w, sch, start := campaignStudy()
	joined := start.Add(110 * time.Second) // between campaigns 1 and 2 on the timetable
	s := &JoinState{Welcome: w, session: &campaignSession{timetableSession{sch: sch}, w.Study}, JoinedAt: joined}
	if got := s.MissedWords(); !strings.Contains(got, "Rounds 1 to 5 ran before you joined.") {
		t.Fatalf("before any answer: %q", got)
	}
	s.Sent = []SentEntry{
		{At: joined.Add(-time.Minute), Type: "update", Round: 2}, // before this page joined
		{At: joined.Add(5 * time.Second), Type: "dummy", Round: 4},
		{At: joined.Add(25 * time.Second), Type: "dummy", Round: 5},
	}
	got := s.MissedWords()
	for _, want := range []string{"Rounds 1 to 3 ran before you joined.", "You take part from round 4 on."} {
		if !strings.Contains(got, want) {
			t.Errorf("after answering round 4: %q lacks %q", got, want)
		}
	}
}
