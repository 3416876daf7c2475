package study

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// # Cyclic FL in a live study
//
// A study with strategy "cyclic" runs on the same Engine and Coordinator
// as DP-FedAvg; what the engine calls a round is then one turn. Turn k
// (1-based over the study, T·N turns in all) belongs to round
// r = ⌈k/N⌉ and to the LHA at position (k−1) mod N of round r's public
// order, fl.CyclicOrder(study file's SHA-256, r, N): a permutation that
// anyone holding the study file computes before the study starts. Each
// turn takes one slot of the public schedule (round_length is the turn
// length, round_slack its slack), so every release time is a function of
// t₀, L and the slack, as for DP-FedAvg.
//
// At the turn's opening the LHA whose turn it is gets round_start with
// the current model (round_start.round is k); it trains and sends its
// update (the change from the model it received). When the window closes
// the engine forms the hand-off with fl.HandOff: under client-level DP
// (privacy "client" or "both") the change is re-clipped to S and the
// round's noise c_r·S is added on the lattice, with no amplification by
// sampling (q = 1); under privacy "example" the model is handed on as the
// LHA trained it (its local DP-SGD is the protection). In a study of the
// Lipschitz design the hand-off is then projected to spectral norm ≤ 1
// per layer, as every release of a DP-FedAvg round. The hand-off is
// committed to the store (event and model) before it is released to
// everyone at the slot's end, and the next turn trains from it.
//
// A missed turn (no update, or one that Submit refused: wrong length, not
// finite) hands the model on
// unchanged: nothing new is released (the event repeats the previous
// model's hash, with c = 0 and no change to anyone's ε), and no noise is
// drawn. Under client-level DP each LHA's account holds its own hand-offs
// only (fl.CyclicAccountant); every other hand-off is post-processing for
// it. An event's ε is the ε of the LHA whose turn it was, after the turn;
// the study's ε (EpsilonSpent, /api/status) is the largest over the LHAs.

// cyclicState is the engine's side of a cyclic study (a stepper: a step
// is one turn).
type cyclicState struct {
	e     *Engine
	n     int
	turns int // committed turns (hand-offs and missed turns)
	// acct holds each LHA's own hand-offs (nil without client-level DP).
	acct *fl.CyclicAccountant
}

func (cs *cyclicState) committed() int { return cs.turns }

// epsilonSpent is the largest of the LHAs' own ε.
func (cs *cyclicState) epsilonSpent() float64 { return cs.acct.MaxEpsilon() }

// reset does nothing: a hand-off makes its own one-LHA aggregate (fl.HandOff).
func (cs *cyclicState) reset() {}

// cyclic returns the study's cyclic state (nil for a study whose LHAs do
// not train in turn).
func (e *Engine) cyclic() *cyclicState {
	c, _ := e.steps.(*cyclicState)
	return c
}

// Turn returns round r, position and LHA of turn k (1-based) of a cyclic
// study; ok is false for a study that is not cyclic.
func (e *Engine) Turn(k int) (round, pos, lha int, ok bool) {
	if e.cyclic() == nil {
		return 0, 0, 0, false
	}
	round, pos, lha = fl.CyclicTurn(e.seed, k, e.Config.Clients)
	return round, pos, lha, true
}

// Turns returns the number of turns of a cyclic study (T·N), 0 otherwise.
func (e *Engine) Turns() int {
	if e.cyclic() == nil {
		return 0
	}
	return e.strategy.Steps(e.Config)
}

// LHAEpsilon returns LHA lha's own client-level ε in a cyclic study (its
// own hand-offs only); 0 without client-level DP or outside cyclic FL.
func (e *Engine) LHAEpsilon(lha int) float64 {
	if c := e.cyclic(); c != nil && c.acct != nil {
		return c.acct.Epsilon(lha)
	}
	return 0
}

// LHAHandOffs returns the number of hand-offs in LHA lha's account.
func (e *Engine) LHAHandOffs(lha int) int {
	if c := e.cyclic(); c != nil && c.acct != nil {
		return c.acct.Turns(lha)
	}
	return 0
}

// fits reports whether turn k = turns+1 may run: ErrStudyComplete
// after T·N turns, privacy.ErrBudgetExhausted when the hand-off would take
// its LHA's own ε above the budget.
func (cs *cyclicState) fits() error {
	e := cs.e
	k := cs.turns + 1
	if k > e.Turns() {
		return fl.ErrStudyComplete
	}
	if cs.acct == nil {
		return nil
	}
	r, _, lha := fl.CyclicTurn(e.seed, k, cs.n)
	c := e.Config.NoiseMultiplierAt(r)
	if eps := cs.acct.EpsilonIfNext(lha, c); !(eps <= e.File.Epsilon) {
		return fmt.Errorf("%w: LHA %d's hand-off in round %d would take its ε to %.6g > %.6g", privacy.ErrBudgetExhausted, lha, r, eps, e.File.Epsilon)
	}
	return nil
}

// handOffEvent is the public event of turn k handing on model (whose hex
// SHA-256 is hash): c is the hand-off's noise multiplier (0: a missed turn,
// or privacy "example"), eps the LHA's own ε after it.
func (e *Engine) handOffEvent(k int, c, eps float64, hash string) protocol.Event {
	ev := protocol.Event{Round: k, SampleRate: 1, NoiseMultiplier: c, Epsilon: eps, Delta: e.File.Delta,
		ModelSHA256: hash, Accountant: string(e.Config.AccountantKind())}
	if !e.Config.DP {
		ev = exampleEvent(ev)
	}
	return ev
}

// complete forms, commits and applies turn r's hand-off (see the
// notes above); r is in phase aggregating.
func (cs *cyclicState) complete(r *Round, now func() time.Time) (*Result, error) {
	e := cs.e
	k := r.ID
	round, _, lha := fl.CyclicTurn(e.seed, k, cs.n)
	received := e.State.Global
	next := slices.Clone(received)
	var c float64
	var mech Mechanism
	eps := e.LHAEpsilon(lha)
	if d, ok := r.buffered[lha]; ok {
		trained := make([]float64, len(received))
		for i := range trained {
			trained[i] = received[i] + d[i]
		}
		if !fl.HandOff(e.Config, round, received, trained, next, e.noise) {
			r.Rejected++
			r.Received--
		}
		if len(e.Config.Spectral) > 0 { // as fl.Server releases: projected after the noise
			nn.NewMLP(e.Config.Spectral...).ProjectSpectral(next)
		}
		if e.Config.DP {
			// A hand-off of this LHA (Submit checked the update; should
			// HandOff still refuse it, the noise is added all the same and
			// the hand-off is accounted as one).
			c = e.Config.NoiseMultiplierAt(round)
			eps = cs.acct.EpsilonIfNext(lha, c)
			mech = Mechanism{Gamma: fl.NewAggregator(e.strategy.StepConfig(e.Config, round), len(next)).Lattice().Gamma, Sampler: privacy.SamplerName}
		}
	}
	at := now()
	ev := e.handOffEvent(k, c, eps, protocol.HashHex(next))
	cm := &Commit{Event: ev, Model: next, Mechanism: mech, Committed: at,
		Participation: protocol.Participation{Round: k, Sampled: 1, Online: r.Online,
			Received: r.Received, Rejected: r.Rejected, Duration: at.Sub(r.Started)}}
	if err := e.store.Commit(cm); err != nil {
		e.broken = err
		e.Abandon()
		return nil, err
	}
	if c != 0 {
		cs.acct.Record(lha, c)
	}
	cs.turns = k
	e.State.Global = next
	r.phase = PhaseCommitted
	r.buffered = nil
	e.log = append(e.log, ev)
	e.checkFinishedAt(at)
	return &Result{Event: ev, Weights: e.State.Global, Finished: e.finished}, nil
}

// replay rebuilds a cyclic study from its committed turns: each
// event must be turn k of the public timetable, either a hand-off at its
// round's c_r (recorded in its LHA's account, with the ε that account
// gives) or a missed turn (c = 0, the previous model's hash, no change to
// anyone's ε); in research mode the noise stream is advanced past the
// hand-offs.
func (cs *cyclicState) replay(st *State) error {
	e := cs.e
	if len(st.Events) > e.Turns() {
		return fmt.Errorf("%w: the store holds %d turns, the cyclic study has T·N=%d", ErrMismatch, len(st.Events), e.Turns())
	}
	prev := protocol.HashHex(st.Genesis.Model)
	scratch := make([]float64, e.Model.NumParams())
	for i, ev := range st.Events {
		k := i + 1
		if ev.Round != k {
			return fmt.Errorf("%w: stored turn %d is numbered %d", ErrMismatch, k, ev.Round)
		}
		round, _, lha := fl.CyclicTurn(e.seed, k, cs.n)
		if ev.SampleRate != 1 || ev.Delta != e.File.Delta {
			return fmt.Errorf("%w: turn %d has q=%v, δ=%v; a cyclic study has q=1, δ=%v", ErrMismatch, k, ev.SampleRate, ev.Delta, e.File.Delta)
		}
		c, eps := 0.0, e.LHAEpsilon(lha)
		switch {
		case ev.NoiseMultiplier == 0:
			// privacy "example", or a missed turn under client-level DP.
			if e.Config.DP && ev.ModelSHA256 != prev {
				return fmt.Errorf("%w: turn %d has no noise but changes the model", ErrMismatch, k)
			}
		case !e.Config.DP || ev.NoiseMultiplier != e.Config.NoiseMultiplierAt(round):
			return fmt.Errorf("%w: turn %d (round %d) has c=%v, the study has c=%v", ErrMismatch, k, round, ev.NoiseMultiplier, e.Config.NoiseMultiplierAt(round))
		default:
			c = ev.NoiseMultiplier
			eps = cs.acct.EpsilonIfNext(lha, c)
			cs.acct.Record(lha, c)
			if e.ordered {
				e.strategy.Combine(fl.NewAggregator(e.strategy.StepConfig(e.Config, round), len(scratch)), scratch, e.noise)
			}
		}
		if math.Abs(eps-ev.Epsilon) > 1e-9*math.Max(1, eps) {
			return fmt.Errorf("%w: turn %d recorded ε=%v but LHA %d's own %s account gives %v", ErrMismatch, k, ev.Epsilon, lha, e.Config.AccountantKind(), eps)
		}
		// The public event as released (a store may keep only the
		// numbers: the accountant and guarantee follow from the study).
		e.log = append(e.log, e.handOffEvent(k, c, ev.Epsilon, ev.ModelSHA256))
		prev = ev.ModelSHA256
	}
	cs.turns = len(st.Events)
	if len(st.Events) > 0 {
		if err := fl.CheckUpdate(st.Model, len(scratch)); err != nil {
			return fmt.Errorf("%w: the model of turn %d: %w", ErrMismatch, len(st.Events), err)
		}
		if h := protocol.HashHex(st.Model); h != prev {
			return fmt.Errorf("%w: the stored model of turn %d has sha256 %s, its event %s", ErrMismatch, len(st.Events), h, prev)
		}
		e.State.Global = slices.Clone(st.Model)
	}
	return nil
}
