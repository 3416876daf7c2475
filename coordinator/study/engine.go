package study

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// Errors of the round engine. Submit's errors map one to one to protocol
// error codes in the server.
var (
	ErrFinished   = errors.New("study: the study has finished")
	ErrStaleRound = errors.New("study: no such round open")
	ErrNotSampled = errors.New("study: LHA not sampled in this round")
	ErrDuplicate  = errors.New("study: update already received for this round")
	ErrRoundOpen  = errors.New("study: a round is already open")
	ErrMismatch   = errors.New("study: ledger does not match the study")
	// ErrCommitted: Abandon of a round already in the ledger.
	ErrCommitted = errors.New("study: the round is committed and must be released")
	// ErrNotCommitted: Release without a committed round.
	ErrNotCommitted = errors.New("study: no committed round to release")
)

// Finish reasons recorded in the ledger and sent to clients.
const (
	ReasonRounds = "rounds" // all T rounds done
	ReasonBudget = "budget" // one more round would exceed ε
)

// Options configure Open.
type Options struct {
	// InsecureSeed, if not nil, selects research mode: the initial model,
	// sampling and noise come from fl.NewRand(*InsecureSeed, …). Never for a
	// release.
	InsecureSeed *uint64
	// Now is the clock of the times the engine records (the genesis's
	// creation, a round's start and commit, the finish) when a caller does
	// not pass one (BeginAt, CompleteAt). nil: the system clock. No
	// decision of the engine depends on it.
	Now func() time.Time
}

// Phase is a round's place in its life cycle. A round is released at most
// once:
//
//	open ──Complete──▶ aggregating ──(ledger commit)──▶ committed ──Release──▶ released
//	  │                    │
//	  └──Abandon───────────┴──▶ abandoned
//
// Abandon (and a failed commit) discards the round's aggregate: the next
// round starts from an empty one, so no update is ever counted twice. A
// committed round cannot be abandoned: it is in the ledger and must be
// released (after a crash, the restart releases it).
type Phase int

// Round phases.
const (
	PhaseOpen        Phase = iota + 1 // taking updates (Submit)
	PhaseAggregating                  // closed; aggregate, noise and commit in progress
	PhaseCommitted                    // in the ledger, not yet released
	PhaseReleased                     // released to the LHAs: the engine may Begin the next round
	PhaseAbandoned                    // discarded with its aggregate; nothing of it was released
)

func (p Phase) String() string {
	switch p {
	case PhaseOpen:
		return "open"
	case PhaseAggregating:
		return "aggregating"
	case PhaseCommitted:
		return "committed"
	case PhaseReleased:
		return "released"
	case PhaseAbandoned:
		return "abandoned"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// Round is the round in progress: admin-only information. Its fields are
// set by the engine; callers read them.
type Round struct {
	ID int
	// Sampled are the sampled LHA indices, increasing.
	Sampled  []int
	Started  time.Time
	Online   int // sampled LHAs connected at the start (Begin's online)
	Received int
	Rejected int

	phase    Phase
	sampled  map[int]bool
	done     map[int]bool
	buffered map[int][]float64      // research mode: summed in LHA order at Complete
	reports  map[int]*secagg.Report // with a helper: each LHA's report (secure.go)
}

// IsSampled reports whether LHA lha is in the round's sample.
func (r *Round) IsSampled(lha int) bool { return r.sampled[lha] }

// Answered reports whether LHA lha's update was accepted.
func (r *Round) Answered(lha int) bool { return r.done[lha] }

// Phase returns the round's phase.
func (r *Round) Phase() Phase { return r.phase }

// Result is a committed round, ready for release.
type Result struct {
	Event protocol.Event
	// Weights is the new global model (shared with the engine: read only).
	Weights []float64
	// Finished is ReasonRounds or ReasonBudget if this was the last round.
	Finished string
}

// Engine runs a study's rounds. It is not safe for concurrent use: the
// transport serialises calls. Its exported fields are the study's fixed
// parameters and the committed state, for reading; every change goes
// through the methods.
type Engine struct {
	File   *File
	Study  protocol.Study
	Config fl.Config
	Model  *nn.MLP
	// State is the committed state (round, global model, accountant).
	State *fl.Server

	log      []protocol.Event // the committed rounds' public events
	current  *Round           // open, aggregating or committed; nil between rounds
	finished string           // "" while the study runs

	store    Store
	t0       time.Time // the schedule's start (zero before the quorum)
	sampling *rand.Rand
	noise    *rand.Rand
	agg      *fl.Aggregator
	ordered  bool
	strategy fl.Strategy // the study's strategy: who trains in each step, how a step combines
	steps    stepper     // the strategy's side of the engine: pooled rounds or turns (pooled.go, cyclic.go)
	seed     string      // the study file's hex SHA-256: the public order's seed
	now      func() time.Time
	broken   error
	// unreleased: the last committed round was committed before a
	// restart and not released (rerelease.go).
	unreleased bool
}

// Open starts the study described by f (raw is the file's bytes) on
// store, or resumes it from the state the store holds.
func Open(f *File, raw []byte, store Store, opt *Options) (*Engine, error) {
	if opt == nil {
		opt = &Options{}
	}
	e := &Engine{File: f, store: store, now: opt.Now}
	if e.now == nil {
		e.now = defaultClock
	}
	sum := sha256.Sum256(raw)
	studyHash := hex.EncodeToString(sum[:])
	e.Model = nn.NewMLP(f.Layers()...)
	dim := e.Model.NumParams()
	insecure := opt.InsecureSeed != nil
	if insecure {
		e.sampling = fl.NewRand(*opt.InsecureSeed, fl.StreamSampling)
		e.noise = fl.NewRand(*opt.InsecureSeed, fl.StreamNoise)
		e.ordered = true
	} else {
		e.sampling = privacy.NewSecureRand()
		e.noise = privacy.NewSecureRand()
	}

	st, err := store.Load()
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		c, err := f.Calibrate()
		if err != nil {
			return nil, err
		}
		w := make([]float64, dim)
		initRng := privacy.NewSecureRand()
		if insecure {
			initRng = fl.NewRand(*opt.InsecureSeed, fl.StreamInit)
		}
		// checked by Validate; the weekly design starts at no change
		model.Design{Features: model.Features(f.Features), Weekly: f.Weekly}.Init(e.Model, w, initRng)
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%w: study file is not JSON", ErrConfig)
		}
		g := &Genesis{Study: raw, StudySHA256: studyHash, NoiseMultiplier: c, Clients: len(f.LHAs),
			Model: w, InsecureSeed: insecure, Created: e.now()}
		if err := store.Init(g); err != nil {
			return nil, err
		}
		st = &State{Version: StateVersion, Genesis: *g, Model: w}
	default:
		g := &st.Genesis
		if g.StudySHA256 != studyHash {
			return nil, fmt.Errorf("%w: the stored study belongs to another study file (sha256 %s, this file %s)", ErrMismatch, g.StudySHA256, studyHash)
		}
		if g.Clients != len(f.LHAs) || len(g.Model) != dim {
			return nil, fmt.Errorf("%w: the stored study has N=%d and %d parameters, study file N=%d and %d", ErrMismatch, g.Clients, len(g.Model), len(f.LHAs), dim)
		}
		if err := fl.CheckUpdate(g.Model, dim); err != nil {
			return nil, fmt.Errorf("%w: the stored initial model: %w", ErrMismatch, err)
		}
		if g.InsecureSeed != insecure {
			return nil, fmt.Errorf("%w: the study was started with insecure seed %v, now %v: keep the same mode to resume", ErrMismatch, g.InsecureSeed, insecure)
		}
	}
	c := st.Genesis.NoiseMultiplier
	e.Study = f.Public(c, insecure)
	// A noise schedule is recomputed from the study file (deterministic)
	// and must agree with the c calibrated at the start; every committed
	// round's c_t is checked against it by replay.
	if e.Study.NoiseMultipliers, err = f.CalibrateSchedule(); err != nil {
		return nil, err
	}
	if cs := e.Study.NoiseMultipliers; cs != nil && slices.Min(cs) != c {
		return nil, fmt.Errorf("%w: the noise schedule's smallest c is %v, the study started with c=%v", ErrMismatch, slices.Min(cs), c)
	}
	if err := e.applyTopUps(st); err != nil {
		return nil, err
	}
	if e.Config, err = e.Study.FLConfig(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if e.Secure() {
		if err := e.Study.CheckSecureAggregation(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	budget := e.Study.Epsilon
	if !e.Config.DP {
		budget = math.Inf(1) // privacy "example": no client-level budget (fl's non-DP mode)
	}
	e.State, err = fl.NewServer(e.Config, st.Genesis.Model, budget, f.Delta)
	if err != nil {
		return nil, err
	}
	if err := e.useStrategy(studyHash); err != nil {
		return nil, err
	}
	e.resetAggregate()
	if err := e.replay(st); err != nil {
		return nil, err
	}
	if st.ScheduleStart != nil {
		e.t0 = *st.ScheduleStart
	}
	e.finished = st.Finished
	if e.finished == "" {
		e.checkFinished()
	}
	e.unreleased = unreleasedIn(st)
	return e, nil
}

// replay rebuilds the engine from the committed steps (the strategy's
// side: pooledSteps.replay, cyclicState.replay).
func (e *Engine) replay(st *State) error { return e.steps.replay(st) }

// checkFinished records the end of the study when no further round fits.
func (e *Engine) checkFinished() { e.checkFinishedAt(e.now()) }

func (e *Engine) checkFinishedAt(t time.Time) {
	if e.finished != "" {
		return
	}
	err := e.steps.fits()
	switch {
	case err == nil:
		return
	case errors.Is(err, fl.ErrStudyComplete):
		e.finished = ReasonRounds
	default:
		e.finished = ReasonBudget
	}
	if ferr := e.store.Finish(e.finished, t); ferr != nil && e.broken == nil {
		e.broken = ferr
	}
}

// ScheduleStart returns t₀ of the public schedule, or the zero time before
// the start quorum was reached.
func (e *Engine) ScheduleStart() time.Time { return e.t0 }

// SetScheduleStart records t₀ in the store (once: a later call keeps the
// first t₀).
func (e *Engine) SetScheduleStart(t0 time.Time) error {
	if !e.t0.IsZero() {
		return nil
	}
	if err := e.store.SetScheduleStart(t0); err != nil {
		return err
	}
	e.t0 = t0
	return nil
}

// Rounds returns the number of committed steps: rounds, or a cyclic
// study's turns.
func (e *Engine) Rounds() int { return e.steps.committed() }

// EpsilonSpent returns the client-level ε after the committed rounds (0
// under privacy "example", which has no client-level guarantee).
func (e *Engine) EpsilonSpent() float64 {
	if !e.Config.DP {
		return 0
	}
	return e.steps.epsilonSpent()
}

// exampleEvent marks a round of a study with privacy "example": the
// coordinator added no noise (c = 0) and there is no client-level ε (0,
// not +Inf, which JSON cannot carry); the guarantee is each LHA's own.
func exampleEvent(ev protocol.Event) protocol.Event {
	ev.NoiseMultiplier, ev.Epsilon, ev.Accountant, ev.Guarantee = 0, 0, "", string(fl.ExampleLevel)
	return ev
}

// Global returns the current global model (read only).
func (e *Engine) Global() []float64 { return e.State.Global }

// Err returns the ledger error that stopped the engine, if any.
func (e *Engine) Err() error { return e.broken }

// Finished returns why the study ended (ReasonRounds, ReasonBudget), or ""
// while it runs. It turns non-empty when the last round is committed, so
// before that round is released.
func (e *Engine) Finished() string { return e.finished }

// Events returns the committed rounds' public events (a copy).
func (e *Engine) Events() []protocol.Event { return slices.Clone(e.log) }

// Current returns the round that is open, aggregating or committed (not yet
// released), or nil.
func (e *Engine) Current() *Round { return e.current }

// resetAggregate discards whatever the aggregator holds and makes a fresh
// one for the next step (for its c_t under a noise schedule).
func (e *Engine) resetAggregate() { e.steps.reset() }

// Begin opens the next round: it refuses a round that would exceed the
// budget or T (ErrFinished, recording the end in the ledger), then draws the
// Poisson sample from all N enrolled LHAs. online (nil: none) tells which
// LHAs are connected, for the admin's record (Round.Online) only: it never
// changes who is sampled.
func (e *Engine) Begin(online func(lha int) bool) (*Round, error) { return e.BeginAt(e.now(), online) }

// BeginAt is Begin at time t (the round's recorded start).
func (e *Engine) BeginAt(t time.Time, online func(lha int) bool) (*Round, error) {
	if e.broken != nil {
		return nil, e.broken
	}
	if e.current != nil {
		return nil, fmt.Errorf("%w: round %d is %s", ErrRoundOpen, e.current.ID, e.current.phase)
	}
	if e.unreleased {
		return nil, ErrNotReleased
	}
	e.checkFinishedAt(t)
	if e.finished != "" {
		return nil, ErrFinished
	}
	// A fresh aggregate for this round, made for its noise multiplier
	// (c_t under a noise schedule). Every discarding transition resets it
	// too, so that no path can count an update twice.
	e.resetAggregate()
	k := e.steps.committed() + 1
	_, sampled := e.strategy.Plan(e.Config, e.seed, k, e.sample)
	r := &Round{ID: k, Sampled: sampled, Started: t, phase: PhaseOpen,
		sampled: make(map[int]bool, len(sampled)), done: make(map[int]bool, len(sampled))}
	for _, i := range sampled {
		r.sampled[i] = true
		if online != nil && online(i) {
			r.Online++
		}
	}
	if e.ordered || e.strategy.Sequential() {
		// Summed in LHA order at Complete (research mode), or handed
		// on from the one update of the turn.
		r.buffered = make(map[int][]float64, len(sampled))
	}
	e.current = r
	return r, nil
}

// Abandon discards the open (or aggregating) round and its aggregate:
// nothing of it was released, and the next round starts from an empty
// aggregate. A committed round cannot be abandoned (ErrCommitted); with no
// round in progress Abandon does nothing.
func (e *Engine) Abandon() error {
	r := e.current
	if r == nil {
		return nil
	}
	if r.phase == PhaseCommitted {
		return fmt.Errorf("%w: round %d", ErrCommitted, r.ID)
	}
	r.phase = PhaseAbandoned
	r.buffered = nil
	e.resetAggregate()
	e.current = nil
	return nil
}

// Release marks the committed round as released (its model has been sent),
// so that the next round may Begin; a Store that records releases records
// it (see ReleaseAt).
func (e *Engine) Release() error { return e.ReleaseAt(e.now()) }

// ReleaseAt is Release at time at. If the store fails to record the
// release, the round is released all the same and the error wraps
// ErrReleaseNotRecorded.
func (e *Engine) ReleaseAt(at time.Time) error {
	round, err := e.markReleased(false)
	if err != nil {
		return err
	}
	return e.recordRelease(round, at, false)
}

// markReleased marks the committed round (the round committed before a
// restart, if again) as released without recording it, and returns it.
func (e *Engine) markReleased(again bool) (int, error) {
	if again {
		if !e.unreleased {
			return 0, ErrNotCommitted
		}
		e.unreleased = false
		return len(e.log), nil
	}
	r := e.current
	if r == nil || r.phase != PhaseCommitted {
		return 0, ErrNotCommitted
	}
	r.phase = PhaseReleased
	e.current = nil
	return r.ID, nil
}

// Submit takes LHA lha's update for round. The update is checked (round
// open, LHA sampled, first update, length, finite) and re-clipped by
// fl.Aggregator; w is not retained except in research mode.
func (e *Engine) Submit(lha, round int, w []float64) error {
	r := e.current
	if e.finished != "" && r == nil {
		return ErrFinished
	}
	if r == nil || round != r.ID || r.phase != PhaseOpen {
		return fmt.Errorf("%w: update for round %d", ErrStaleRound, round)
	}
	if !r.sampled[lha] {
		return fmt.Errorf("%w: round %d", ErrNotSampled, round)
	}
	if r.done[lha] {
		return fmt.Errorf("%w: round %d", ErrDuplicate, round)
	}
	if r.buffered != nil {
		if err := fl.CheckUpdate(w, len(e.State.Global)); err != nil {
			r.Rejected++
			return err
		}
		r.buffered[lha] = slices.Clone(w)
	} else if err := e.agg.Add(w); err != nil {
		r.Rejected++
		return err
	}
	r.done[lha] = true
	r.Received++
	return nil
}

// Refused counts an update of LHA lha for round that was refused before
// it reached Submit (the frame could not be decoded: NaN or ±Inf weights, a
// wrong length) as rejected in the round's participation record, when round
// is open, lha was sampled in it and its update was not taken already.
func (e *Engine) Refused(lha, round int) {
	r := e.current
	if r == nil || round != r.ID || r.phase != PhaseOpen || !r.sampled[lha] || r.done[lha] {
		return
	}
	r.Rejected++
}

// Complete closes the open round (open → aggregating → committed): the aggregate (÷ m) plus noise becomes
// the next model, which is committed to the ledger with its privacy event
// and participation record, durably, before the state changes. Only after
// Complete returns may the result be released. A ledger failure stops the
// engine (Err), the round is abandoned and nothing is released. The
// caller then Releases the round.
func (e *Engine) Complete() (*Result, error) { return e.CompleteAt(e.now) }

// CompleteAt is Complete with clock now, read once the aggregate and its
// noise are computed (the commit's recorded time).
func (e *Engine) CompleteAt(now func() time.Time) (*Result, error) {
	if e.broken != nil {
		return nil, e.broken
	}
	r := e.current
	if r == nil || r.phase != PhaseOpen {
		return nil, ErrStaleRound
	}
	r.phase = PhaseAggregating
	return e.steps.complete(r, now)
}

// commitPending commits the proposed round p of r to the store, then
// applies it (commit before release).
func (e *Engine) commitPending(r *Round, p *fl.Pending, now func() time.Time) (*Result, error) {
	at := now()
	ev, mech := protocol.EventOf(p.Event, protocol.HashHex(p.Global))
	if !e.Config.DP {
		ev = exampleEvent(ev)
	}
	cm := &Commit{Event: ev, Model: p.Global, Mechanism: mech, Committed: at,
		Participation: protocol.Participation{Round: r.ID, Sampled: len(r.Sampled), Online: r.Online,
			Received: r.Received, Rejected: r.Rejected, Duration: at.Sub(r.Started)}}
	if err := e.store.Commit(cm); err != nil {
		// The pending model was never released: dropping it is safe, but
		// the study cannot go on without its ledger.
		e.broken = err
		e.Abandon()
		return nil, err
	}
	e.State.Apply(p)
	r.phase = PhaseCommitted
	r.buffered = nil
	e.log = append(e.log, ev)
	e.checkFinishedAt(at)
	return &Result{Event: ev, Weights: e.State.Global, Finished: e.finished}, nil
}

// LastResult returns the last committed round for re-sending (nil before
// round 1).
func (e *Engine) LastResult() *Result {
	if len(e.log) == 0 {
		return nil
	}
	return &Result{Event: e.log[len(e.log)-1], Weights: e.State.Global, Finished: e.finished}
}
