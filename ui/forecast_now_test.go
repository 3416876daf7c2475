package ui

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/vugu/vugu"
)

// pausedSession releases round 1 and then waits, as a continuing study
// between campaigns.
type pausedSession struct {
	fakeSession
	resume chan struct{}
}

func (p *pausedSession) Run(ctx context.Context, d *series.Dataset, obs session.Observer) error {
	obs.Sent(session.Outgoing{Type: "hello", Bytes: 76})
	obs.Result(session.Result{Round: 1, Epsilon: 1, LocalEpsilon: 1})
	select {
	case <-p.resume:
	case <-ctx.Done():
	}
	return ctx.Err()
}

// Between rounds the LHA forecasts this week with the latest model:
// the forecast appears under the guard and nothing is sent.
func TestForecastNowSendsNothing(t *testing.T) {
	csv, err := os.ReadFile("../coordinator/e2e/testdata/lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 1}, Params: 11,
		Settings: protocol.Settings{Name: "t", Epsilon: 3, Delta: 1e-5, Rounds: 2, History: 10, Horizon: 7, Smoothing: "centered",
			TrainFraction: 0.9}}
	model := make([]float64, 11)
	model[9] = 1
	sess := &pausedSession{fakeSession: fakeSession{model: model}, resume: make(chan struct{})}
	defer close(sess.resume)
	env := vugu.NewEventEnvImpl(&sync.RWMutex{}, nil)
	s := &JoinState{Env: env, Link: "x", Connect: func(ctx context.Context, link string) (Session, *protocol.Welcome, error) {
		return sess, &protocol.Welcome{Study: st, LHA: "me", State: protocol.StateRunning}, nil
	}}
	s.Start(context.Background())
	read := func(f func() bool) bool {
		env.RLock()
		defer env.RUnlock()
		return f()
	}
	wait := func(what string, f func() bool) {
		for deadline := time.Now().Add(20 * time.Second); !read(f); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	wait("the welcome", func() bool { return s.Phase != PhaseConnecting })
	s.LoadFile("lha.csv", csv)
	if read(s.CanForecastNow) {
		t.Fatal("a forecast is offered before any model was released")
	}
	env.Lock()
	s.Join(context.Background())
	env.UnlockOnly()
	wait("round 1", func() bool { return s.Round == 1 })
	env.Lock()
	sent := len(s.Sent)
	s.ForecastNow() // as the button's handler
	env.UnlockOnly()
	wait("the forecast", func() bool { return !s.Forecasting && len(s.Forecasts) > 0 })
	env.RLock()
	defer env.RUnlock()
	if len(s.Sent) != sent || s.Phase != PhaseRunning || s.ForecastRound != 1 {
		t.Errorf("sent %d → %d, phase %s, round %d", sent, len(s.Sent), s.Phase, s.ForecastRound)
	}
	if f := s.Forecasts[0]; f.Guard.Method != forecast.MethodNoChange || f.Guard.Origins >= forecast.GuardMinOrigins {
		t.Errorf("guard %+v", f.Guard)
	}
	if w := GuardWords(s.Forecasts); w == "" {
		t.Error("no guard words")
	}
}
