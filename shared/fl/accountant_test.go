package fl

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// A study with the PLD accountant gates and records ε by PLD: a budget
// between the PLD and the RDP ε of its T rounds admits it with PLD and
// refuses it with RDP, and every event names its accountant.
func TestServerPLDAccountant(t *testing.T) {
	cfg := Config{Clients: 400, ExpectedClients: 100, Rounds: 75, ClipNorm: 0.5, NoiseMultiplier: 4.6,
		DP: true, LocalEpochs: 1, LearningRate: 1e-3}
	evs := []privacy.Event{{SampleRate: 0.25, NoiseMultiplier: 4.6, Rounds: 75}}
	rdp, _ := privacy.EpsilonFor(privacy.AccountantRDP, evs, 1e-5)
	pld, _ := privacy.EpsilonFor(privacy.AccountantPLD, evs, 1e-5)
	if !(pld < 2 && 2 < rdp) {
		t.Fatalf("test premise: PLD ε=%g < 2 < RDP ε=%g", pld, rdp)
	}
	if _, err := NewServer(cfg, make([]float64, 3), 2, 1e-5); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("RDP study over budget started: %v", err)
	}
	cfg.Accountant = privacy.AccountantPLD
	s, err := NewServer(cfg, make([]float64, 3), 2, 1e-5)
	if err != nil {
		t.Fatalf("PLD study within budget refused: %v", err)
	}
	agg := NewAggregator(cfg, 3)
	var ev Event
	for range 2 {
		agg.Add([]float64{0.1, 0.2, 0.3})
		if ev, err = s.Commit(agg, NewRand(1, StreamNoise)); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := privacy.EpsilonFor(privacy.AccountantPLD, []privacy.Event{{SampleRate: 0.25, NoiseMultiplier: 4.6, Rounds: 2}}, 1e-5)
	if ev.Accountant != privacy.AccountantPLD || ev.Epsilon != want || s.EpsilonSpent() != want {
		t.Errorf("after 2 rounds: event %+v, spent %g, want PLD ε %g", ev, s.EpsilonSpent(), want)
	}
	b, _ := json.Marshal(s)
	var back Server
	if err := json.Unmarshal(b, &back); err != nil || back.Config.AccountantKind() != privacy.AccountantPLD || back.EpsilonSpent() != want {
		t.Errorf("round trip: %v, accountant %q, spent %g", err, back.Config.Accountant, back.EpsilonSpent())
	}
	// A budget the next round would exceed stops the study.
	back.EpsilonBudget = want * 1.0001
	if err := back.NextRoundFits(); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("over-budget round allowed: %v", err)
	}
	cfg.Accountant = "prv"
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown accountant accepted: %v", err)
	}
}

// State saved before the accountant field existed loads as RDP.
func TestServerOldJSONIsRDP(t *testing.T) {
	cfg := dpConfig()
	s, err := NewServer(cfg, []float64{1, 2, 3}, 10, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	agg := NewAggregator(cfg, 3)
	agg.Add([]float64{0.1, 0.2, 0.3})
	if _, err := s.Commit(agg, NewRand(1, StreamNoise)); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), `"accountant":"`) {
		t.Fatalf("RDP default written explicitly: %s", b)
	}
	var back Server
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want, _ := privacy.Epsilon(cfg.SampleRate(), cfg.NoiseMultiplier, 1, 1e-5)
	if back.Config.AccountantKind() != privacy.AccountantRDP || math.Abs(back.EpsilonSpent()-want) > 1e-12 {
		t.Errorf("old state: accountant %q, ε %g, want RDP %g", back.Config.AccountantKind(), back.EpsilonSpent(), want)
	}
}
