package ledger

import (
	"errors"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// Store returns the ledger as serve's study.Store. A round is on disk
// (synced, in one transaction with its participation record) when Commit
// returns; a repeated Commit of a recorded round with the same model is a
// no-op. Closing the Store closes the ledger.
func (l *Ledger) Store() study.Store { return ledgerStore{l} }

type ledgerStore struct{ l *Ledger }

func (s ledgerStore) Load() (*study.State, error) {
	g, err := s.l.Genesis()
	if errors.Is(err, ErrEmpty) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := &study.State{Version: study.StateVersion, Genesis: *g}
	rounds, err := s.l.Rounds()
	if err != nil {
		return nil, err
	}
	for _, r := range rounds {
		st.Events = append(st.Events, r.Event)
		st.Mechanisms = append(st.Mechanisms, r.Mechanism)
	}
	st.Model = g.Model
	if len(rounds) > 0 {
		if st.Model, err = s.l.Model(rounds[len(rounds)-1].Round); err != nil {
			return nil, err
		}
	}
	if st.Participation, err = s.l.Participation(); err != nil {
		return nil, err
	}
	reason, at, err := s.l.Finished()
	if err != nil {
		return nil, err
	}
	if reason != "" {
		st.Finished, st.FinishedAt = reason, &at
	}
	t0, err := s.l.ScheduleStart()
	if err != nil {
		return nil, err
	}
	if !t0.IsZero() {
		st.ScheduleStart = &t0
	}
	last, err := s.l.LastReleased()
	if err != nil {
		return nil, err
	}
	last = min(last, len(rounds))
	st.Released = &last
	if st.Rereleased, err = s.l.Rereleased(); err != nil {
		return nil, err
	}
	if st.TopUps, err = s.l.TopUps(); err != nil {
		return nil, err
	}
	return st, nil
}

// TopUp implements study.TopUpRecorder.
func (s ledgerStore) TopUp(t protocol.TopUp) error { return s.l.TopUp(t) }

// Released implements study.ReleaseRecorder.
func (s ledgerStore) Released(round int, at time.Time, rereleased bool) error {
	return s.l.Release(round, at, rereleased)
}

func (s ledgerStore) Init(g *study.Genesis) error { return s.l.Init(*g) }

func (s ledgerStore) Commit(c *study.Commit) error {
	ev := c.Event
	r := &Round{Event: ev, Mechanism: c.Mechanism, Committed: c.Committed, Model: c.Model}
	p := c.Participation
	err := s.l.Commit(r, &p)
	if errors.Is(err, ErrOutOfOrder) || errors.Is(err, ErrFinished) {
		// A repeat of a recorded round is a no-op (see study.Store).
		rounds, rerr := s.l.Rounds()
		if rerr == nil && ev.Round >= 1 && ev.Round <= len(rounds) {
			if rounds[ev.Round-1].ModelSHA256 == protocol.HashHex(c.Model) {
				return nil
			}
			return fmt.Errorf("%w: round %d is already committed with another model", study.ErrStoreOutOfOrder, ev.Round)
		}
	}
	return err
}

func (s ledgerStore) Finish(reason string, at time.Time) error { return s.l.Finish(reason, at) }

func (s ledgerStore) SetScheduleStart(t0 time.Time) error { return s.l.SetScheduleStart(t0) }

// Close closes the ledger.
func (s ledgerStore) Close() error { return s.l.Close() }
