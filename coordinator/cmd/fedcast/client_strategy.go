package main

import (
	"fmt"
	"io"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// printStrategy states the study's strategy and, with local DP-SGD, this
// LHA's own example-level budget (docs/strategies.md).
func printStrategy(out io.Writer, st protocol.Study) {
	kind, err := st.StrategyKind()
	if err != nil {
		return
	}
	g, err := st.Guarantee()
	if err != nil {
		return
	}
	line := fmt.Sprintf("strategy %s", kind)
	if st.Strategy == "mrmtl" {
		line += fmt.Sprintf(" (λ = %g: forecasts come from this LHA's own personal model)", st.Lambda)
	}
	if st.Strategy == "cyclic" {
		line += fmt.Sprintf(" (the LHAs train in turn: every \"round\" below is one turn of %d = T·N, each round's order public; this LHA trains in its own %d turns and its client-level ε counts its own hand-offs only)",
			st.Rounds*st.Clients, st.Rounds)
	}
	line += fmt.Sprintf(", privacy %s", g)
	if st.ExampleSteps > 0 {
		line += fmt.Sprintf("; local DP-SGD: this LHA's own example-level budget ε = %g at δ = %g (q_local = %g, C = %g, c = %.4f, %d steps)",
			st.ExampleEpsilon, st.ExampleDelta, st.ExampleRate, st.ExampleClip, st.ExampleNoiseMultiplier, st.ExampleSteps)
	}
	if !st.ClientLevelDP() {
		line += "; no client-level guarantee: the coordinator adds no noise and sees every update this LHA sends (the client-level ε below is 0); the guarantee is per training window, by this LHA's own count"
	}
	fmt.Fprintln(out, line)
}

func printSkip(out io.Writer, k session.Skip) {
	if k.Example {
		fmt.Fprintf(out, "round %d: sampled, sent nothing: another round would take this LHA's example-level ε past its budget %g (spent %.6g)\n", k.Round, k.Limit, k.Epsilon)
		return
	}
	fmt.Fprintf(out, "round %d: sampled, sent nothing: ε would reach %.6g, above this LHA's limit %g\n", k.Round, k.Epsilon, k.Limit)
}

// printExampleBudget reports what this LHA spent of its own example-level
// budget (nothing without local DP-SGD).
func printExampleBudget(out io.Writer, s *session.Session) {
	if b, ok := s.ExampleBudget(); ok {
		fmt.Fprintf(out, "local DP-SGD: this LHA spent example-level ε %.6g of its own budget %g (δ = %g) in %d of %d steps\n",
			b.Spent, b.Epsilon, b.Delta, b.Steps, b.MaxSteps)
	}
}
