package object

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// campaignStudy is a continuing study of 2 LHAs at ε = 4: 2 campaigns of
// one round, a minute apart (round length 10 s).
func campaignStudy(t *testing.T) ([]byte, *study.Secrets) {
	t.Helper()
	return createStudy(t, []string{"A", "B"}, protocol.Settings{Epsilon: 4, Rounds: 2, Campaigns: 2, Every: study.Duration(time.Minute),
		ExpectedClients: 2, Hidden: []int{4}, RoundLength: study.Duration(10 * time.Second), RoundSlack: study.Duration(time.Second)})
}

// campaignAfterRound1 is campaignStudy's object with both LHAs joined and
// campaign 1's round released.
func campaignAfterRound1(t *testing.T) (*Object, []byte, *study.Secrets) {
	t.Helper()
	raw, sec := campaignStudy(t)
	o, _, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range sec.LHAs {
		join(t, o, i+1, tok, t0)
	}
	o.Alarm(t0.Add(9 * time.Second))
	o.Alarm(t0.Add(10 * time.Second))
	return o, raw, sec
}

func reply(t *testing.T, fx *Effects, status int, want string) {
	t.Helper()
	if fx.Reply == nil {
		t.Fatalf("no reply (want %d %q)", status, want)
	}
	if fx.Reply.Status != status || !strings.Contains(string(fx.Reply.Body), want) {
		t.Fatalf("reply %d %s, want %d with %q", fx.Reply.Status, fx.Reply.Body, status, want)
	}
}

// A top-up on the worker (POST /api/admin/topup): refused for bad bodies,
// a budget not above the current one, and while a round is open, with
// nothing stored and the alarm kept; between campaigns it is stored in the
// state before the answer, every LHA is closed to reconnect, the welcome
// of the reconnection carries it, and it survives a restart.
func TestTopUpOnTheWorker(t *testing.T) {
	o, raw, sec := campaignAfterRound1(t) // campaign 1's round released
	gap := t0.Add(30 * time.Second)
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`not json`, http.StatusBadRequest, `{\"epsilon\": 3, \"campaigns\": 1}`},
		{`{}`, http.StatusBadRequest, `\"epsilon\" (the new lifetime budget, above the current 4) is required`},
		{`{"epsilon": 3}`, http.StatusConflict, "above the current 4"},
		{`{"epsilon": 6, "campaigns": -1}`, http.StatusConflict, "-1 added campaigns"},
	} {
		fx := o.TopUp([]byte(c.body), gap)
		reply(t, fx, c.status, c.want)
		if fx.State != nil || len(fx.Closes) != 0 || !fx.Alarm.Equal(t0.Add(time.Minute)) {
			t.Errorf("refused top-up %s: state %v, closes %v, alarm %v", c.body, fx.State != nil, fx.Closes, fx.Alarm.Sub(t0))
		}
	}

	fx := o.TopUp([]byte(`{"epsilon": 6, "campaigns": 1}`), gap)
	reply(t, fx, http.StatusOK, "lifetime budget ε 4 → 6")
	var r TopUpReply
	if err := json.Unmarshal(fx.Reply.Body, &r); err != nil || r.TopUp.Number != 1 || r.TopUp.Epsilon != 6 || r.Rounds != 3 {
		t.Fatalf("top-up reply %+v (%v)", r, err)
	}
	// The planner's reading of the added rounds, as 'fedcast study topup'
	// prints it: 2 LHAs are far too few.
	if r.Planner == nil || r.Planner.Parameters.NoiseMultiplier != r.TopUp.NoiseMultiplier || r.Planner.Expected < 1 ||
		!strings.Contains(r.Message, "The planner's table expects relative WIS") ||
		!strings.Contains(r.Message, "with 2 LHAs at ε = 6 the shared model is expected to be worse than no change") {
		t.Errorf("top-up reply's planner %+v, message %q", r.Planner, r.Message)
	}
	if fx.State == nil {
		t.Fatal("the top-up was not stored before the answer")
	}
	for c := 1; c <= 2; c++ {
		if !closed(fx, c) || fx.Closes[c-1].Code != CloseServiceRestart {
			t.Errorf("LHA connection %d not closed to reconnect: %+v", c, fx.Closes)
		}
	}
	if st := o.Status(); st.EpsilonBudget != 6 || st.Rounds != 3 || st.Round != 1 || st.State == protocol.StateFinished {
		t.Errorf("status after the top-up: budget %g, %d of %d rounds, %s", st.EpsilonBudget, st.Round, st.Rounds, st.State)
	}
	// The reconnection's welcome announces the top-up to the LHA.
	w := connect(t, o, 11, sec.LHAs[0], gap)
	ms := decode(t, w, 11)
	if len(ms) == 0 {
		t.Fatal("no welcome after the top-up")
	}
	if wel, ok := ms[0].(*protocol.Welcome); !ok || len(wel.Study.TopUps) != 1 || wel.Study.Epsilon != 6 || wel.Study.Rounds != 3 {
		t.Fatalf("welcome after the top-up: %+v", ms[0])
	}
	// A restart keeps it.
	o2, _, err := New(raw, fx.State, nil, gap)
	if err != nil {
		t.Fatal(err)
	}
	if st := o2.Status(); st.EpsilonBudget != 6 || st.Rounds != 3 {
		t.Errorf("after a restart: budget %g, %d rounds", st.EpsilonBudget, st.Rounds)
	}
	// Not while a round is open.
	o.Message(11, false, readyFrame(t), gap)
	join(t, o, 12, sec.LHAs[1], gap)
	o.Alarm(t0.Add(time.Minute))
	if _, open := o.co.Admin(); open == nil {
		t.Fatal("round 2 did not open at campaign 2's start")
	}
	fx = o.TopUp([]byte(`{"epsilon": 8}`), t0.Add(61*time.Second))
	reply(t, fx, http.StatusConflict, "round 2 is open: top up between rounds")
	if fx.State != nil || len(fx.Closes) != 0 {
		t.Errorf("a top-up refused in an open round changed something: %+v", fx)
	}
}
