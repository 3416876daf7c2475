package study

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// collected is what a closed window left for its round's commit: the
// answers to its frames, the count of frames that were not updates, and
// when the aggregation started.
type collected struct {
	verdicts map[int][]verdict
	dummies  int // answers that were not updates (admin log only)
	start    time.Time
}

// collect decodes the window's frames and hands the updates to the engine
// in LHA order (emu held). Nothing is sent: the release does that at the
// slot's end.
func (c *Coordinator) collect(w *window, t time.Time) *collected {
	verdicts := map[int][]verdict{}
	dummies := 0
	start := c.now(t)
	if w != nil {
		lhas := make([]int, 0, len(w.frames))
		for lha := range w.frames {
			lhas = append(lhas, lha)
		}
		slices.Sort(lhas)
		for _, lha := range lhas {
			switch v, taken := c.submit(lha, w.round, w.frames[lha]); {
			case v.code != 0:
				verdicts[lha] = append(verdicts[lha], v)
			case taken:
				if c.hooks.Accepted != nil {
					c.hooks.Accepted()
				}
			default:
				dummies++
			}
			w.frames[lha] = nil
		}
		for lha, n := range w.extra {
			// One answer for all further frames: a burst of answers must
			// not overflow the sender's outbox.
			verdicts[lha] = append(verdicts[lha], verdict{protocol.CodeDuplicateUpdate, w.round,
				fmt.Sprintf("%d more frame(s) in round %d ignored: only the first frame of a round is read", n, w.round)})
		}
	}
	return &collected{verdicts: verdicts, dummies: dummies, start: start}
}

// commitRound completes round r from what its window left (store
// commit). With a helper that answers asynchronously it returns
// ErrHelperPending until the helper's share is there: the Coordinator
// asks again at its next Tick.
func (c *Coordinator) commitRound(r *Round, got *collected, t time.Time) (*release, error) {
	verdicts, dummies, start := got.verdicts, got.dummies, got.start
	res, why, err := c.complete(r, t)
	if err != nil {
		return nil, err
	}
	if why != "" { // a helper study's round without the helper's share
		return &release{abandoned: why, verdicts: verdicts}, nil
	}
	took := c.now(t).Sub(start)
	if c.hooks.Committed != nil {
		c.hooks.Committed(res.Event.Round, took)
	}
	if c.hooks.Rejected != nil {
		for _, vs := range verdicts {
			for _, v := range vs {
				c.hooks.Rejected(v.code)
			}
		}
	}
	c.log.Info("round committed", "round", res.Event.Round, "q", res.Event.SampleRate,
		"c", res.Event.NoiseMultiplier, "epsilon", res.Event.Epsilon, "delta", res.Event.Delta,
		"sampled", len(r.Sampled), "received", r.Received, "rejected", r.Rejected, "not_counted", dummies,
		"model_sha256", res.Event.ModelSHA256, "took", took.Round(time.Millisecond))
	return &release{res: res, verdicts: verdicts}, nil
}

// commitTick commits the round whose window has closed (emu held): with
// the helper's share when it has one, otherwise waiting for it
// (ErrHelperPending) until the round's release time, then abandoning it.
func (c *Coordinator) commitTick(t time.Time) (Next, error) {
	r := c.round
	p, err := c.commitRound(r, c.got, t)
	if errors.Is(err, ErrHelperPending) {
		if by := c.closeAt.Add(c.slack); t.Before(by) {
			return Next{At: by}, nil
		}
		p, err = c.helperLate(r), nil
	}
	if err != nil {
		c.log.Error("round not committed: the study stops", "round", r.ID, "err", err)
		c.phase, c.err = driveBroken, err
		return Next{}, err
	}
	c.got = nil
	if p.abandoned != "" {
		c.abandoned(r, p, t)
		c.round = nil
		// The round is tried again at the next slot its campaign may use.
		from := c.opened.Add(c.length)
		if now := c.now(t); now.After(from) {
			from = now
		}
		c.next = c.openingAt(r.ID, from)
		c.announceNext()
		c.phase = driveSlot
		return Next{At: c.next}, nil
	}
	if c.hooks.AfterCommit != nil {
		c.hooks.AfterCommit(p.res, r.Received)
	}
	c.round, c.pending = nil, p
	c.scheduleRelease(r.ID, c.now(t))
	c.phase = driveSlot
	// A commit ends the call: the release comes from a later Tick,
	// so a driver that persists its store after each call (a
	// Durable Object) has the commit durable before the release
	// even when the release is already due.
	return Next{At: c.releaseAt}, nil
}

// submit decodes one buffered frame of LHA lha in the window of round and
// hands it to the engine (emu held). taken: the update entered the sum.
// v is the answer to a frame that broke the rules (code 0: no answer).
//
// A dummy of the round and an update of an LHA that was not picked get
// no answer, like a taken update: the answers, and their moments, are
// the same whether a frame was counted or not, so they tell an observer
// nothing about who was picked. A dummy of another round is stale, as
// an update of another round is.
func (c *Coordinator) submit(lha, round int, b []byte) (v verdict, taken bool) {
	if len(b) == protocol.DummyHead { // a dummy's head (see Frame)
		return dummyVerdict(int(binary.LittleEndian.Uint32(b[4:])), round), false
	}
	m, err := protocol.Decode(protocol.Binary, b)
	if err != nil {
		// A frame refused while decoding (NaN or ±Inf weights, a length
		// that does not match its header, …) counts as a rejected update
		// of round, like one the engine refuses, and its answer names the
		// round.
		c.eng.Refused(lha, round)
		msg := fmt.Sprintf("round %d: update refused: %v", round, err)
		switch {
		case errors.Is(err, protocol.ErrNotFinite):
			return verdict{protocol.CodeBadUpdate, round, msg}, false
		case errors.Is(err, protocol.ErrVersion):
			return verdict{protocol.CodeVersion, round, msg}, false
		case errors.Is(err, protocol.ErrTooLarge):
			return verdict{protocol.CodeTooLarge, round, msg}, false
		}
		return verdict{protocol.CodeBadFrame, round, msg}, false
	}
	if rep, ok := m.(*protocol.Report); ok || c.eng.Secure() {
		return c.submitReport(lha, rep)
	}
	u, isUpdate := m.(*protocol.Update)
	if !isUpdate {
		return verdict{protocol.CodeBadFrame, 0, fmt.Sprintf("a client may not send %s", m.Type())}, false
	}
	if u.Dummy {
		return dummyVerdict(u.Round, round), false
	}
	err = c.eng.Submit(lha, u.Round, u.Weights)
	switch {
	case err == nil:
		return verdict{}, true
	case errors.Is(err, ErrNotSampled):
		return verdict{}, false // not summed, not answered (see above)
	case errors.Is(err, ErrFinished):
		return verdict{protocol.CodeFinished, u.Round, err.Error()}, false
	case errors.Is(err, ErrStaleRound):
		return verdict{protocol.CodeStaleRound, u.Round, err.Error()}, false
	case errors.Is(err, ErrDuplicate):
		return verdict{protocol.CodeDuplicateUpdate, u.Round, err.Error()}, false
	case errors.Is(err, fl.ErrUpdateLength), errors.Is(err, fl.ErrNotFinite):
		return verdict{protocol.CodeBadUpdate, u.Round, fmt.Sprintf("round %d: update refused: %v", u.Round, err)}, false
	}
	return verdict{protocol.CodeInternal, u.Round, err.Error()}, false
}

// dummyVerdict answers a dummy for round r in the window of round: none,
// or stale_round, in the engine's words for a stale update (the same
// bytes as the answer to a stale real update).
func dummyVerdict(r, round int) verdict {
	if r != round {
		return verdict{protocol.CodeStaleRound, r, fmt.Errorf("%w: update for round %d", ErrStaleRound, r).Error()}
	}
	return verdict{}
}
