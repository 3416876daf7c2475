package session

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestSessionLocalDPSGDAndMRMTL: in a study with MR-MTL and privacy
// "both", the LHA trains with local DP-SGD, its own accountant spends its
// example-level budget step by step, it forecasts with its personal model,
// and once its budget cannot cover another round it sits the round out
// (Skip.Example) and sends nothing.
func TestSessionLocalDPSGDAndMRMTL(t *testing.T) {
	st := fakeStudy()
	st.Rounds, st.ExpectedClients, st.SampleRate, st.Epsilon = 3, 2, 1, 200
	var err error
	// The budget covers two rounds of E = 2 steps, the study has three.
	if st.StudyStrategy, err = (protocol.StrategyParams{Strategy: "mrmtl", Lambda: 1, Privacy: "both", ExampleEpsilon: 3}).Calibrate(2, st.LocalEpochs, st.Delta, privacy.AccountantRDP); err != nil {
		t.Fatal(err)
	}
	d := newPipeDialer()
	w := [][]float64{{0.1, 0.2, 0.3, 0}, {0.2, 0.1, 0.3, 0.5}, {0.3, 0.1, 0.2, 0.4}, {0.3, 0.2, 0.2, 0.4}}
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			c := coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			if err := c.pickedRounds(st, w, released); err != nil {
				return err
			}
			return nil
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := s.ExampleBudget(); !ok || b.Epsilon != 3 || b.Spent != 0 || b.MaxSteps != 4 {
		t.Fatalf("budget before training %+v, %v", b, ok)
	}
	skips := runSkips(t, ctx, s, serverDone)
	b, _ := s.ExampleBudget()
	want, _ := privacy.Epsilon(st.ExampleRate, st.ExampleNoiseMultiplier, 4, st.ExampleDelta)
	if b.Steps != 4 || b.Spent != want || !(b.Spent <= 3) {
		t.Errorf("after the study: %+v, want 4 steps and ε = %v ≤ 3", b, want)
	}
	if len(skips) != 1 || skips[0].Round != 3 || !skips[0].Example || skips[0].Limit != 3 {
		t.Errorf("skips %+v, want round 3 sat out for the example-level budget", skips)
	}
	if !s.Personal() || slices.Equal(s.Model(), s.GlobalModel()) || !slices.Equal(s.GlobalModel(), w[3]) {
		t.Errorf("forecast model %v, global %v: want the personal model", s.Model(), s.GlobalModel())
	}
}

// TestSessionRefusesUnderNoisedLocalDPSGD: a study whose local DP-SGD
// noise does not cover its announced example-level budget is refused.
func TestSessionRefusesUnderNoisedLocalDPSGD(t *testing.T) {
	st := fakeStudy()
	var err error
	if st.StudyStrategy, err = (protocol.StrategyParams{Privacy: "both", ExampleEpsilon: 1}).Calibrate(st.Rounds, st.LocalEpochs, st.Delta, privacy.AccountantRDP); err != nil {
		t.Fatal(err)
	}
	st.ExampleNoiseMultiplier /= 2
	d := newPipeDialer()
	go func() {
		c := coordinator{t, <-d.ends}
		c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial}); !errors.Is(err, ErrBadStudy) {
		t.Errorf("joined a study whose local noise does not cover its budget: %v", err)
	}
}

// TestSessionJoinedLateIsCharged: a session that joins a running study
// (a reload) charges its fresh accountant for every released round and
// the open one, so two sessions of one LHA never send more local DP-SGD
// steps than the calibration covers; here the budget covers two rounds,
// one is released and one open: the next round is sat out.
func TestSessionJoinedLateIsCharged(t *testing.T) {
	st := fakeStudy()
	st.Rounds, st.ExpectedClients, st.SampleRate, st.Epsilon = 3, 2, 1, 200
	var err error
	if st.StudyStrategy, err = (protocol.StrategyParams{Privacy: "both", ExampleEpsilon: 3}).Calibrate(2, st.LocalEpochs, st.Delta, privacy.AccountantRDP); err != nil {
		t.Fatal(err)
	}
	w := [][]float64{{0.1, 0.2, 0.3, 0}, {0.2, 0.1, 0.3, 0.5}, {0.3, 0.1, 0.2, 0.4}}
	d := newPipeDialer()
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			c := coordinator{t, <-d.ends}
			r1 := released(st, 1, w[1])
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateRunning, Log: []protocol.Event{r1.Event}})
			c.send(released(st, 2, w[2]))
			c.send(&protocol.RoundStart{Round: 3, TimeLeft: answerIn, Picked: true, Weights: w[2]})
			c.send(&protocol.Finished{Rounds: 3, Reason: "rounds", ModelSHA256: protocol.HashHex(w[2])})
			return nil
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := s.ExampleBudget(); b.Steps != 2*st.LocalEpochs || !(b.Spent > 0 && b.Spent <= 3) {
		t.Errorf("after joining a running study with one round released: %+v, want 2 rounds charged", b)
	}
	var skips []Skip
	var sent []string
	x, y := windows()
	if err := s.RunWindows(ctx, x, y, Observer{Skipped: func(k Skip) { skips = append(skips, k) }, Sent: func(o Outgoing) { sent = append(sent, o.Type) }}); err != nil {
		t.Fatal(err)
	}
	if err := <-serverDone; err != nil {
		t.Fatal(err)
	}
	if len(skips) != 1 || skips[0].Round != 3 || !skips[0].Example || slices.Contains(sent, "update") {
		t.Errorf("skips %+v, sent %v: want round 3 sat out and no update", skips, sent)
	}
}
