package study

import (
	"errors"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// ErrHelperPending is returned by a HelperFunc that has asked the helper
// and waits for its answer (an asynchronous driver: the Durable Object).
// The Coordinator keeps the round closed and calls the HelperFunc again
// at each Tick until the round's release time; a round still without the
// helper's answer then is abandoned (nothing released, no budget spent).
var ErrHelperPending = errors.New("study: the helper's answer is awaited")

// HelperFunc gets the helper's aggregate share of round: the driver posts
// the reports' IDs and sealed seeds with the study value to the helper
// (coordinator/helper.Forwarder in serve). It returns the answer and the
// reports it was computed over: those given, or the set forwarded for the
// round before (a reopened round: see helper.Forwarder). An error (helper
// down, unreachable or refusing) abandons the round.
type HelperFunc func(st *protocol.Study, round int, reports []*secagg.Report) (*protocol.HelperResponse, []*secagg.Report, error)

// complete commits the round held by the engine: Complete, or with a
// helper its share and CompleteSecure. why is set (and err nil) when a
// helper study's round was abandoned because the helper's share could
// not be had or used: nothing was released and no budget was spent.
func (c *Coordinator) complete(r *Round, t time.Time) (res *Result, why string, err error) {
	now := func() time.Time { return c.now(t) }
	if !c.eng.Secure() {
		res, err = c.eng.CompleteAt(now)
		return res, "", err
	}
	resp, set, err := c.helper(&c.eng.Study, r.ID, c.eng.Reports())
	if errors.Is(err, ErrHelperPending) {
		return nil, "", err
	}
	if err != nil {
		c.eng.Abandon()
		c.log.Warn("round abandoned: no share from the helper; nothing released, no budget spent", "round", r.ID, "err", err)
		return nil, "the second server (the helper) did not answer", nil
	}
	res, err = c.eng.CompleteSecure(resp, set, now)
	if errors.Is(err, ErrHelper) {
		c.log.Warn("round abandoned: the helper's share does not fit; nothing released, no budget spent", "round", r.ID, "err", err)
		return nil, "the second server's (the helper's) answer did not fit this round", nil
	}
	return res, "", err
}

// helperLate abandons round r, whose helper has not answered by the
// round's release time (emu held): nothing is released, no budget is
// spent.
func (c *Coordinator) helperLate(r *Round) *release {
	c.eng.Abandon()
	c.log.Warn("round abandoned: the helper did not answer by the release time; nothing released, no budget spent", "round", r.ID)
	return &release{abandoned: "the second server (the helper) did not answer in time", verdicts: c.got.verdicts}
}

// abandoned tells every connected LHA, in plain words, that round r was
// abandoned, with the verdicts of its frames (fmu taken here).
func (c *Coordinator) abandoned(r *Round, p *release, t time.Time) {
	msg := fmt.Sprintf("Round %d was abandoned: %s. Nothing was released and no privacy budget was spent; "+
		"the next round starts on schedule.", r.ID, p.abandoned)
	c.fmu.Lock()
	defer c.fmu.Unlock()
	for _, lha := range sortedKeys(p.verdicts) {
		if !c.tr.Online(lha) {
			continue
		}
		for _, v := range p.verdicts[lha] {
			c.tr.Send(lha, protocol.Text, encodeErr(v.code, v.round, v.msg))
		}
	}
	c.tr.Broadcast(protocol.Text, encodeErr(protocol.CodeRoundAbandoned, r.ID, msg))
}

// submitReport hands LHA lha's report rep to the engine (emu held); rep
// is nil when the frame was another message.
func (c *Coordinator) submitReport(lha int, rep *protocol.Report) (v verdict, taken bool) {
	switch {
	case rep == nil:
		return verdict{protocol.CodeBadFrame, 0, "this study has a helper: an LHA answers every round with a report"}, false
	case !c.eng.Secure():
		return verdict{protocol.CodeBadFrame, rep.Round, "this study has no helper: an LHA answers with an update"}, false
	}
	err := c.eng.SubmitReport(lha, rep.Round, rep.Body)
	switch {
	case err == nil:
		return verdict{}, true
	case errors.Is(err, ErrFinished):
		return verdict{protocol.CodeFinished, rep.Round, err.Error()}, false
	case errors.Is(err, ErrStaleRound):
		return verdict{protocol.CodeStaleRound, rep.Round, err.Error()}, false
	case errors.Is(err, ErrDuplicate):
		return verdict{protocol.CodeDuplicateUpdate, rep.Round, err.Error()}, false
	}
	return verdict{protocol.CodeBadUpdate, rep.Round, err.Error()}, false
}
