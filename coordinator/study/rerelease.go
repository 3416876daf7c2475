package study

import (
	"errors"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Crash recovery between commit and release. A round is committed to the
// store before it is released (its model sent); a crash in between leaves a
// committed round that no LHA has seen. A Store that records releases (a
// ReleaseRecorder) lets a restarted study tell: that round is then released
// at the first slot of the resumed schedule, exactly like any release (its
// round_result to every connected LHA, the "round released" log line), and
// recorded as a re-release. The model is the committed one, bit for bit:
// nothing is computed or noised again.

// ReleaseRecorder is implemented by a Store that also records releases.
type ReleaseRecorder interface {
	// Released durably records that committed round was released at at;
	// rereleased marks a release made after a restart (the round had been
	// committed before a crash and not released). Recording a round again
	// is a no-op.
	Released(round int, at time.Time, rereleased bool) error
}

// ErrNotReleased is returned by BeginAt while a round committed before a
// restart waits for its release (see ReRelease).
var ErrNotReleased = errors.New("study: the last committed round has not been released yet")

// Released implements ReleaseRecorder.
func (m *MemStore) Released(round int, at time.Time, rereleased bool) error {
	if m.S == nil {
		return ErrStoreEmpty
	}
	return m.S.released(round, rereleased, &m.Changes)
}

func (s *State) released(round int, rereleased bool, changes *int) error {
	if round < 1 || round > len(s.Events) {
		return fmt.Errorf("study: store: release of round %d, but %d rounds are committed", round, len(s.Events))
	}
	if s.Released != nil && *s.Released >= round {
		return nil
	}
	r := round
	s.Released = &r
	if rereleased {
		s.Rereleased = append(s.Rereleased, round)
	}
	*changes++
	return nil
}

// unreleasedIn reports whether st's last committed round was never
// released (only a store that records releases can tell).
func unreleasedIn(st *State) bool {
	return st.Released != nil && *st.Released < len(st.Events)
}

// Unreleased returns the last committed round if it was committed before
// a restart and has not been released since, else nil.
func (e *Engine) Unreleased() *Result {
	if !e.unreleased {
		return nil
	}
	return e.LastResult()
}

// ErrReleaseNotRecorded wraps a store's failure to record a release: the
// round counts as released all the same (a later restart would send the
// same bytes again).
var ErrReleaseNotRecorded = errors.New("study: release not recorded")

// ReRelease marks the round returned by Unreleased as released at at (its
// round_result has been sent, unchanged), recorded as a re-release, so
// that the next round may Begin. Errors as ReleaseAt.
func (e *Engine) ReRelease(at time.Time) error {
	round, err := e.markReleased(true)
	if err != nil {
		return err
	}
	return e.recordRelease(round, at, true)
}

// recordRelease records the release of round in the store, if it records
// releases (ReleaseRecorder).
func (e *Engine) recordRelease(round int, at time.Time, rereleased bool) error {
	rr, ok := e.store.(ReleaseRecorder)
	if !ok {
		return nil
	}
	if err := rr.Released(round, at, rereleased); err != nil {
		return fmt.Errorf("%w: round %d: %w", ErrReleaseNotRecorded, round, err)
	}
	return nil
}

// recoverRelease sets up the release of a round committed before a restart
// and never released (NewCoordinator): it becomes the pending release of
// the first slot, and the public snapshot shows the rounds before it.
func (c *Coordinator) recoverRelease(snap *snapshot, state *string, now time.Time) {
	res := c.eng.Unreleased()
	if res == nil {
		return
	}
	c.pending = &release{res: res, rereleased: true}
	k := res.Event.Round
	if len(snap.log) >= k {
		snap.log = snap.log[:k-1]
	}
	snap.lastSent, snap.finished = nil, nil
	if *state == protocol.StateFinished {
		*state = protocol.StateRunning
	}
	snap.status = c.statusOf(*state, now, nil)
	snap.status.Round, snap.status.EpsilonSpent, snap.status.FinishReason = k-1, 0, ""
	if n := len(snap.log); n > 0 {
		snap.status.EpsilonSpent = snap.log[n-1].Epsilon
	}
	snap.status.EpsilonPublic = c.eng.publicEpsilonAfter(k - 1)
	c.log.Info("round committed before the restart and never released: it is released at the first slot", "round", k,
		"model_sha256", res.Event.ModelSHA256)
}
