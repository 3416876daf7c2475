package fl

import (
	"errors"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// TestGateProven is issue 22's item 3 at the budget gate: the paper
// preset at the noise the fractional Rényi orders chose for ε = 2
// (c = 4.863027) spends ε = 2.000277 by the proven integer orders, so a
// study of it is refused at start and its 75th round is refused before
// it runs; the proven calibration (c = 4.863596) fits.
func TestGateProven(t *testing.T) {
	const old, proven = 4.863027394, 4.863596062
	cfg := Config{Clients: 400, ExpectedClients: 100, Rounds: 75, ClipNorm: 0.5, NoiseMultiplier: old,
		DP: true, LocalEpochs: 1, LearningRate: 1e-3}
	if a, _ := privacy.ArguedEpsilon(0.25, old, 75, 1e-5); !(a <= 2) {
		t.Fatalf("test premise: the argued ε %g is within the budget 2", a)
	}
	_, err := NewServer(cfg, make([]float64, 3), 2, 1e-5)
	if !errors.Is(err, privacy.ErrBudgetExhausted) || !strings.Contains(err.Error(), "ε=2.00028") {
		t.Errorf("c = %g, budget 2: %v; want refused, ε=2.00028", old, err)
	}
	s, err := NewServer(cfg, make([]float64, 3), 2.001, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	s.Accountant.Compose(0.25, old, 74)
	s.Round = 74
	if err := s.NextRoundFits(); err != nil {
		t.Fatalf("budget 2.001, round 75: %v", err)
	}
	s.EpsilonBudget = 2
	if err := s.NextRoundFits(); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("budget 2, round 75 at c = %g: %v; want refused (proven ε 2.000277)", old, err)
	}
	cfg.NoiseMultiplier = proven
	if _, err := NewServer(cfg, make([]float64, 3), 2, 1e-5); err != nil {
		t.Errorf("the proven calibration c = %g refused: %v", proven, err)
	}
}
