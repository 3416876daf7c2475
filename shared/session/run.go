package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// run is the round loop of Run and RunWindows: it reads the coordinator's
// frames, trains and answers in the rounds this LHA is picked for, and
// reconnects after a dropped connection.
func (s *Session) run(ctx context.Context, data *TrainingSet, obs Observer) error {
	cfg, err := s.study.FLConfig()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	cfg.Accountant = s.accountant.Kind()
	tr := nn.NewTrainer(s.mlp)
	if s.study.Weekly != nil {
		s.study.Weekly.SetLoss(tr) // the weekly design's local loss (model.Weekly.Loss, .Quantiles)
	}
	limit := s.agreedLimit()
	set := func(st State) {
		if obs.State != nil {
			obs.State(st)
		}
	}
	flush := func() {
		s.mu.Lock()
		p := s.pending
		s.pending = nil
		s.mu.Unlock()
		for _, o := range p {
			if obs.Sent != nil {
				obs.Sent(o)
			}
		}
	}
	if err := s.sendReady(ctx); err != nil {
		return err
	}
	flush()
	if s.state == protocol.StateFinished {
		set(StateFinished)
	} else {
		set(StateWaiting)
	}
	backoff := 100 * time.Millisecond
	for {
		m, err := read(ctx, s.ws, s.limit)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var pe *protocol.Error
			if errors.As(err, &pe) || errors.Is(err, protocol.ErrMalformed) || errors.Is(err, protocol.ErrNotFinite) || errors.Is(err, protocol.ErrVersion) {
				s.ws.Close(ClosePolicyViolation, "bad frame")
				return err
			}
			if s.Finished() != nil {
				return nil
			}
			if s.opt.ReconnectMax < 0 {
				return fmt.Errorf("session: connection lost: %w", err)
			}
			set(StateReconnecting)
			if err := s.reconnect(ctx, &backoff); err != nil {
				return err
			}
			s.mu.Lock()
			s.unacked, s.acked = nil, nil // their answers went with the old connection
			s.mu.Unlock()
			flush()
			set(StateWaiting)
			continue
		}
		backoff = 100 * time.Millisecond
		switch m := m.(type) {
		case *protocol.RoundResult:
			if err := s.roundResult(m, obs, set); err != nil {
				return err
			}
		case *protocol.RoundStart:
			if err := s.answer(ctx, tr, cfg, m, s.refresh(m.Round, &data), limit, obs, set); err != nil {
				return err
			}
		case *protocol.Accepted:
			s.accepted(m, obs)
		case *protocol.Finished:
			s.mu.Lock()
			s.finished = m
			s.mu.Unlock()
			set(StateFinished)
			s.ws.Close(CloseNormal, "")
			return nil
		case *protocol.Error:
			if m.Code.Fatal() {
				s.ws.Close(CloseAbort, "")
				return m
			}
			s.refused(m, obs)
		default:
			return fmt.Errorf("%w: unexpected %s from the coordinator", protocol.ErrMalformed, m.Type())
		}
	}
}

// roundResult takes a released round: it checks the round's privacy event
// (closing the connection if the check fails), keeps the model and the
// noise schedule, and tells the observer which of its updates counted.
func (s *Session) roundResult(m *protocol.RoundResult, obs Observer, set func(State)) error {
	known, err := s.event(m.Event, true)
	if err != nil {
		s.ws.Close(ClosePolicyViolation, "check failed")
		return err
	}
	s.mu.Lock()
	s.global = m.Weights
	if m.Schedule != nil {
		s.schedule = m.Schedule
	}
	sampled := s.sampled[m.Event.Round]
	counted := s.acked
	s.acked = nil
	s.mu.Unlock()
	// An update acknowledged before its round's release and not refused
	// before it (the coordinator sends refusals just ahead of the release)
	// was counted.
	for _, f := range counted {
		if obs.Accepted != nil && !f.dummy {
			obs.Accepted(f.round)
		}
	}
	if obs.Result != nil {
		obs.Result(Result{Round: m.Event.Round, Sampled: sampled, Epsilon: m.Event.Epsilon,
			LocalEpsilon: s.LocalEpsilon(), PublicEpsilon: s.PublicEpsilon(), ModelSHA256: m.Event.ModelSHA256, Resent: known})
	}
	if !known {
		set(StateWaiting)
	}
	return nil
}

// accepted takes the coordinator's acknowledgement of a frame.
func (s *Session) accepted(m *protocol.Accepted, obs Observer) {
	if m.Round > 0 { // a coordinator that says which round
		if obs.Accepted != nil {
			obs.Accepted(m.Round)
		}
		return
	}
	// The coordinator acknowledges every frame at once, in order: this is
	// the oldest frame not yet acknowledged.
	s.mu.Lock()
	if len(s.unacked) > 0 {
		s.acked = append(s.acked, s.unacked[0])
		s.unacked = s.unacked[1:]
	}
	s.mu.Unlock()
}

// refused takes a non-fatal coordinator error. A refusal resolves the
// update it names; a stale_round for round 0 (frames that arrived while no
// round took updates) resolves every acknowledged one.
func (s *Session) refused(m *protocol.Error, obs Observer) {
	s.mu.Lock()
	var refused []sentFrame
	switch {
	case m.Round > 0:
		s.acked = slices.DeleteFunc(s.acked, func(f sentFrame) bool { return f.round == m.Round })
	case m.Code == protocol.CodeStaleRound:
		refused, s.acked = s.acked, nil
	}
	if m.Code == protocol.CodeRoundAbandoned {
		// Nothing of the round was released: it opens again, and this
		// LHA answers it again.
		delete(s.answered, m.Round)
		delete(s.sampled, m.Round)
	}
	s.mu.Unlock()
	if obs.Error != nil {
		for _, f := range refused {
			if !f.dummy {
				obs.Error(&protocol.Error{Code: m.Code, Round: f.round, Message: m.Message})
			}
		}
		obs.Error(m)
	}
}

func (s *Session) reconnect(ctx context.Context, backoff *time.Duration) error {
	s.ws.Close(CloseAbort, "")
	maxWait := s.opt.ReconnectMax
	if maxWait == 0 {
		maxWait = 5 * time.Second
	}
	for {
		t := time.NewTimer(*backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		*backoff = min(2**backoff, maxWait)
		err := s.connect(ctx)
		if err == nil {
			return nil
		}
		var pe *protocol.Error
		if errors.As(err, &pe) || errors.Is(err, ErrModelChanged) || errors.Is(err, ErrBudgetMismatch) || errors.Is(err, ErrBadStudy) {
			return err
		}
	}
}
