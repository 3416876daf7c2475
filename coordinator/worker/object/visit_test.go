package object

import (
	"errors"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A forecast-only visit (client --forecast) with the join token of an LHA
// whose client is connected gets the welcome and the latest model and is
// closed; the live connection is not replaced, stays online and ready, and
// gets the next round's round_start. Failed visits count towards the
// address's limit like any handshake.
func TestForecastVisitKeepsTheLiveConnection(t *testing.T) {
	o, _, sec := campaignAfterRound1(t) // round 1 released
	before := o.AdminStatus()

	now := t0.Add(30 * time.Second)
	fx, err := o.Connect(50, protocol.ForecastSubprotocols(sec.LHAs[0]), "203.0.113.7", now)
	if err != nil {
		t.Fatal(err)
	}
	ms := decode(t, fx, 50)
	if len(ms) != 2 || ms[0].Type() != protocol.TypeWelcome || ms[1].Type() != protocol.TypeRoundResult || ms[1].(*protocol.RoundResult).Event.Round != 1 {
		t.Fatalf("the visit got %+v, want the welcome and round 1's result", ms)
	}
	if len(fx.Closes) != 1 || fx.Closes[0] != (Close{Conn: 50, Code: CloseNormal, Reason: "forecast visit answered"}) {
		t.Errorf("closes %+v, want only the visit's, normal", fx.Closes)
	}
	if len(decode(t, fx, 1)) != 0 || closed(fx, 1) || fx.State != nil {
		t.Errorf("the visit touched the live connection or the state: %+v", fx)
	}
	if _, ok := o.conns[50]; ok {
		t.Error("the visit's connection was registered")
	}
	if after := o.AdminStatus(); after.Online != before.Online || after.Ready != before.Ready || !after.LHAs[0].Online {
		t.Errorf("after the visit: online %d ready %d, before %d %d", after.Online, after.Ready, before.Online, before.Ready)
	}
	if fx := o.Message(50, false, readyFrame(t), now); len(fx.Sends) != 0 || o.AdminStatus().Ready != before.Ready {
		t.Errorf("a ready frame on the visit was taken: %+v", fx)
	}
	var started bool
	for at := now; !started; {
		fx := o.Alarm(at)
		for _, m := range decode(t, fx, 1) {
			rs, ok := m.(*protocol.RoundStart)
			started = started || ok && rs.Round == 2
		}
		if fx.Alarm.IsZero() || at.After(t0.Add(2*time.Minute)) {
			break
		}
		at = fx.Alarm
	}
	if !started {
		t.Error("the live connection got no round_start of round 2 after the visit")
	}

	// A visit with a guessed token is refused and counted.
	guess := protocol.ForecastSubprotocols("guess")
	for i := range study.DefaultMaxFailedAuth {
		fx, err := o.Connect(100+i, guess, "203.0.113.9", now)
		if err != nil || code(decode(t, fx, 100+i)[0]) != protocol.CodeUnauthorized || !closed(fx, 100+i) {
			t.Fatalf("guessed visit %d: %+v, %v", i+1, fx, err)
		}
	}
	if _, err := o.Connect(200, guess, "203.0.113.9", now); !errors.Is(err, ErrTooManyFailures) {
		t.Errorf("a guessed visit past the limit: %v, want ErrTooManyFailures", err)
	}
}
