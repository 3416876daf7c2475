package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// ErrNoModelYet is returned by Latest when the study has released no
// model yet.
var ErrNoModelYet = errors.New("session: the study has released no model yet")

// Latest reads the latest released model, which the coordinator sends
// right after the welcome, and checks it against the round log (its hash
// and round). It sends nothing: the LHA has said hello (without being
// ready) and takes no part in any round. Call it after Join instead of
// Run; it returns the model and its round.
func (s *Session) Latest(ctx context.Context) ([]float64, int, error) {
	s.mu.Lock()
	n := len(s.events)
	s.mu.Unlock()
	if n == 0 {
		return nil, 0, ErrNoModelYet
	}
	for {
		m, err := read(ctx, s.ws, s.limit)
		if err != nil {
			return nil, 0, fmt.Errorf("session: reading the latest model: %w", err)
		}
		switch m := m.(type) {
		case *protocol.RoundResult:
			if _, err := s.event(m.Event, true); err != nil {
				return nil, 0, err
			}
			if got := protocol.HashHex(m.Weights); got != m.Event.ModelSHA256 {
				return nil, 0, fmt.Errorf("%w: round %d's model hashes to %s, the log says %s", ErrModelChanged, m.Event.Round, got, m.Event.ModelSHA256)
			}
			s.mu.Lock()
			s.global = m.Weights
			s.mu.Unlock()
			return append([]float64(nil), m.Weights...), m.Event.Round, nil
		case *protocol.Finished:
			s.mu.Lock()
			s.finished = m
			s.mu.Unlock()
		case *protocol.Error:
			return nil, 0, m
		}
	}
}

// NextCampaign returns the next campaign of a continuing study to start
// after now and when (ok false without campaigns, before the schedule
// started, or once the last campaign has started).
func (s *Session) NextCampaign(now time.Time) (k int, at time.Time, ok bool) {
	sch := s.Schedule()
	if s.study.CampaignCount() <= 1 || sch == nil || sch.Start == nil {
		return 0, time.Time{}, false
	}
	return s.study.NextCampaign(*sch.Start, now)
}

// refresh returns the training windows for round, and keeps them in
// *data: at the first round of a campaign after the first, those of
// Options.Refresh's data (the old ones when there is no Refresh, or it
// fails, or the new file gives no window).
func (s *Session) refresh(round int, data **TrainingSet) *TrainingSet {
	k, i := s.study.CampaignOf(round)
	if s.opt.Refresh == nil || s.study.CampaignCount() <= 1 || k == 1 || i != 1 {
		return *data
	}
	d, err := s.opt.Refresh(k)
	if err != nil || d == nil {
		return *data
	}
	set, err := s.prepare(d)
	if err != nil || set.Total() == 0 {
		return *data
	}
	*data = set
	return set
}
