package study

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// stepper is the strategy's side of the engine: what a step is, its
// committed state and its privacy accounts. A strategy whose sampled
// clients train together (FedAvg, MR-MTL, and any strategy that is not
// fl.Strategy.Sequential) runs on pooledSteps, one in which they train in
// turn (cyclic) on cyclicState. The engine's life cycle (Begin, Submit,
// Complete, Release, Abandon) is the same for both.
type stepper interface {
	// committed returns the number of committed steps.
	committed() int
	// replay rebuilds the state from the store's committed steps.
	replay(st *State) error
	// fits reports whether the next step may run: fl.ErrStudyComplete
	// after the last, privacy.ErrBudgetExhausted past the budget.
	fits() error
	// epsilonSpent is the study's client-level ε (DP mode).
	epsilonSpent() float64
	// reset makes a fresh aggregate for the next step.
	reset()
	// complete forms, commits and applies the aggregating step r.
	complete(r *Round, now func() time.Time) (*Result, error)
}

// useStrategy installs the study's strategy and its side of the engine;
// seed is the study file's hex SHA-256 (a sequential strategy's public
// order, announced as the study's cyclic seed).
func (e *Engine) useStrategy(seed string) error {
	st, err := fl.LookupStrategy(fl.StrategyName(e.File.Strategy))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := st.Check(e.Config); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	e.strategy, e.seed = st, seed
	e.State.Strategy = st
	if !st.Sequential() {
		e.steps = &pooledSteps{e}
		return nil
	}
	e.Study.CyclicSeed = seed
	c := &cyclicState{e: e, n: e.Config.Clients}
	if e.Config.DP {
		c.acct = fl.NewCyclicAccountant(e.Config.AccountantKind(), e.Config.Clients, e.File.Delta)
	}
	e.steps = c
	return nil
}

// pooledSteps runs a study whose steps are rounds: the sampled LHAs'
// updates are aggregated into e.agg and the committed state, with its
// accountant, is e.State (fl.Server).
type pooledSteps struct{ e *Engine }

func (p *pooledSteps) committed() int        { return p.e.State.Round }
func (p *pooledSteps) fits() error           { return p.e.State.NextRoundFits() }
func (p *pooledSteps) epsilonSpent() float64 { return p.e.State.EpsilonSpent() }

func (p *pooledSteps) reset() {
	e := p.e
	e.agg = fl.NewAggregator(e.strategy.StepConfig(e.Config, e.State.Round+1), len(e.State.Global))
}

// complete aggregates round r (in research mode its buffered updates in
// LHA order), adds the noise through the server state and commits it.
func (p *pooledSteps) complete(r *Round, now func() time.Time) (*Result, error) {
	e := p.e
	if e.ordered {
		for _, i := range r.Sampled {
			if w, ok := r.buffered[i]; ok {
				if err := e.agg.Add(w); err != nil {
					r.Rejected++
					r.Received--
				}
			}
		}
	}
	pend, err := e.State.Propose(e.agg, e.noise)
	if err != nil {
		e.broken = fmt.Errorf("study: round %d: %w", r.ID, err)
		e.Abandon()
		return nil, e.broken
	}
	return e.commitPending(r, pend, now)
}

// replay rebuilds the engine from the committed rounds: the accountant is
// recomposed from the events (each must have the study's q and c, and the
// recorded ε must be what the accountant gives), the global model is the
// last committed one, and in research mode the random streams are advanced
// past the committed rounds.
func (p *pooledSteps) replay(st *State) error {
	e := p.e
	q := e.Config.SampleRate()
	scratch := make([]float64, e.Model.NumParams())
	if len(st.Events) > e.Config.Rounds {
		return fmt.Errorf("%w: the store holds %d rounds, the study has T=%d", ErrMismatch, len(st.Events), e.Config.Rounds)
	}
	for i, r := range st.Events {
		if r.Round != i+1 {
			return fmt.Errorf("%w: stored round %d is numbered %d", ErrMismatch, i+1, r.Round)
		}
		c := e.Config.NoiseMultiplierAt(r.Round) // c_t with a noise schedule
		if r.SampleRate != q || r.NoiseMultiplier != c || r.Delta != e.File.Delta {
			return fmt.Errorf("%w: round %d has q=%v, c=%v, δ=%v; the study has q=%v, c=%v, δ=%v", ErrMismatch, r.Round, r.SampleRate, r.NoiseMultiplier, r.Delta, q, c, e.File.Delta)
		}
		if !e.Config.DP {
			// privacy "example": no noise, no client-level ε (c = 0 checked above).
			if r.Epsilon != 0 {
				return fmt.Errorf("%w: round %d of a study with privacy \"example\" records a client-level ε=%v", ErrMismatch, r.Round, r.Epsilon)
			}
			e.State.Round = r.Round
			e.log = append(e.log, exampleEvent(protocol.Event{Round: r.Round, SampleRate: r.SampleRate, Delta: r.Delta, ModelSHA256: r.ModelSHA256}))
			if e.ordered {
				e.State.Sample(e.sampling) // the same draws as the round consumed (no noise drawn)
			}
			continue
		}
		e.State.Accountant.Compose(q, c, 1)
		e.State.Round = r.Round
		eps := e.State.EpsilonSpent() // by the study's accountant
		if math.Abs(eps-r.Epsilon) > 1e-9*math.Max(1, eps) {
			return fmt.Errorf("%w: round %d recorded ε=%v but the %s accountant gives %v", ErrMismatch, r.Round, r.Epsilon, e.Config.AccountantKind(), eps)
		}
		e.log = append(e.log, protocol.Event{Round: r.Round, SampleRate: r.SampleRate, NoiseMultiplier: r.NoiseMultiplier,
			Epsilon: r.Epsilon, Delta: r.Delta, ModelSHA256: r.ModelSHA256, Accountant: string(e.Config.AccountantKind())})
		if e.ordered {
			// Same draws as the round consumed: N uniforms, then one
			// Gaussian per parameter (the noise of an empty aggregate).
			e.State.Sample(e.sampling)
			e.strategy.Combine(fl.NewAggregator(e.strategy.StepConfig(e.Config, r.Round), len(scratch)), scratch, e.noise)
		}
	}
	if len(st.Events) > 0 {
		w := st.Model
		if err := fl.CheckUpdate(w, len(scratch)); err != nil {
			return fmt.Errorf("%w: the model of round %d: %w", ErrMismatch, len(st.Events), err)
		}
		if h := protocol.HashHex(w); h != st.Events[len(st.Events)-1].ModelSHA256 {
			return fmt.Errorf("%w: the stored model of round %d has sha256 %s, its event %s", ErrMismatch, len(st.Events), h, st.Events[len(st.Events)-1].ModelSHA256)
		}
		e.State.Global = slices.Clone(w)
	}
	return nil
}
