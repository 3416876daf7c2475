package ui

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// Taking part: Join, the session's events, the rounds.

// RoundReport is one released round as the LHA sees it.
type RoundReport struct {
	Round int
	// Epsilon is the coordinator's ε after the round; LocalEpsilon is the
	// same recomputed in this browser from the public parameters and the
	// round log.
	Epsilon, LocalEpsilon float64
	// PublicEpsilon is ε against the public in a study with a helper (0
	// without one).
	PublicEpsilon float64
	// TookPart: this LHA was sampled and its update was sent.
	TookPart bool
}

// Join starts taking part in the training (call under the render lock,
// from the button's event handler).
func (s *JoinState) Join(ctx context.Context) {
	if !s.CanJoin() {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.Phase = PhaseRunning
	s.Status = StatusWaiting
	s.JoinedAt = time.Now()
	s.PresentOnly = s.prepared == nil
	sess, d := s.session, s.Data
	if l, ok := sess.(interface {
		SetMaxEpsilon(float64)
		SetMaxWindows(int)
	}); ok {
		l.SetMaxEpsilon(s.EpsilonLimit())
		l.SetMaxWindows(s.maxWindows())
	}
	s.setPublic(sess)
	s.watchExampleBudget(sess)
	go func() {
		err := sess.Run(ctx, d, s.Observer())
		model := sess.Model()
		s.lock()
		if err != nil {
			s.Phase = PhaseFailed
			s.RunProblem = RunProblem(err)
			s.unlock()
			return
		}
		s.Phase = PhaseFinished
		s.Status = StatusFinished
		s.Forecasting = true
		s.unlock()
		s.forecast(model)
		s.WatchForNext(ctx)
	}()
}

// WatchForNext polls the public status every few seconds, once the study
// has ended, until a study that has not ended is served at the same link;
// then NextStudy is set. It returns at once without Fetch, and runs at
// most once per page.
func (s *JoinState) WatchForNext(ctx context.Context) {
	s.lock()
	if s.Fetch == nil || s.watching {
		s.unlock()
		return
	}
	s.watching = true
	s.unlock()
	u, err := url.Parse(s.Link)
	if err != nil {
		return
	}
	status := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/api/status"}).String()
	every := s.watchEvery
	if every == 0 {
		every = 3 * time.Second
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		code, b, err := s.Fetch(ctx, status, "")
		var st protocol.Status
		if err != nil || code != 200 || json.Unmarshal(b, &st) != nil {
			continue
		}
		if st.State != protocol.StateFinished {
			s.lock()
			s.NextStudy = true
			s.unlock()
			return
		}
	}
}

// Observer returns the client callbacks that update this state.
func (s *JoinState) Observer() session.Observer {
	return session.Observer{
		State:    func(st session.State) { s.SetStatus(string(st)) },
		Progress: s.Progress,
		Sent:     func(o session.Outgoing) { s.RecordSent(o.Type, int64(o.Bytes), o.Round) },
		Result: func(r session.Result) {
			s.RoundDone(RoundReport{Round: r.Round, Epsilon: r.Epsilon, LocalEpsilon: r.LocalEpsilon, PublicEpsilon: r.PublicEpsilon, TookPart: r.Sampled})
			s.refreshExampleBudget()
		},
		Accepted: func(round int) { s.UpdateOutcome(round, OutcomeCounted, "") },
		Error: func(e *protocol.Error) {
			if e.Round > 0 {
				s.UpdateOutcome(e.Round, OutcomeRefused, RefusalWords(e))
			}
		},
		Skipped: s.Skipped,
	}
}

// UpdateOutcome records the coordinator's answer to the update sent for
// round.
func (s *JoinState) UpdateOutcome(round int, outcome, reason string) {
	s.lock()
	defer s.unlock()
	for i := len(s.Sent) - 1; i >= 0; i-- {
		if e := &s.Sent[i]; e.Type == "update" && e.Round == round {
			e.Outcome, e.Reason = outcome, reason
			s.saveSent()
			return
		}
	}
}

// Skipped records a round sat out because of the LHA's own ε limit.
func (s *JoinState) Skipped(k session.Skip) {
	s.lock()
	s.Skips = append(s.Skips, k)
	s.Status = StatusWaiting
	s.unlock()
}

// SetStatus records the session's state (waiting, sampled, training, sent).
func (s *JoinState) SetStatus(status string) {
	s.lock()
	s.Status = status
	if status == StatusSampled || status == StatusTraining {
		s.Step = 0
	}
	s.unlock()
}

// Progress records local training progress for round, and calls Yield.
// It asks for a render at the first and last step and in between at most
// every 100 ms, or four times as long as the last render took when that
// is longer: rebuilding the page after every step would cost as much as
// the training itself, and on a slow computer a large page (hundreds of
// areas, the forecast charts) takes far longer to render than a step
// takes to train. A render every 100 ms then made a round of 0.3 s of
// training last 4 to 12 s; this way rendering takes at most about a fifth
// of the round.
func (s *JoinState) Progress(round, step, steps int) {
	now := time.Now()
	update := func() {
		s.TrainRound, s.Step, s.Steps = round, step, steps
		s.Status = StatusTraining
		if step == 0 {
			s.trainStart = now
		} else if step == steps && !s.trainStart.IsZero() {
			s.TrainTime = now.Sub(s.trainStart)
		}
	}
	if step == 0 || step == steps || now.Sub(s.lastRender) >= max(100*time.Millisecond, 4*s.renderCost) {
		s.publish(update)
		s.lastRender = time.Now()
		s.renderCost = s.lastRender.Sub(now)
		return
	}
	s.lock()
	update()
	if s.Env != nil {
		s.Env.UnlockOnly()
	}
	if time.Since(s.lastYield) > 30*time.Millisecond {
		s.yieldNow()
	}
}

// RoundDone records a released round.
func (s *JoinState) RoundDone(r RoundReport) {
	s.lock()
	defer s.unlock()
	s.Round = r.Round
	s.Epsilon, s.LocalEpsilon, s.PublicEpsilon = r.Epsilon, r.LocalEpsilon, r.PublicEpsilon
	s.EpsilonChecked = true
	s.EpsilonMatch = session.EpsilonMatches(r.Epsilon, r.LocalEpsilon)
	s.Rounds = append(s.Rounds, r)
	if s.Status != StatusFinished {
		s.Status = StatusWaiting
	}
}
