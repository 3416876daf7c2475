package session

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

func TestNextRound(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	s := &Session{}
	if _, _, ok := s.NextRound(t0); ok {
		t.Error("NextRound without a schedule")
	}
	s.schedule = &protocol.Schedule{RoundLength: protocol.Duration(time.Minute), RoundSlack: protocol.Duration(6 * time.Second)}
	if _, _, ok := s.NextRound(t0); ok {
		t.Error("NextRound before the schedule started")
	}
	s.schedule.Start = &t0
	cases := []struct {
		now, opens time.Time
	}{
		{t0.Add(-time.Hour), t0},
		{t0, t0},
		{t0.Add(time.Millisecond), t0.Add(time.Minute)},
		{t0.Add(90 * time.Second), t0.Add(2 * time.Minute)},
		{t0.Add(2 * time.Minute), t0.Add(2 * time.Minute)},
	}
	for _, c := range cases {
		opens, by, ok := s.NextRound(c.now)
		if !ok || !opens.Equal(c.opens) || !by.Equal(c.opens.Add(54*time.Second)) {
			t.Errorf("NextRound(%v) = %v, %v, %v; want %v, %v", c.now, opens, by, ok, c.opens, c.opens.Add(54*time.Second))
		}
	}
}

// TestNextRoundAnnounced: the coordinator's announced opening (a
// round_result's schedule, or the status after a restart) comes before
// the planned timetable while it lies ahead; once it has passed, the
// timetable answers again.
func TestNextRoundAnnounced(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	every := time.Hour
	s := &Session{study: protocol.Study{Settings: protocol.Settings{Rounds: 4, Campaigns: 2, Every: protocol.Duration(every)}}}
	announced := t0.Add(5 * time.Minute) // round 2, delayed by a restart, in campaign 1's window
	s.schedule = &protocol.Schedule{Start: &t0, RoundLength: protocol.Duration(time.Minute), RoundSlack: protocol.Duration(6 * time.Second),
		Round: 2, Opens: &announced}
	for _, c := range []struct {
		now, opens time.Time
	}{
		{t0.Add(3 * time.Minute), announced},     // the timetable would say campaign 2's start
		{announced, announced},                   // at the moment itself
		{t0.Add(6 * time.Minute), t0.Add(every)}, // passed: the timetable again
		{t0.Add(every + 30*time.Second), t0.Add(every + time.Minute)},
	} {
		opens, by, ok := s.NextRound(c.now)
		if !ok || !opens.Equal(c.opens) || !by.Equal(c.opens.Add(54*time.Second)) {
			t.Errorf("NextRound(+%v) = +%v, +%v, %v; want +%v", c.now.Sub(t0), opens.Sub(t0), by.Sub(t0), ok, c.opens.Sub(t0))
		}
	}
}
