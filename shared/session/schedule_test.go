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
