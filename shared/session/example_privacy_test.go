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

// exampleStudy is a study with privacy "example" (no client-level ε or c)
// whose local DP-SGD budget ε = 3 covers rounds rounds of E steps.
func exampleStudy(t *testing.T, rounds int) protocol.Study {
	t.Helper()
	st := fakeStudy()
	st.Rounds, st.ExpectedClients, st.SampleRate, st.Epsilon, st.NoiseMultiplier = 3, 2, 1, 0, 0
	var err error
	if st.StudyStrategy, err = (protocol.StrategyParams{Privacy: "example", ExampleEpsilon: 3}).Calibrate(rounds, st.LocalEpochs, st.Delta, privacy.AccountantRDP); err != nil {
		t.Fatal(err)
	}
	return st
}

// releasedExample is round r's result under privacy "example": no noise,
// no client-level ε, guarantee "example".
func releasedExample(st protocol.Study, r int, w []float64) *protocol.RoundResult {
	return &protocol.RoundResult{Weights: w, Event: protocol.Event{Round: r, SampleRate: st.SampleRate, Delta: st.Delta,
		ModelSHA256: protocol.HashHex(w), Guarantee: "example"}}
}

// TestSessionExamplePrivacyRefusesPastOwnBudget: in a study with privacy
// "example" the LHA trains with local DP-SGD under its own accountant,
// has no client-level ε to check or limit (LocalEpsilon 0; its own limit
// does not stop it), and once its example-level budget cannot cover
// another round it sits the round out (Skip.Example) and sends nothing.
func TestSessionExamplePrivacyRefusesPastOwnBudget(t *testing.T) {
	st := exampleStudy(t, 2) // the budget covers two of the three rounds
	d := newPipeDialer()
	w := [][]float64{{0.1, 0.2, 0.3, 0}, {0.2, 0.1, 0.3, 0.5}, {0.3, 0.1, 0.2, 0.4}, {0.3, 0.2, 0.2, 0.4}}
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			c := coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			if err := c.pickedRounds(st, w, releasedExample); err != nil {
				return err
			}
			return nil
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial, MaxEpsilon: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	var skips []Skip
	var sent []string
	x, y := windows()
	if err := s.RunWindows(ctx, x, y, Observer{Skipped: func(k Skip) { skips = append(skips, k) }, Sent: func(o Outgoing) { sent = append(sent, o.Type) }}); err != nil {
		t.Fatal(err)
	}
	if err := <-serverDone; err != nil {
		t.Fatalf("coordinator side: %v", err)
	}
	b, ok := s.ExampleBudget()
	want, _ := privacy.Epsilon(st.ExampleRate, st.ExampleNoiseMultiplier, 2*st.LocalEpochs, st.ExampleDelta)
	if !ok || b.Steps != 2*st.LocalEpochs || b.Spent != want || !(b.Spent <= 3) {
		t.Errorf("after the study: %+v, want %d steps and ε = %v ≤ 3", b, 2*st.LocalEpochs, want)
	}
	if len(skips) != 1 || skips[0].Round != 3 || !skips[0].Example || skips[0].Limit != 3 {
		t.Errorf("skips %+v, want only round 3 sat out, for the example-level budget", skips)
	}
	if n := len(slices.DeleteFunc(sent, func(s string) bool { return s != "update" })); n != 2 {
		t.Errorf("%d updates sent, want 2", n)
	}
	if s.LocalEpsilon() != 0 || len(s.Log()) != 3 {
		t.Errorf("client-level ε %v, %d rounds logged", s.LocalEpsilon(), len(s.Log()))
	}
}

// TestSessionChecksExampleStudy: an LHA refuses a study announcing privacy
// "example" whose local DP-SGD noise does not cover the announced
// example-level budget, or that also announces a client-level ε or c it
// would not add; and it refuses a released round of such a study that
// claims a client-level ε or lacks the "example" guarantee.
func TestSessionChecksExampleStudy(t *testing.T) {
	good := exampleStudy(t, 3)
	underNoised := good
	underNoised.ExampleNoiseMultiplier /= 2
	withEps := good
	withEps.Epsilon, withEps.NoiseMultiplier = 1, 2
	for name, st := range map[string]protocol.Study{"under-noised local DP-SGD": underNoised, "client-level ε announced": withEps} {
		s := &Session{}
		if err := s.welcome(&protocol.Welcome{Study: st, LHA: "A", State: protocol.StateWaiting}); !errors.Is(err, ErrBadStudy) {
			t.Errorf("%s: %v, want ErrBadStudy", name, err)
		}
	}
	w := []float64{0.1, 0.2, 0.3, 0}
	ok := releasedExample(good, 1, w).Event
	claims := ok
	claims.Epsilon = 0.5
	unlabelled := ok
	unlabelled.Guarantee = ""
	for name, ev := range map[string]protocol.Event{"a client-level ε": claims, "no guarantee": unlabelled} {
		s := &Session{}
		if err := s.welcome(&protocol.Welcome{Study: good, LHA: "A", State: protocol.StateRunning, Log: []protocol.Event{ev}}); !errors.Is(err, ErrBudgetMismatch) {
			t.Errorf("released round with %s: %v, want ErrBudgetMismatch", name, err)
		}
	}
	s := &Session{}
	if err := s.welcome(&protocol.Welcome{Study: good, LHA: "A", State: protocol.StateRunning, Log: []protocol.Event{ok}}); err != nil {
		t.Errorf("a well-formed example-level study and round: %v", err)
	}
}
