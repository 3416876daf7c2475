package object

import (
	"fmt"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// Fetch asks the Durable Object to POST Body to URL (the helper's
// aggregate path) once the call's state and forwarded set are stored, and
// to hand the answer back with [Object.HelperAnswer] for Round (status 0
// and the error's words when the helper cannot be reached or does not
// answer within Timeout).
type Fetch struct {
	URL     string
	Round   int
	Body    []byte
	Timeout time.Duration
}

// forwarded is the report set forwarded to the helper for a round: the
// first set forwarded for a round is its set for good (see
// coordinator/helper.Forwarder), so a round reopened after the helper's
// answer was lost, or after a restart of the object, forwards it again.
type forwarded struct {
	round int
	hash  [32]byte
	set   []*secagg.Report
	asked bool // a fetch for it is out, not answered yet
}

// helperAnswer is the helper's answer to round, waiting for the
// Coordinator to take it at its next tick.
type helperAnswer struct {
	round int
	resp  *protocol.HelperResponse
	err   error
}

// aggregate is the object's study.HelperFunc. The Worker cannot wait for
// the helper inside a call, so the first call for a round keeps the set
// (Effects.Forwarded, stored before the request leaves), asks the
// Durable Object to post it (Effects.Fetch) and answers
// study.ErrHelperPending; the Coordinator asks again at its next tick,
// which HelperAnswer runs when the helper's answer is in.
func (o *Object) aggregate(st *protocol.Study, round int, reports []*secagg.Report) (*protocol.HelperResponse, []*secagg.Report, error) {
	hash, err := st.Hash()
	if err != nil {
		return nil, nil, err
	}
	if o.fwd == nil || o.fwd.round != round || o.fwd.hash != hash {
		set, ok := study.DecodeForwarded(o.prior, hash, round, st.Params)
		if !ok {
			set = reports
			o.fx.Forwarded = study.EncodeForwarded(hash, round, set)
		}
		o.fwd, o.ans = &forwarded{round: round, hash: hash, set: set}, nil
	}
	if a := o.ans; a != nil && a.round == round {
		o.ans = nil
		return a.resp, o.fwd.set, a.err
	}
	if !o.fwd.asked {
		body, err := study.HelperRequestBody(st, o.file.Helper.LeaderToken, round, o.fwd.set)
		if err != nil {
			return nil, nil, err
		}
		o.fx.Fetch = &Fetch{URL: study.HelperURL(st.Helper.URL), Round: round, Body: body, Timeout: max(time.Duration(st.RoundSlack), 10*time.Second)}
		o.fwd.asked = true
	}
	return nil, nil, study.ErrHelperPending
}

// HelperAnswer hands the helper's HTTP answer to the request of round
// (status 0: no answer, statusText says why) to the study at now. An
// answer for a round not awaited (late, or repeated) changes nothing.
func (o *Object) HelperAnswer(round, status int, statusText string, body []byte, now time.Time) *Effects {
	return o.call(func() {
		if o.fwd == nil || o.fwd.round != round || !o.fwd.asked {
			o.fx.logf("an answer from the helper for round %d, which is not awaited: ignored", round)
			return
		}
		o.fwd.asked = false
		a := &helperAnswer{round: round}
		if status == 0 {
			a.err = fmt.Errorf("%w: the helper at %s cannot be reached (%s)", study.ErrHelperUnavailable, o.file.Helper.URL, statusText)
		} else {
			a.resp, a.err = study.HelperAnswer(&o.eng.Study, round, status, statusText, body)
		}
		o.ans = a
		o.tick(now)
		if o.ans != nil && o.ans.err != nil {
			// Not taken: the round was abandoned already (the answer came
			// after its release time). A failure is not kept for the
			// round's next attempt, which asks again; a share is (it is
			// the helper's share of the same set).
			o.ans = nil
		}
	})
}
