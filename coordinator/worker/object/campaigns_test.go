package object

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// A continuing study on the worker: 2 campaigns of one round, a minute
// apart. Round 1 is released at its slot's end, the alarm then waits for
// campaign 2 (nothing sent between); after a restart in the gap round 2
// still opens at campaign 2's start, and the study ends with its release.
func TestCampaignsOnTheWorker(t *testing.T) {
	raw, sec := campaignStudy(t)
	o, fx, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	stored := fx.State
	keep := func(fx *Effects) *Effects {
		if fx.State != nil {
			stored = fx.State
		}
		return fx
	}
	for i, tok := range sec.LHAs {
		keep(connect(t, o, i+1, tok, t0))
		keep(o.Message(i+1, false, readyFrame(t), t0))
	}
	keep(o.Alarm(t0.Add(9 * time.Second)))
	fx = keep(o.Alarm(t0.Add(10 * time.Second)))
	if ms := decode(t, fx, 1); len(ms) == 0 || ms[0].Type() != protocol.TypeRoundResult {
		t.Fatalf("campaign 1's release: %+v", ms)
	}
	if !fx.Alarm.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after campaign 1 the alarm is at %v, want campaign 2's start", fx.Alarm.Sub(t0))
	}
	if rr := decode(t, fx, 1)[0].(*protocol.RoundResult); rr.Schedule == nil || rr.Schedule.Opens == nil || !rr.Schedule.Opens.Equal(t0.Add(time.Minute)) {
		t.Errorf("the release does not announce campaign 2's start: %+v", rr.Schedule)
	}
	// The Durable Object is evicted in the gap and restarted.
	now := t0.Add(30 * time.Second)
	o2, _, err := New(raw, stored, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range sec.LHAs {
		connect(t, o2, i+11, tok, now)
		o2.Message(i+11, false, readyFrame(t), now)
	}
	var opened time.Time
	at := now
	for range 20 {
		fx := o2.Alarm(at)
		for _, m := range decode(t, fx, 11) {
			if rs, ok := m.(*protocol.RoundStart); ok && rs.Round == 2 {
				opened = at
			}
		}
		if fx.Alarm.IsZero() || !opened.IsZero() {
			break
		}
		at = fx.Alarm
	}
	if !opened.Equal(t0.Add(time.Minute)) {
		t.Fatalf("round 2 opened at %v, want campaign 2's start (1m0s)", opened.Sub(t0))
	}
	o2.Alarm(t0.Add(69 * time.Second))
	fx = o2.Alarm(t0.Add(70 * time.Second))
	var finished bool
	for _, m := range decode(t, fx, 11) {
		finished = finished || m.Type() == protocol.TypeFinished
	}
	if !finished || o2.Status().State != protocol.StateFinished {
		t.Errorf("after the last campaign: finished %v, state %s", finished, o2.Status().State)
	}
}
