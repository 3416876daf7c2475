package study

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// The Coordinator's side facing the LHAs' connections: the frames of a
// round's opening, the binary frames an LHA sends (buffered for the open
// window), text frames, and the welcome of a joining LHA.

// roundStarts encodes round's round_start for an unpicked [0] and a
// picked [1] LHA: frames of the same length.
func roundStarts(round int, left time.Duration, weights []float64) (starts [2][]byte, err error) {
	for i, picked := range []bool{false, true} {
		if _, starts[i], err = protocol.Encode(&protocol.RoundStart{Round: round, TimeLeft: left, Picked: picked, Weights: weights}); err != nil {
			return [2][]byte{}, err
		}
	}
	return starts, nil
}

// startsFor reports whether LHA lha gets window w's round_start: every
// LHA does, except in a cyclic study, where only the LHA whose turn it is
// by the public timetable trains (who that is is public: nothing to
// hide, and the others have no answer to give).
func (c *Coordinator) startsFor(w *window, lha int) bool {
	return w.sampled[lha] || !c.eng.strategy.Sequential()
}

// closeWindow ends the open round's window and returns it (nil if none).
func (c *Coordinator) closeWindow() *window {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	w := c.window
	c.window = nil
	return w
}

// Frame takes a binary frame b of LHA lha that arrived at t. It buffers it
// for the window that is open (only the first frame of an LHA per window
// is kept; the others are counted and answered duplicate_update), or
// counts it as late when no window is open (answered stale_round at the
// next release). Nothing is decoded here: a frame's content cannot change
// how long its reply takes, and updates of the open round are held in
// memory only.
//
// reply receives the acknowledgement, the same for every binary frame, at
// once (its content is checked when the window closes). It is called under
// the lock that a window's close and a release take the buffered frames
// with: an acknowledgement delivered before a release's messages means the
// frame's verdict comes with that release; one after, with the next. So
// reply must queue the frame on lha's connection, in order with the
// Transport's sends to it.
func (c *Coordinator) Frame(lha int, b []byte, t time.Time, reply func(k protocol.Kind, b []byte)) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	reply(protocol.Text, c.ack)
	w := c.window
	switch {
	case w == nil:
		c.late[lha]++
	case w.frames[lha] != nil:
		w.extra[lha]++
	default:
		if _, dummy := protocol.PeekDummy(b); dummy {
			// Only its head is kept (its round): every LHA answers every
			// round, and the window holds the m real updates, not N frames.
			b = b[:protocol.DummyHead]
		}
		w.frames[lha] = bytes.Clone(b)
	}
}

// Buffered returns the number of frames held for the open window.
func (c *Coordinator) Buffered() int {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.window == nil {
		return 0
	}
	return len(c.window.frames)
}

// TextVerdict answers a text frame from an authenticated LHA other than
// ready (see IsReady): LHAs send only ready and binary updates, so every
// other text frame is an error;
// its answer depends on that frame alone.
func TextVerdict(b []byte) (protocol.Code, string) {
	m, err := protocol.Decode(protocol.Text, b)
	switch {
	case errors.Is(err, protocol.ErrVersion):
		return protocol.CodeVersion, err.Error()
	case errors.Is(err, protocol.ErrTooLarge):
		return protocol.CodeTooLarge, err.Error()
	case err != nil:
		return protocol.CodeBadFrame, err.Error()
	}
	if _, ok := m.(*protocol.Hello); ok {
		return protocol.CodeHelloExpected, "hello was already received"
	}
	return protocol.CodeBadFrame, fmt.Sprintf("a client may not send %s", m.Type())
}

// Join returns, for LHA lha authenticated at t, the frames its connection
// starts with: the welcome (the study, the schedule and the log as of the
// last tick), the last released round_result, then the finished message if
// the study has ended. deliver is called with them under the lock a
// release takes, so the driver registers the connection and queues them
// there: the LHA gets every release either in them or after them.
//
// Every connection starts not ready: it gets no round_start and does not
// count towards the quorum until its ready frame (see Ready), which the
// LHA sends once its file is chosen and checked and it has joined.
func (c *Coordinator) Join(lha int, t time.Time, deliver func(msgs []Msg)) error {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.waiting[lha] = true
	msgs, err := c.firstFrames(lha)
	if err != nil {
		return err
	}
	deliver(msgs)
	return nil
}

// Visit returns the frames Join would start LHA lha's connection with,
// for a forecast-only visit (protocol.ForecastOnly): the connection is
// not registered and nothing of the LHA's state changes (its live
// connection stays online and, if it said ready, ready).
func (c *Coordinator) Visit(lha int) ([]Msg, error) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return c.firstFrames(lha)
}

// firstFrames encodes LHA lha's welcome and the frames after it as of the
// last tick. c.fmu held.
func (c *Coordinator) firstFrames(lha int) ([]Msg, error) {
	snap := c.snap
	st := snap.status
	welcome := &protocol.Welcome{Study: c.eng.Study, LHA: c.eng.File.LHAs[lha].Name, State: st.State, Schedule: st.Schedule,
		Log: append([]protocol.Event{}, snap.log...)}
	if c.eng.strategy.Sequential() || c.eng.Secure() {
		welcome.Index = &lha // a cyclic study: which turns are its own; with a helper: its number in report IDs
	}
	_, wb, err := protocol.Encode(welcome)
	if err != nil {
		return nil, err
	}
	msgs := []Msg{{protocol.Text, wb}}
	if snap.lastSent != nil {
		msgs = append(msgs, Msg{protocol.Binary, snap.lastSent})
	}
	if snap.finished != nil {
		msgs = append(msgs, Msg{protocol.Text, snap.finished})
	}
	return msgs, nil
}
