package study

import (
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// pendingStart is the open round's round_start for lha (picked or not,
// see open) if it gets one and has not sent its frame yet (fmu held).
func (c *Coordinator) pendingStart(lha int, t time.Time) []Msg {
	w := c.window
	if w == nil || !c.startsFor(w, lha) || w.frames[lha] != nil {
		return nil
	}
	_, sb, err := protocol.Encode(&protocol.RoundStart{Round: w.round, TimeLeft: max(0, w.closeAt.Sub(t)),
		Picked: w.sampled[lha], Weights: w.weights})
	if err != nil {
		return nil
	}
	return []Msg{{protocol.Binary, sb}}
}

// Ready records that LHA lha, connected, has its file checked and has
// joined (a ready frame, see IsReady). If a round is open and it has not
// answered it, reply gets the round's round_start, picked or not, like
// every ready LHA at the round's opening (under the lock a release takes,
// like Join's deliver). It returns false when
// lha was ready already (a repeated ready changes nothing). A driver then
// ticks the Coordinator: the quorum may be reached.
func (c *Coordinator) Ready(lha int, t time.Time, reply func(k protocol.Kind, b []byte)) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if !c.waiting[lha] {
		return false
	}
	delete(c.waiting, lha)
	if c.snap.finished == nil {
		for _, m := range c.pendingStart(lha, t) {
			reply(m.Kind, m.B)
		}
	}
	return true
}

// IsReady reports whether text frame b is a ready message.
func IsReady(b []byte) bool {
	m, err := protocol.Decode(protocol.Text, b)
	_, ok := m.(*protocol.Ready)
	return err == nil && ok
}

// Counts are the LHAs online and, of them, ready.
type Counts struct{ Online, Ready int }

// Counts returns how many LHAs are online and how many of them are ready
// (the admin's dashboard; the quorum counts Ready).
func (c *Coordinator) Counts() Counts {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	online := c.tr.Connected()
	n := online
	for lha := range c.waiting {
		if c.tr.Online(lha) {
			n--
		}
	}
	return Counts{Online: online, Ready: n}
}

// live reports whether lha is online and ready.
func (c *Coordinator) live(lha int) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return c.liveLocked(lha)
}

func (c *Coordinator) liveLocked(lha int) bool { return !c.waiting[lha] && c.tr.Online(lha) }
