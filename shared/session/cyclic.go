package session

import (
	"fmt"
	"math"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// Cyclic FL (strategy "cyclic", docs/strategies.md): a round of the
// protocol is one turn k = 1 … T·N of the public timetable
// (fl.CyclicTurn of the study's CyclicSeed); the coordinator sends the
// current model to the LHA whose turn it is, which trains and sends its
// update as in FedAvg. Under client-level DP each hand-off is noised at
// c_r·S with q = 1, and this LHA's accountant composes its own hand-offs
// only: the others' are post-processing for it. So this LHA
//
//   - checks, for every released turn, that it is the next turn, that its
//     q is 1 and its c is the round's announced c_r (or 0: a missed turn,
//     which must hand the model on unchanged), and for its own hand-offs
//     that the coordinator's ε is at least what it recomputes;
//   - trains only in its own turns, and not past its own limit.

// cyclicState is this LHA's place in a cyclic study.
type cyclicState struct {
	index int       // this LHA's enrolment index
	own   []float64 // the noise multipliers of this LHA's released hand-offs
}

// isCyclic reports whether the study's LHAs train in turn (its strategy
// is sequential: cyclic FL).
func (s *Session) isCyclic() bool { return s.trains != nil && s.trains.Sequential() }

// checkCyclic checks a cyclic study's announcement: q = 1 (m = N), a
// timetable seed, and this LHA's index among the N.
func checkCyclic(st protocol.Study, w *protocol.Welcome) (int, error) {
	if st.ExpectedClients != st.Clients || st.SampleRate != 1 {
		return 0, fmt.Errorf("a cyclic study gives every LHA a turn in every round: m=%d, N=%d, q=%v announced", st.ExpectedClients, st.Clients, st.SampleRate)
	}
	if len(st.CyclicSeed) != 64 {
		return 0, fmt.Errorf("a cyclic study without the seed of its public timetable")
	}
	if w.Index == nil || *w.Index < 0 || *w.Index >= st.Clients {
		return 0, fmt.Errorf("a cyclic study's welcome without this LHA's index among the N=%d", st.Clients)
	}
	return *w.Index, nil
}

// turn returns the round of turn k and whether it is this LHA's.
func (s *Session) turn(k int) (round int, mine bool) {
	r, _, lha := fl.CyclicTurn(s.study.CyclicSeed, k, s.study.Clients)
	return r, lha == s.cyc.index
}

// ownEpsilon returns this LHA's client-level ε after the hand-offs at
// multipliers own (0 for none), by the study's accountant, exactly.
func (s *Session) ownEpsilon(own []float64) float64 {
	if len(own) == 0 {
		return 0
	}
	eps, err := s.accountant.Epsilon(privacy.ScheduleEvents(1, own), s.study.Delta)
	if err != nil {
		return math.Inf(1) // cannot account: over every budget
	}
	return eps
}

// cyclicEvent checks released turn ev (the next one) and accounts it
// (mu held).
func (s *Session) cyclicEvent(ev protocol.Event, check bool) error {
	st := s.study
	round, mine := s.turn(ev.Round)
	if ev.SampleRate != 1 || ev.Delta != st.Delta {
		return fmt.Errorf("%w: turn %d has q=%v, δ=%v; a cyclic study has q=1, δ=%v", ErrBudgetMismatch, ev.Round, ev.SampleRate, ev.Delta, st.Delta)
	}
	if !st.ClientLevelDP() {
		if ev.NoiseMultiplier != 0 || ev.Epsilon != 0 || ev.Guarantee != string(fl.ExampleLevel) {
			return fmt.Errorf("%w: turn %d of a study with privacy \"example\" reports c=%v, ε=%v, guarantee %q", ErrBudgetMismatch, ev.Round, ev.NoiseMultiplier, ev.Epsilon, ev.Guarantee)
		}
		s.events = append(s.events, ev)
		return nil
	}
	if ev.Guarantee != "" || (ev.Accountant != "" && ev.Accountant != string(s.accountant.Kind())) {
		return fmt.Errorf("%w: turn %d reports guarantee %q, accountant %q", ErrBudgetMismatch, ev.Round, ev.Guarantee, ev.Accountant)
	}
	c := privacy.MultiplierAt(st.NoiseMultiplier, st.NoiseMultipliers, round)
	switch ev.NoiseMultiplier {
	case c:
		if mine {
			s.cyc.own = append(s.cyc.own, c)
			if local := s.ownEpsilon(s.cyc.own); check && ev.Epsilon < local-1e-9*math.Max(1, local) {
				return fmt.Errorf("%w: turn %d: coordinator reports ε=%v for this LHA's hand-offs, recomputed here %v (%s)", ErrBudgetMismatch, ev.Round, ev.Epsilon, local, s.accountant.Kind())
			}
		}
	case 0:
		// A missed turn hands the model on unchanged: nothing new released.
		if n := len(s.events); n > 0 && s.events[n-1].ModelSHA256 != ev.ModelSHA256 {
			return fmt.Errorf("%w: turn %d adds no noise but changes the model", ErrBudgetMismatch, ev.Round)
		}
	default:
		return fmt.Errorf("%w: turn %d (round %d) has c=%v; the study announced c=%v for it", ErrBudgetMismatch, ev.Round, round, ev.NoiseMultiplier, c)
	}
	s.events = append(s.events, ev)
	return nil
}

// ownTurns returns how many of turns 1 … k are this LHA's.
func (s *Session) ownTurns(k int) int {
	n := 0
	for i := 1; i <= min(k, s.study.Rounds*s.study.Clients); i++ {
		if _, mine := s.turn(i); mine {
			n++
		}
	}
	return n
}
