package study

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Genesis is what a study starts from: written once, before round 1.
type Genesis struct {
	// Study is the study file's bytes, verbatim (base64 in the State's
	// JSON, so that they stay byte for byte what StudySHA256 hashes).
	Study []byte `json:"study"`
	// StudySHA256 is the hex SHA-256 of the study file's bytes; a
	// coordinator refuses to resume a state with another study file.
	StudySHA256 string `json:"study_sha256"`
	// NoiseMultiplier is c, calibrated when the study started.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// Clients is N, fixed when the study started.
	Clients int `json:"clients"`
	// Model is the initial global model w₀ (data-independent).
	Model []float64 `json:"model"`
	// InsecureSeed records a research run with reproducible randomness.
	InsecureSeed bool `json:"insecure_seed"`
	// Created is when the study started.
	Created time.Time `json:"created"`
}

// Commit is one committed round as a Store records it, before the round
// is released: its public privacy event, the noised model and the
// admin-only participation record. Nothing un-noised is ever in it.
type Commit struct {
	Event protocol.Event `json:"event"`
	// Model is the noised global model released for the round.
	Model []float64 `json:"model"`
	// Mechanism is the round's noise mechanism (γ and the sampler).
	protocol.Mechanism
	// Participation is the admin-only record of the round.
	Participation protocol.Participation `json:"participation"`
	Committed     time.Time              `json:"committed"`
}

// State is a study's committed state: everything that survives a restart
// (an open round does not, see the package doc). It is what a [Store]
// holds; [Open] rebuilds an [Engine] from it. It round-trips through JSON
// ([State.MarshalBinary], [State.UnmarshalBinary]) bit for bit: Go writes
// a float64 in the shortest form that parses back to the same value.
type State struct {
	// Version is StateVersion.
	Version int     `json:"version"`
	Genesis Genesis `json:"genesis"`
	// Events are the committed rounds' public events, rounds 1…k.
	Events []protocol.Event `json:"events"`
	// Mechanisms are the rounds' lattice steps and samplers, as Events.
	Mechanisms []Mechanism `json:"mechanisms,omitempty"`
	// Model is the global model after round k (w₀ when k = 0).
	Model []float64 `json:"model"`
	// Participation holds the admin-only records of the committed rounds.
	Participation []protocol.Participation `json:"participation,omitempty"`
	// Finished is ReasonRounds or ReasonBudget once the study has ended.
	Finished   string     `json:"finished,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// ScheduleStart is t₀ of the public schedule once the start quorum was
	// reached.
	ScheduleStart *time.Time `json:"schedule_start,omitempty"`
	// Released is the last round released to the LHAs, when the store
	// records releases (ReleaseRecorder); nil: it does not, and every
	// committed round counts as released.
	Released *int `json:"released,omitempty"`
	// Rereleased lists the rounds released after a restart (committed
	// before a crash, released at the first slot after it).
	Rereleased []int `json:"rereleased,omitempty"`
	// TopUps are the raises of the lifetime budget, in order (topup.go).
	TopUps []protocol.TopUp `json:"top_ups,omitempty"`
}

// Mechanism is a round's noise mechanism as recorded.
type Mechanism = protocol.Mechanism

// StateVersion is the version of the State encoding.
const StateVersion = 1

// MarshalBinary encodes s as JSON.
func (s *State) MarshalBinary() ([]byte, error) { return json.Marshal(s) }

// UnmarshalBinary decodes s from MarshalBinary's form.
func (s *State) UnmarshalBinary(b []byte) error {
	var x State
	if err := json.Unmarshal(b, &x); err != nil {
		return fmt.Errorf("study: state: %w", err)
	}
	if x.Version != StateVersion {
		return fmt.Errorf("study: state version %d, this build reads %d", x.Version, StateVersion)
	}
	if x.Released != nil && (*x.Released < 0 || *x.Released > len(x.Events)) {
		return fmt.Errorf("study: state says round %d was released, but %d rounds are committed", *x.Released, len(x.Events))
	}
	if len(x.Mechanisms) != 0 && len(x.Mechanisms) != len(x.Events) {
		return fmt.Errorf("study: state has %d events but %d mechanisms", len(x.Events), len(x.Mechanisms))
	}
	*s = x
	return nil
}

// Rounds returns k, the number of committed rounds.
func (s *State) Rounds() int { return len(s.Events) }

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := *s
	c.Genesis.Study = slices.Clone(s.Genesis.Study)
	c.Genesis.Model = slices.Clone(s.Genesis.Model)
	c.Events = slices.Clone(s.Events)
	c.Mechanisms = slices.Clone(s.Mechanisms)
	c.Model = slices.Clone(s.Model)
	c.Participation = slices.Clone(s.Participation)
	if s.FinishedAt != nil {
		t := *s.FinishedAt
		c.FinishedAt = &t
	}
	if s.ScheduleStart != nil {
		t := *s.ScheduleStart
		c.ScheduleStart = &t
	}
	if s.Released != nil {
		r := *s.Released
		c.Released = &r
	}
	c.Rereleased = slices.Clone(s.Rereleased)
	c.TopUps = slices.Clone(s.TopUps)
	return &c
}

// Store is where a study's committed state lives: the SQLite ledger in
// serve (coordinator/ledger's Ledger.Store), Durable Object storage in the
// Cloudflare worker, a [MemStore] in tests and simulations. The engine
// calls Commit before a round's model may be released: when Commit
// returns nil, the round is durable.
//
// Every write is idempotent, because a driver may repeat it (a worker's
// alarms fire at least once): Commit of a round already recorded with the
// same model hash, Finish after a finish, SetScheduleStart after a start
// return nil and change nothing. A Commit of round k that is neither the
// next round nor an identical repeat is an error.
type Store interface {
	// Load returns the committed state, or (nil, nil) for an empty store.
	Load() (*State, error)
	// Init records a new study's genesis (an empty store only).
	Init(g *Genesis) error
	// Commit durably records a committed round.
	Commit(c *Commit) error
	// Finish records the end of the study.
	Finish(reason string, at time.Time) error
	// SetScheduleStart records t₀.
	SetScheduleStart(t0 time.Time) error
}

// Errors of a Store.
var (
	ErrStoreEmpty      = errors.New("study: store: no study recorded")
	ErrStoreExists     = errors.New("study: store: a study is already recorded")
	ErrStoreOutOfOrder = errors.New("study: store: round out of order")
)

// MemStore is a Store in memory: for tests, simulations, and drivers that
// persist the state's bytes themselves (the worker writes S's
// MarshalBinary to its storage after every call that changed it; Version
// counts the changes).
type MemStore struct {
	S       *State
	Changes int
}

// Load implements Store.
func (m *MemStore) Load() (*State, error) {
	if m.S == nil {
		return nil, nil
	}
	return m.S.Clone(), nil
}

// Init implements Store.
func (m *MemStore) Init(g *Genesis) error {
	if m.S != nil {
		return ErrStoreExists
	}
	gc := *g
	gc.Model = slices.Clone(g.Model)
	gc.Study = slices.Clone(g.Study)
	m.S = &State{Version: StateVersion, Genesis: gc, Model: slices.Clone(g.Model), Released: new(int)}
	m.Changes++
	return nil
}

// Commit implements Store.
func (m *MemStore) Commit(c *Commit) error {
	if m.S == nil {
		return ErrStoreEmpty
	}
	return m.S.apply(c, &m.Changes)
}

// apply adds c to s (idempotent by round number, see Store).
func (s *State) apply(c *Commit, changes *int) error {
	k := c.Event.Round
	hash := protocol.HashHex(c.Model)
	if c.Event.ModelSHA256 != "" && c.Event.ModelSHA256 != hash {
		return fmt.Errorf("study: store: round %d: model hash %s, event says %s", k, hash, c.Event.ModelSHA256)
	}
	if k >= 1 && k <= len(s.Events) {
		if s.Events[k-1].ModelSHA256 == hash {
			return nil // a repeat: already committed
		}
		return fmt.Errorf("%w: round %d is already committed with another model", ErrStoreOutOfOrder, k)
	}
	if s.Finished != "" {
		return fmt.Errorf("study: store: commit of round %d after the study finished", k)
	}
	if k != len(s.Events)+1 {
		return fmt.Errorf("%w: commit of round %d after round %d", ErrStoreOutOfOrder, k, len(s.Events))
	}
	ev := c.Event
	ev.ModelSHA256 = hash
	if len(s.Mechanisms) != len(s.Events) { // states written without mechanisms
		s.Mechanisms = make([]Mechanism, len(s.Events))
	}
	s.Events = append(s.Events, ev)
	s.Mechanisms = append(s.Mechanisms, c.Mechanism)
	s.Model = slices.Clone(c.Model)
	p := c.Participation
	p.Round = k
	s.Participation = append(s.Participation, p)
	*changes++
	return nil
}

// Finish implements Store.
func (m *MemStore) Finish(reason string, at time.Time) error {
	if m.S == nil {
		return ErrStoreEmpty
	}
	if m.S.Finished == "" {
		m.S.Finished, m.S.FinishedAt = reason, &at
		m.Changes++
	}
	return nil
}

// SetScheduleStart implements Store.
func (m *MemStore) SetScheduleStart(t0 time.Time) error {
	if m.S == nil {
		return ErrStoreEmpty
	}
	if m.S.ScheduleStart == nil {
		m.S.ScheduleStart = &t0
		m.Changes++
	}
	return nil
}
