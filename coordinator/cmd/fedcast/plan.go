package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/fedcast/fedcast/coordinator/plan"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/model"
)

func init() {
	register(&command{
		Name:    "plan",
		Summary: "say what forecasting skill to expect for a number of LHAs and a privacy budget",
		Run:     runPlan,
	})
}

const planUsage = `plan --lhas N --epsilon E [--delta D] [--months M] [--json]

Chooses the campaign schedule for N LHAs within a lifetime budget ε over M
months and prints the skill to expect: the relative WIS against the no-change
forecast (below 1 is better than no change), with a range. The expectation
comes from a table measured on synthetic outbreaks and public history
(built into fedcast; no data file is needed).`

func runPlan(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "plan", planUsage)
	n := fs.Int("lhas", 0, "number of LHAs")
	epsStr := fs.String("epsilon", "", "lifetime client-level privacy budget ε, or 'inf'")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	months := fs.Float64("months", 12, "months the study runs")
	asJSON := fs.Bool("json", false, "print JSON only")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	hint := "e.g. fedcast plan --lhas 40 --epsilon 2"
	if *n < 1 || *epsStr == "" {
		return usagef(hint, "--lhas (at least 1) and --epsilon are required")
	}
	eps, err := parseBudget(*epsStr)
	if err != nil {
		return usagef(hint, "--epsilon: %v", err)
	}
	p, err := makePlan(*n, eps, *delta, *months)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
		return err
	}
	printPlan(env.Stdout, *n, eps, *delta, *months, p)
	return nil
}

func makePlan(n int, eps, delta, months float64) (plan.Plan, error) {
	t, err := plan.Embedded()
	if err != nil {
		return plan.Plan{}, err
	}
	return t.Make(plan.Request{LHAs: n, Epsilon: eps, Delta: delta, Months: months})
}

// printPlan writes the plan in words.
func printPlan(w io.Writer, n int, eps, delta, months float64, p plan.Plan) {
	budget := "no privacy noise (ε = ∞)"
	if !math.IsInf(eps, 1) {
		budget = fmt.Sprintf("a lifetime budget of ε = %g (δ = %g)", eps, delta)
	}
	pp := p.Parameters
	fmt.Fprintf(w, "Plan for %d LHAs over %g months with %s:\n", n, months, budget)
	fmt.Fprintf(w, "  design %s, a training campaign every %d days (%d campaigns of %d rounds), %d LHAs per round\n",
		pp.Design, pp.EveryDays, pp.Campaigns, pp.Rounds, pp.ExpectedClients)
	if pp.NoiseMultiplier > 0 {
		fmt.Fprintf(w, "  noise multiplier %.3g (%.3g per LHA), clip bound %g, %s accountant\n", pp.NoiseMultiplier, pp.NoisePerLHA, pp.Clip, pp.Accountant)
	}
	if p.Expected >= plan.MaxRelativeWIS {
		fmt.Fprintf(w, "Expected skill: relative WIS %g or more: the shared model is noise; below 1 would beat the no-change forecast.\n", float64(plan.MaxRelativeWIS))
	} else {
		fmt.Fprintf(w, "Expected skill: relative WIS %.2f (range %.2f … %.2f); below 1 beats the no-change forecast.\n", p.Expected, p.Range[0], p.Range[1])
	}
	if len(p.ByOutbreak) > 0 && p.Expected < plan.MaxRelativeWIS {
		fmt.Fprintf(w, "  measured at this noise, by outbreak:\n")
		for _, m := range p.ByOutbreak {
			v := fmt.Sprintf("%.2f", m.RelativeWIS)
			if m.RelativeWIS >= plan.MaxRelativeWIS {
				v = fmt.Sprintf("%g or more", float64(plan.MaxRelativeWIS))
			}
			fmt.Fprintf(w, "    %s: %s\n", m.Outbreak, v)
		}
	}
	for _, s := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// studyPlan is the plan for a live study of n LHAs with the file's budget,
// one campaign (a study of about a month). With apply, the plan's rounds and
// LHAs per round are written into f (where not set by a flag).
func studyPlan(n int, f *study.File, apply bool) (*plan.Plan, error) {
	if f.Epsilon <= 0 {
		return nil, nil // privacy "example": no client-level budget to plan
	}
	if f.Features == string(model.Lipschitz) {
		return nil, nil // the planner's table was not measured for this design
	}
	p, err := makePlan(n, f.Epsilon, f.Delta, 1)
	if err != nil {
		return nil, err
	}
	if apply {
		if f.Rounds == 0 {
			f.Rounds = p.Parameters.Rounds
		}
		if f.ExpectedClients == 0 {
			f.ExpectedClients = p.Parameters.ExpectedClients
		}
	}
	return &p, nil
}

// printStudyPlan writes the plan's expectation and warnings for study new.
func printStudyPlan(w io.Writer, p *plan.Plan, applied bool) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "Planner: expected relative WIS %.2f (range %.2f … %.2f) against the no-change forecast for this many LHAs and this budget",
		p.Expected, p.Range[0], p.Range[1])
	if applied {
		fmt.Fprintf(w, "; its parameters were used (--plan)\n")
	} else {
		fmt.Fprintf(w, "; parameters unchanged (add --plan to use the planner's)\n")
	}
	for _, s := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}
