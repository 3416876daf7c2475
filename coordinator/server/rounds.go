package server

import (
	"context"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Run drives the study's rounds until it finishes (returns nil after the
// finished broadcast) or ctx ends (returns ctx.Err(); an open round is
// abandoned uncommitted, a committed one is released by the next start).
// A ledger failure stops it with that error.
//
// The rounds themselves are study.Coordinator.Tick's: a fixed public
// schedule from t₀, the moment the study file's quorum of LHAs is first
// online (recorded in the ledger); round k opens at the start of its
// slot, takes updates until L − slack later, is aggregated, noised and
// committed, and is released at the slot's end. Run calls Tick at the
// times it asks for, and again whenever an LHA connects or leaves (which
// only ever decides WHEN the schedule starts, never WHO is sampled).
func (s *Server) Run(ctx context.Context) error {
	for {
		next, err := s.co.Tick(time.Now())
		if err != nil {
			s.co.Stop()
			return err
		}
		if next.Finished {
			return nil
		}
		if err := s.sleep(ctx, next.At); err != nil {
			s.co.Stop()
			return err
		}
	}
}

// sleep waits until t (zero: no time limit) or an LHA connects or leaves,
// or ctx ends.
func (s *Server) sleep(ctx context.Context, t time.Time) error {
	var timeout <-chan time.Time
	if !t.IsZero() {
		d := time.Until(t)
		if d <= 0 {
			return ctx.Err()
		}
		tm := time.NewTimer(d)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		return nil
	case <-s.wake:
		return nil
	}
}

// transport is the study.Transport of a Server: its websocket connections.
type transport struct{ s *Server }

func (t transport) Send(lha int, k protocol.Kind, b []byte) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if c := t.s.conns[lha]; c != nil {
		t.s.send(c, k, b)
	}
}

func (t transport) Broadcast(k protocol.Kind, b []byte) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	for _, c := range t.s.conns {
		t.s.send(c, k, b)
	}
}

func (t transport) Drop(lha int, reason string) {
	t.s.mu.Lock()
	c := t.s.conns[lha]
	t.s.mu.Unlock()
	if c == nil {
		return
	}
	go func() {
		time.Sleep(50 * time.Millisecond) // let the writer flush the error
		c.close(websocket.StatusPolicyViolation, reason)
	}()
}

func (t transport) Online(lha int) bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.s.conns[lha] != nil
}

func (t transport) Connected() int {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return len(t.s.conns)
}
