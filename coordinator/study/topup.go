package study

import (
	"errors"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Top-ups. A study's lifetime budget is the study file's ε; raising it
// later is a top-up (protocol.TopUp): campaigns added after the planned
// ones, their noise calibrated so that every round composes to the new
// budget under the RDP filter. It is recorded in the store (the ledger's
// topups table in serve), applied by Open to the public parameters every
// LHA receives in the welcome, and checked by each LHA, whose own limit
// may refuse the added rounds (shared/session). The study file itself
// never changes: its hash still names the study.

// TopUpRecorder is implemented by a Store that records top-ups.
type TopUpRecorder interface {
	// TopUp durably records top-up t (the next one: t.Number is one more
	// than the top-ups recorded). Recording the same top-up again is a
	// no-op.
	TopUp(t protocol.TopUp) error
}

// ErrNoTopUps: the store cannot record a top-up.
var ErrNoTopUps = errors.New("study: this store does not record top-ups")

// TopUp implements TopUpRecorder.
func (m *MemStore) TopUp(t protocol.TopUp) error {
	if m.S == nil {
		return ErrStoreEmpty
	}
	if n := len(m.S.TopUps); t.Number <= n && m.S.TopUps[t.Number-1] == t {
		return nil
	}
	if t.Number != len(m.S.TopUps)+1 {
		return fmt.Errorf("study: store: top-up %d after %d", t.Number, len(m.S.TopUps))
	}
	m.S.TopUps = append(m.S.TopUps, t)
	m.S.Finished, m.S.FinishedAt = "", nil // a top-up reopens a study that ended
	m.Changes++
	return nil
}

// applyTopUps applies the state's top-ups to the public parameters and
// reopens a study that had finished before the last one.
func (e *Engine) applyTopUps(st *State) error {
	for _, t := range st.TopUps {
		up, err := e.Study.Apply(t)
		if err != nil {
			return fmt.Errorf("%w: the stored %w", ErrMismatch, err)
		}
		e.Study = up
	}
	if n := len(st.TopUps); n > 0 && st.FinishedAt != nil && st.TopUps[n-1].At.After(*st.FinishedAt) {
		st.Finished = "" // topped up after it ended: it runs again
	}
	return nil
}

// TopUp raises the lifetime budget to eps with campaigns more campaigns,
// records the top-up in the store and applies it. The study's ε and
// rounds grow; every LHA receives the top-up in its next welcome.
func (e *Engine) TopUp(eps float64, campaigns int, at time.Time) (protocol.TopUp, error) {
	rec, ok := e.store.(TopUpRecorder)
	if !ok {
		return protocol.TopUp{}, ErrNoTopUps
	}
	if e.Current() != nil {
		return protocol.TopUp{}, fmt.Errorf("study: a round is open: top up between rounds")
	}
	t, err := e.Study.NewTopUp(eps, campaigns, at)
	if err != nil {
		return protocol.TopUp{}, err
	}
	up, err := e.Study.Apply(t)
	if err != nil {
		return protocol.TopUp{}, err
	}
	cfg, err := up.FLConfig()
	if err != nil {
		return protocol.TopUp{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := rec.TopUp(t); err != nil {
		return protocol.TopUp{}, err
	}
	e.Study, e.Config = up, cfg
	e.State.Config, e.State.EpsilonBudget = cfg, up.Epsilon
	e.finished = ""
	e.checkFinishedAt(at)
	return t, nil
}
