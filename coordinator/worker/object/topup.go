package object

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/fedcast/fedcast/coordinator/plan"
	"github.com/fedcast/fedcast/shared/protocol"
)

// CloseServiceRestart is the websocket close code the object sends every
// LHA after a top-up: the LHA reconnects and its next welcome carries the
// top-up, which its own limit may refuse (shared/session).
const CloseServiceRestart = 1012

// Reply is the answer to the admin request that made a call (POST
// /api/admin/topup): an HTTP status and a JSON body, sent by the Durable
// Object after the call's state is durable.
type Reply struct {
	Status int
	Body   []byte
}

// TopUpRequest is the JSON body of the admin's POST /api/admin/topup, the
// Worker's 'fedcast study topup': raise the lifetime budget to Epsilon,
// adding Campaigns campaigns (0: one) after the planned ones.
type TopUpRequest struct {
	Epsilon   float64 `json:"epsilon"`
	Campaigns int     `json:"campaigns,omitempty"`
}

// TopUpReply is the body of a top-up's 200 answer.
type TopUpReply struct {
	TopUp   protocol.TopUp `json:"top_up"`
	Rounds  int            `json:"rounds"`
	Message string         `json:"message"`
	// Planner is what the planner's table expects of the added rounds'
	// noise (docs/backtest.md, "fedcast plan"), as 'fedcast study topup'
	// prints it; absent for a study the table does not speak to.
	Planner *plan.Plan `json:"planner,omitempty"`
}

// ReplyError is the body of a refused admin request.
type ReplyError struct {
	Error string `json:"error"`
}

// ErrorReply is a refused admin request's Reply.
func ErrorReply(status int, format string, a ...any) *Reply {
	b, _ := json.Marshal(ReplyError{Error: fmt.Sprintf(format, a...)})
	return &Reply{Status: status, Body: append(b, '\n')}
}

// Answer answers an admin request with r and changes nothing (the
// effects still carry the next alarm).
func (o *Object) Answer(r *Reply) *Effects { return o.call(func() { o.fx.Reply = r }) }

// TopUp raises the study's lifetime budget as 'fedcast study topup' does
// in serve's ledger (study.Engine.TopUp, with the same rules: between
// rounds only; never for a PLD, cyclic or helper study; the added rounds'
// noise calibrated under the RDP filter). The top-up is recorded in the
// state the call stores before anything goes out. Every connection is
// then closed with CloseServiceRestart and the study reopens on the new
// state, as after a restart: each LHA receives the top-up in the welcome
// of its reconnection and trains in the added rounds only if its own
// limit allows. body is the request's JSON (TopUpRequest); the admin token
// is checked by the caller. The answer is in the effects' Reply.
func (o *Object) TopUp(body []byte, now time.Time) *Effects {
	return o.call(func() {
		var req TopUpRequest
		if err := json.Unmarshal(body, &req); err != nil {
			o.fx.Reply = ErrorReply(http.StatusBadRequest, `the body must be JSON like {"epsilon": 3, "campaigns": 1}: %v`, err)
			return
		}
		if req.Campaigns == 0 {
			req.Campaigns = 1
		}
		switch {
		case o.broken != nil:
			o.fx.Reply = ErrorReply(http.StatusServiceUnavailable, "the study has stopped: %v", o.broken)
			return
		case req.Epsilon == 0 || math.IsNaN(req.Epsilon):
			o.fx.Reply = ErrorReply(http.StatusBadRequest, `"epsilon" (the new lifetime budget, above the current %g) is required`, o.eng.Study.Epsilon)
			return
		case o.eng.Current() != nil:
			o.fx.Reply = ErrorReply(http.StatusConflict, "round %d is open: top up between rounds", o.eng.Current().ID)
			return
		}
		before := o.eng.Study
		t, err := o.eng.TopUp(req.Epsilon, req.Campaigns, now)
		if errors.Is(err, protocol.ErrTopUp) {
			o.fx.Reply = ErrorReply(http.StatusConflict, "%v", err)
			return
		} else if err != nil {
			o.fx.Reply = ErrorReply(http.StatusInternalServerError, "%v", err)
			return
		}
		msg := fmt.Sprintf("Top-up %d recorded: lifetime budget ε %g → %g; %d campaign(s) added (rounds %d–%d, noise multiplier %.6g). Every LHA reconnects and trains in the added rounds only if its own ε limit allows.",
			t.Number, t.FromEpsilon, t.Epsilon, t.Campaigns, before.Rounds+1, before.Rounds+t.Rounds, t.NoiseMultiplier)
		o.fx.logf("%s", msg)
		for c := range o.conns {
			o.fx.Closes = append(o.fx.Closes, Close{Conn: c, Code: CloseServiceRestart, Reason: "study topped up: reconnect"})
		}
		o.conns, o.lhas = map[int]*conn{}, map[int]int{}
		if err := o.open(o.raw, now); err != nil {
			o.broken = err
			o.fx.logf("the study stops: cannot reopen after the top-up: %v", err)
			o.fx.Reply = ErrorReply(http.StatusInternalServerError, "the top-up is recorded, but the study cannot reopen: %v", err)
			return
		}
		pl := topUpPlan(o.eng.Study, t)
		if pl != nil {
			msg += " " + pl.Sentence()
		}
		b, _ := json.Marshal(TopUpReply{TopUp: t, Rounds: o.eng.Study.Rounds, Message: msg, Planner: pl})
		o.fx.Reply = &Reply{Status: http.StatusOK, Body: append(b, '\n')}
	})
}

// topUpPlan reads the planner's table at the added rounds' noise (nil when
// the table does not speak to the study or cannot be read: the top-up
// stands either way).
func topUpPlan(s protocol.Study, t protocol.TopUp) *plan.Plan {
	if !plan.Speaks(s.Settings) {
		return nil
	}
	tab, err := plan.Embedded()
	if err != nil {
		return nil
	}
	p, err := tab.AssessStudy(s.Settings, s.Clients, t.Epsilon, t.NoiseMultiplier)
	if err != nil {
		return nil
	}
	return &p
}
