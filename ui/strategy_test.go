package ui

import (
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

type budgetSession struct {
	Session
	b  session.ExampleBudget
	ok bool
}

func (f *budgetSession) ExampleBudget() (session.ExampleBudget, bool) { return f.b, f.ok }

// TestExampleBudgetWords: the page states the LHA's own example-level
// budget and spending when the session has local DP-SGD, and nothing
// about it otherwise.
func TestExampleBudgetWords(t *testing.T) {
	s := &JoinState{Welcome: &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Epsilon: 3}}}}
	c := &JoinPage{S: s}
	s.watchExampleBudget(&budgetSession{ok: false}) // no Env: no lock to hold
	if w := c.limitRunWords(); strings.Contains(w, "example-level") {
		t.Errorf("without local DP-SGD: %q", w)
	}
	f := &budgetSession{b: session.ExampleBudget{Epsilon: 5, Delta: 1e-5, MaxSteps: 300}, ok: true}
	s.watchExampleBudget(f)
	f.b.Spent, f.b.Steps = 2.5, 60
	s.refreshExampleBudget()
	w := c.limitRunWords()
	for _, want := range []string{"example-level budget is ε = 5", "spent ε = 2.5", "60 of 300 training steps", "separate guarantee"} {
		if !strings.Contains(w, want) {
			t.Errorf("%q lacks %q", w, want)
		}
	}
	k := c.skipWords(session.Skip{Round: 4, Epsilon: 4.9, Limit: 5, Example: true})
	if !strings.Contains(k, "Round 4") || !strings.Contains(k, "example-level budget past ε = 5") {
		t.Errorf("skip words %q", k)
	}
}

// TestExampleOnlyWords: in a study with privacy "example" the page says
// the guarantee is per training window inside each authority, that the
// coordinator sees every update un-noised, and that no study-wide ε
// limits the browser; it never quotes a client-level ε of 0.
func TestExampleOnlyWords(t *testing.T) {
	st := protocol.Study{StudyStrategy: protocol.StudyStrategy{StrategyParams: protocol.StrategyParams{Privacy: "example", ExampleEpsilon: 2, ExampleDelta: 1e-5}}}
	s := &JoinState{Welcome: &protocol.Welcome{Study: st}}
	c := &JoinPage{S: s}
	f := &budgetSession{b: session.ExampleBudget{Epsilon: 2, Delta: 1e-5, MaxSteps: 150}, ok: true}
	s.watchExampleBudget(f)
	w := c.limitRunWords()
	for _, want := range []string{"each training window", "per window", "ε = 2 at δ = 1e-05", "adds no noise", "sees every update", "spent ε = 0 of that budget in 0 of 150"} {
		if !strings.Contains(w, want) {
			t.Errorf("%q lacks %q", w, want)
		}
	}
	if strings.Contains(w, "budget is ε = 0") || strings.Contains(c.limitWords(), "ε = 0") {
		t.Errorf("quotes a client-level ε of 0: %q / %q", w, c.limitWords())
	}
	s.Welcome.Study.Privacy = "both"
	s.Welcome.Study.Epsilon = 3
	if w := c.limitRunWords(); strings.Contains(w, "adds no noise") {
		t.Errorf("under privacy both: %q", w)
	}
}

// TestAdminExampleOnlyWords: the dashboard shows a client-level study's
// ε spent of its budget as before, and for a study with privacy
// "example" the LHAs' per-window budget, no noise and no client-level
// budget (never "0 of 0").
func TestAdminExampleOnlyWords(t *testing.T) {
	st := &AdminStatus{Status: protocol.Status{EpsilonSpent: 0.5, EpsilonBudget: 3, Delta: 1e-5, NoiseMultiplier: 1.25}}
	c := &AdminPage{S: &AdminState{Status: st}}
	if w, l, n := c.epsilonWords(), c.epsilonLabel(), c.noiseWords(); w != FormatEpsilon(0.5)+" of 3" || !strings.Contains(l, "privacy budget ε spent") || n != "1.25" {
		t.Errorf("client-level study: %q / %q / %q", w, l, n)
	}
	st.Status = protocol.Status{Guarantee: "example", ExampleEpsilon: 2, ExampleDelta: 1e-5, Delta: 1e-5}
	w, l, n := c.epsilonWords(), c.epsilonLabel(), c.noiseWords()
	if strings.Contains(w, " of ") || !strings.Contains(w, "ε = 2") || !strings.Contains(l, "no client-level budget") ||
		!strings.Contains(l, "sees every update") || n != "none" {
		t.Errorf("privacy example: %q / %q / %q", w, l, n)
	}
}

// TestCyclicWords: a cyclic study's page says the authorities train in
// turn, that a "round" on the page is one turn (T·N of them) and that the
// budget counts the authority's own turns; other strategies say nothing.
func TestCyclicWords(t *testing.T) {
	st := protocol.Study{Clients: 4, Settings: protocol.Settings{Rounds: 3}}
	if w := cyclicWords(st); w != "" {
		t.Errorf("FedAvg study: %q", w)
	}
	st.Strategy = "cyclic"
	w := cyclicWords(st)
	for _, want := range []string{"in turn", "12 in all", "own turns only", "3 rounds", "4 authorities"} {
		if !strings.Contains(w, want) {
			t.Errorf("cyclic words lack %q: %s", want, w)
		}
	}
}
