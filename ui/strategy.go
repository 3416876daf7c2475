package ui

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// The LHA's own example-level budget when the study runs local DP-SGD
// (docs/strategies.md): the session's accountant computes it, the page
// only shows it.

// watchExampleBudget remembers where to read the budget from (a session
// that has one) and reads it once, before training. The caller holds the
// render lock (Join runs in the button's handler).
func (s *JoinState) watchExampleBudget(sess Session) {
	src, ok := sess.(interface {
		ExampleBudget() (session.ExampleBudget, bool)
	})
	if !ok {
		return
	}
	s.exampleSource = src.ExampleBudget
	if b, ok := src.ExampleBudget(); ok {
		s.ExampleBudget = &b
	}
}

// refreshExampleBudget copies the session's example-level budget into
// the state (after each round).
func (s *JoinState) refreshExampleBudget() {
	s.lock()
	src := s.exampleSource
	s.unlock()
	if src == nil {
		return
	}
	b, ok := src()
	if !ok {
		return
	}
	s.lock()
	s.ExampleBudget = &b
	s.unlock()
}

// exampleBudgetWords says what the LHA's own example-level budget is and
// how much of it this browser has spent ("" without local DP-SGD).
func (s *JoinState) exampleBudgetWords() string {
	b := s.ExampleBudget
	if b == nil {
		return ""
	}
	return fmt.Sprintf(" This study also protects each of your training windows inside this browser (local DP-SGD): "+
		"your authority's own example-level budget is ε = %s (δ = %g), of which this browser has spent ε = %s in %d of %d training steps. "+
		"This is a separate guarantee, per window of your data, counted here only.",
		FormatEpsilon(b.Epsilon), b.Delta, FormatEpsilon(b.Spent), b.Steps, b.MaxSteps)
}

// exampleSkipWords explains a round sat out for the example-level budget.
func exampleSkipWords(k session.Skip) string {
	return fmt.Sprintf("Round %d: you were picked, but nothing was sent: another round of training would take your own example-level budget past ε = %s "+
		"(spent so far: ε = %s). Your data took no part in it, and the study goes on without you.", k.Round, FormatEpsilon(k.Limit), FormatEpsilon(k.Epsilon))
}

// exampleOnlyWords says plainly what a study with privacy "example"
// protects and what it does not (docs/privacy.md, "What the coordinator
// may still learn under example-level DP only").
func exampleOnlyWords(st protocol.Study, b *session.ExampleBudget) string {
	w := fmt.Sprintf("This study protects each training window of your data inside this browser (local DP-SGD), and nothing more: "+
		"the guarantee is per window (ε = %s at δ = %g for each authority, by its own count), not for your authority as a whole. "+
		"The coordinator adds no noise: it sees every update a picked authority sends, as it was sent, and which authorities took part in which round.",
		FormatEpsilon(st.ExampleEpsilon), st.ExampleDelta)
	if b != nil {
		w += fmt.Sprintf(" This browser has spent ε = %s of that budget in %d of %d training steps, and sends nothing in a round that would pass it.",
			FormatEpsilon(b.Spent), b.Steps, b.MaxSteps)
	}
	return w
}

// cyclicWords says how a cyclic study runs ("" for other strategies): the
// authorities train in turn, every "round" on the page is one turn, and
// the budget counts this authority's own turns only.
func cyclicWords(st protocol.Study) string {
	if st.Strategy != "cyclic" {
		return ""
	}
	return fmt.Sprintf(" In this study the authorities train in turn (cyclic): each of the %d rounds gives every one of the %d authorities one turn, "+
		"in an order fixed before the study started, and each \"round\" on this page is one turn (%d in all). "+
		"The model passes from one authority to the next through the coordinator; your budget counts your own turns only.",
		st.Rounds, st.Clients, st.Rounds*st.Clients)
}
