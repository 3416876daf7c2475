package session

import (
	"context"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// sentFrame is an answer sent on the connection, awaiting its
// acknowledgement or its round's release.
type sentFrame struct {
	round int
	dummy bool
}

// trained is the outcome of one round's local training.
type trained struct {
	d   []float64
	err error // over the LHA's own example-level budget (local DP-SGD)
}

// answer answers round m's round_start. Every LHA answers every round it
// gets a round_start for, once: with its clipped update when it was
// picked and trained in time, otherwise with a dummy of the same size.
// Either leaves protocol.AnswerAfter(m.TimeLeft) after the round_start
// arrived, so neither the frame nor its moment tells an observer of the
// network whether this LHA was picked. Training that has not finished by
// then is not waited for: the dummy leaves on time.
func (s *Session) answer(ctx context.Context, tr *nn.Trainer, cfg fl.Config, m *protocol.RoundStart, data *TrainingSet, limit float64, obs Observer, set func(State)) error {
	at := time.Now().Add(protocol.AnswerAfter(m.TimeLeft))
	s.mu.Lock()
	n := len(s.events)
	var prev string
	if n > 0 {
		prev = s.events[n-1].ModelSHA256
	}
	done := s.answered[m.Round]
	s.mu.Unlock()
	if m.Round != n+1 || done {
		// A stale round_start (the coordinator will answer stale_round
		// anyway), or a round answered on an earlier connection.
		return nil
	}
	if s.isCyclic() && m.Picked {
		if _, mine := s.turn(m.Round); !mine {
			// Not this LHA's turn by the public timetable: training would
			// be a hand-off its accountant does not count.
			return fmt.Errorf("%w: round_start of turn %d, which the public timetable gives to another LHA", ErrBadStudy, m.Round)
		}
	}
	if prev != "" && protocol.HashHex(m.Weights) != prev {
		return fmt.Errorf("%w: round %d starts from a model that was not released", ErrModelChanged, m.Round)
	}
	if len(m.Weights) != s.study.Params {
		return fmt.Errorf("%w: round_start with %d weights, the model has %d", ErrBadStudy, len(m.Weights), s.study.Params)
	}
	var result <-chan trained
	var progress <-chan [2]int
	var resume chan<- struct{}
	quit := make(chan struct{})
	defer close(quit)
	// Present only (no usable windows, see Run): nothing to train, and
	// the dummy below leaves as it would for any LHA not picked.
	present := data != nil && data.Total() == 0
	if !present && s.picked(m) && s.fits(m.Round, limit, obs) {
		x, y, err := data.Round()
		if err != nil {
			return err
		}
		set(StateSampled)
		set(StateTraining)
		if obs.Progress != nil {
			obs.Progress(m.Round, 0, cfg.LocalEpochs)
		}
		result, progress, resume = s.startTraining(tr, m.Weights, x, y, cfg, quit)
	}
	d, real := s.await(ctx, at, m.Round, result, progress, resume, obs)
	if err := ctx.Err(); err != nil {
		return err
	}
	if d == nil {
		d = make([]float64, len(m.Weights))
	}
	return s.send(ctx, m.Round, real, d, obs, set)
}

// fits reports whether one more round keeps this LHA within its own ε
// limit (recomputed from the public parameters and the round log); a
// round over it is sat out (a dummy is sent), reported to obs.Skipped.
func (s *Session) fits(round int, limit float64, obs Observer) bool {
	// Under privacy "example" there is no client-level ε: the LHA's own
	// example-level budget decides (s.update).
	if !s.study.ClientLevelDP() {
		return true
	}
	s.mu.Lock()
	next := s.acct.Clone()
	own := append([]float64(nil), s.cyc.own...)
	s.mu.Unlock()
	next.Compose(s.study.SampleRate, s.noiseAt(round), 1)
	eps := s.lifetimeEpsilon(round, s.epsilonAfter(round, next))
	if s.isCyclic() {
		r, _ := s.turn(round)
		eps = s.ownEpsilon(append(own, s.noiseAt(r)))
	}
	// !(eps <= limit), not eps > limit: a NaN on either side sits out.
	if !(eps <= limit) {
		// A dropout that depends only on public information: the study
		// and the round log.
		if obs.Skipped != nil {
			obs.Skipped(Skip{Round: round, Epsilon: eps, Limit: limit})
		}
		return false
	}
	return true
}

// startTraining trains on x, y from global in a goroutine (after any
// earlier training has ended: they share the trainer and the strategy's
// state). Its progress comes on the returned channel, and it waits for
// resume after each step, so the observer runs on Run's goroutine while
// the training waits (the browser paints there). Once quit is closed it
// reports no progress; it then only yields (Options.Yield) between steps,
// and its result is dropped.
func (s *Session) startTraining(tr *nn.Trainer, global, x, y []float64, cfg fl.Config, quit <-chan struct{}) (<-chan trained, <-chan [2]int, chan<- struct{}) {
	result := make(chan trained, 1)
	progress := make(chan [2]int)
	resume := make(chan struct{})
	prev := s.training
	mine := make(chan struct{})
	s.training = mine
	go func() {
		defer close(mine)
		if prev != nil {
			<-prev
		}
		report := func(step, steps int) {
			select {
			case progress <- [2]int{step, steps}:
				select {
				case <-resume:
				case <-quit:
				}
			case <-quit:
				if s.opt.Yield != nil {
					s.opt.Yield()
				}
			}
		}
		d := make([]float64, len(global))
		err := s.update(tr, global, x, y, cfg, d, report)
		result <- trained{d, err}
	}()
	return result, progress, resume
}

// await waits until at, passing training progress to obs meanwhile. It
// returns the update when training finished by then (real), else nil.
func (s *Session) await(ctx context.Context, at time.Time, round int, result <-chan trained, progress <-chan [2]int, resume chan<- struct{}, obs Observer) (d []float64, real bool) {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	var out *trained
	for {
		select {
		case <-ctx.Done():
			return nil, false
		case <-timer.C:
			return finished(out)
		case p := <-progress:
			if obs.Progress != nil {
				obs.Progress(round, p[0], p[1])
			}
			if !time.Now().Before(at) {
				// The moment has come while training ran. Under wasm
				// (one thread, no preemption) the timer above may not be
				// seen until training pauses, so each step's pause checks
				// the clock too: the answer leaves on time either way.
				return finished(out)
			}
			resume <- struct{}{}
		case r := <-result:
			out, result = &r, nil
			if r.err != nil && obs.Skipped != nil {
				// Over this LHA's own example-level budget (local
				// DP-SGD): the round is sat out, like the ε limit (it
				// depends only on the steps already taken and the public
				// setting, never on the data).
				b, _ := s.ExampleBudget()
				obs.Skipped(Skip{Round: round, Epsilon: b.Spent, Limit: b.Epsilon, Example: true})
			}
		}
	}
}

// finished returns the update of a training that finished without error
// (real), else nil.
func finished(out *trained) (d []float64, real bool) {
	if out == nil || out.err != nil {
		return nil, false
	}
	return out.d, true
}

// send writes round's answer: the update d, or a dummy of the same size
// when !real.
func (s *Session) send(ctx context.Context, round int, real bool, d []float64, obs Observer, set func(State)) error {
	if !real {
		clear(d) // a dummy carries nothing
	}
	kind, b, err := protocol.Encode(&protocol.Update{Round: round, Dummy: !real, Weights: d})
	typ := "update"
	if s.study.Helper != nil {
		// With a helper: one report, of the update or of zero.
		kind, b, err = s.reportFrame(round, real, d)
		typ = "report"
	}
	if err != nil {
		return fmt.Errorf("session: local training diverged: %w", err)
	}
	if err := s.ws.Write(ctx, kind, b); err != nil {
		return nil // the connection is gone; Run's read notices and reconnects
	}
	s.mu.Lock()
	s.answered[round] = true
	s.sampled[round] = real
	s.unacked = append(s.unacked, sentFrame{round: round, dummy: !real})
	s.mu.Unlock()
	if !real && typ == "update" {
		typ = "dummy"
	}
	if obs.Sent != nil {
		obs.Sent(Outgoing{Type: typ, Round: round, Bytes: len(b)})
	}
	if real {
		set(StateSent)
	} else {
		set(StateWaiting)
	}
	return nil
}
