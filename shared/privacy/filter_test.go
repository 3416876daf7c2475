package privacy

import (
	"errors"
	"math"
	"testing"
)

// The filter's ε at its order is the one-order accountant's: the budget
// B(α) it admits up to converts back to the filter's ε.
func TestFilterMatchesOneOrderAccountant(t *testing.T) {
	const q, c, delta = 0.5, 1.2, 1e-5
	_, order := Epsilon(q, c, 30, delta)
	f, err := NewFilter(100, delta, order)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Spend(q, c, 30); err != nil {
		t.Fatal(err)
	}
	a := NewRDP([]float64{order})
	a.Compose(q, c, 30)
	want, _ := a.Epsilon(delta)
	if got := f.Epsilon(); math.Abs(got-want) > 1e-12*want {
		t.Fatalf("filter ε %v, one-order accountant %v", got, want)
	}
	// At the order that minimises the planned composition, the filter's
	// figure is the ordinary one; at another order it is larger.
	minEps, _ := Epsilon(q, c, 30, delta)
	if math.Abs(f.Epsilon()-minEps) > 1e-9*minEps {
		t.Fatalf("at the minimising order the filter gives %v, composition %v", f.Epsilon(), minEps)
	}
	other, err := FilterEpsilon([]Event{{q, c, 30}}, delta, order*2)
	if err != nil {
		t.Fatal(err)
	}
	if !(other > minEps) {
		t.Fatalf("at order %v the filter gives %v, not above the minimum %v", order*2, other, minEps)
	}
}

// An adaptive sequence (each round's c chosen from what came before) is
// refused before its ε at the filter's order passes the fixed budget, and
// a refused round spends nothing.
func TestFilterStopsAdaptiveSequenceAtBudget(t *testing.T) {
	const q, delta, budget = 0.3, 1e-5, 2.0
	c0, err := NoiseMultiplier(budget, delta, q, 50)
	if err != nil {
		t.Fatal(err)
	}
	_, order := Epsilon(q, c0, 50, delta)
	f, err := NewFilter(budget, delta, order)
	if err != nil {
		t.Fatal(err)
	}
	c, admitted := c0*1.5, 0
	for range 10000 {
		if !f.Admits(q, c, 1) {
			before := f.Epsilon()
			if err := f.Spend(q, c, 1); !errors.Is(err, ErrBudgetExhausted) {
				t.Fatalf("Spend past the budget: %v, want ErrBudgetExhausted", err)
			}
			if f.Epsilon() != before {
				t.Fatalf("a refused round changed ε from %v to %v", before, f.Epsilon())
			}
			break
		}
		if err := f.Spend(q, c, 1); err != nil {
			t.Fatal(err)
		}
		admitted++
		if f.Epsilon() > budget+1e-12 {
			t.Fatalf("after %d rounds ε=%v > budget %v", admitted, f.Epsilon(), budget)
		}
		// "Seeing the results", the next round is noisier or less noisy.
		if admitted%3 == 0 {
			c *= 0.9
		} else {
			c *= 1.05
		}
	}
	if admitted == 0 || f.Epsilon() < budget*0.5 {
		t.Fatalf("admitted %d rounds, ε=%v: the filter should use most of budget %v", admitted, f.Epsilon(), budget)
	}
}

func TestTopUpNoiseComposesToNewBudget(t *testing.T) {
	const q, delta = 0.5, 1e-5
	c, err := NoiseMultiplier(2, delta, q, 20)
	if err != nil {
		t.Fatal(err)
	}
	_, order := Epsilon(q, c, 20, delta)
	planned := []Event{{q, c, 20}}
	for _, tc := range []struct {
		newEps float64
		added  int
	}{{3, 10}, {4, 20}, {2.2, 5}} {
		c2, err := TopUpNoise(planned, q, tc.added, tc.newEps, delta, order)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := FilterEpsilon(append(planned, Event{q, c2, tc.added}), delta, order)
		if !(got <= tc.newEps) || got < tc.newEps*(1-1e-4) {
			t.Fatalf("ε=%v, %d added rounds at c'=%v compose to %v", tc.newEps, tc.added, c2, got)
		}
		less, _ := FilterEpsilon(append(planned, Event{q, c2 * (1 - 1e-5), tc.added}), delta, order)
		if !(less > tc.newEps) {
			t.Fatalf("c'=%v is not the smallest: %v also fits (ε %v)", c2, c2*(1-1e-5), less)
		}
		// The ordinary composition (min over orders) is never above the
		// filter's figure: the study's budget gate keeps holding.
		if eps, _ := EpsilonFor(AccountantRDP, append(planned, Event{q, c2, tc.added}), delta); eps > got+1e-12 {
			t.Fatalf("composition %v above the filter's %v", eps, got)
		}
	}
	spent, _ := FilterEpsilon(planned, delta, order)
	if _, err := TopUpNoise(planned, q, 5, spent, delta, order); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("a top-up to the same ε: %v, want ErrBudgetExhausted", err)
	}
	if _, err := TopUpNoise(planned, q, 0, 3, delta, order); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("a top-up of no rounds: %v, want ErrInvalidParameter", err)
	}
}
