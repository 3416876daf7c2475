package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/fedcast/fedcast/coordinator/plan"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
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
	if !(*months > 0) || *months > 600 {
		return usagef(hint, "--months %v: want a number of months above 0 and at most 600", *months)
	}
	if !math.IsInf(eps, 1) {
		if err := checkDeltaFor(*delta, *n); err != nil {
			return usagef("leave --delta out for the default 1e-5", "%s", forPeople(err.Error()))
		}
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

// checkDeltaFor checks --delta for a study of n LHAs as study new does:
// in (0, 1) and below 1/N, since δ ≥ 1/N admits a mechanism that releases
// one LHA's data outright.
func checkDeltaFor(delta float64, n int) error {
	if err := privacy.CheckDelta(delta); err != nil {
		return fmt.Errorf("--delta %v: %w", delta, err)
	}
	if delta*float64(n) >= 1 {
		return fmt.Errorf("--delta %v is not below 1/N = %.3g (N = %s): a larger δ admits releasing an LHA's data outright, and study new refuses it",
			delta, 1/float64(n), plural(n, "LHA"))
	}
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
	over := fmt.Sprintf("%g months", months)
	if months == 1 {
		over = "1 month"
	}
	fmt.Fprintf(w, "Plan for %s over %s with %s:\n", plural(n, "LHA"), over, budget)
	fmt.Fprintf(w, "  design %s, a training campaign every %d days (%s of %s), %s per round\n",
		pp.Design, pp.EveryDays, plural(pp.Campaigns, "campaign"), plural(pp.Rounds, "round"), plural(pp.ExpectedClients, "LHA"))
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

// studyPlan is the planner's plan for a live study of n LHAs with the
// file's budget, over the span it runs: one campaign (about a month), or a
// continuing study's campaigns. With apply, the plan's rounds (per
// campaign) and LHAs per round are written into f where no flag set them
// (roundsSet: --rounds was given); a continuing study keeps its own
// campaigns and their spacing, which its flags set.
func studyPlan(n int, f *study.File, apply, roundsSet bool) (*plan.Plan, error) {
	if !plannable(f) {
		return nil, nil
	}
	months := 1.0
	if f.Campaigns > 1 {
		months = float64(f.Campaigns) * time.Duration(f.Every).Hours() / 24 / plan.DaysPerMonth
	}
	p, err := makePlan(n, f.Epsilon, f.Delta, months)
	if err != nil {
		return nil, err
	}
	if apply {
		switch {
		case roundsSet:
		case f.Campaigns > 1:
			f.Rounds = f.Campaigns * p.Parameters.Rounds
		case f.Rounds == 0:
			f.Rounds = p.Parameters.Rounds
		}
		if f.ExpectedClients == 0 {
			f.ExpectedClients = p.Parameters.ExpectedClients
		}
	}
	return &p, nil
}

// plannable reports whether the planner's table speaks to the study: a
// client-level budget (not the privacy "example"), a design it was
// measured for (not the Lipschitz one) and rounds that average the LHAs'
// updates (not cyclic hand-offs, whose noise the table never measured).
func plannable(f *study.File) bool {
	return plan.Speaks(f.Settings) && f.Strategy != "cyclic"
}

// studyAssessment reads the planner's table at the schedule the study file
// fixes (its own noise, LHAs per round and campaigns), which may not be
// the planner's: a study of many campaigns spreads its budget over all of
// them, and a study with more rounds than the planner's gets more noise
// per round.
func studyAssessment(file *study.File) (*plan.Plan, error) {
	if !plannable(file) {
		return nil, nil
	}
	c, err := file.Calibrate()
	if err != nil {
		return nil, err
	}
	cs, err := file.CalibrateSchedule()
	if err != nil {
		return nil, err
	}
	if len(cs) > 0 {
		ss := 0.0
		for _, v := range cs {
			ss += v * v
		}
		c = math.Sqrt(ss / float64(len(cs)))
	}
	return assessAt(file, file.Epsilon, c)
}

// assessAt reads the planner's table for rounds of the study file with
// noise multiplier c under the lifetime budget eps.
func assessAt(file *study.File, eps, c float64) (*plan.Plan, error) {
	t, err := plan.Embedded()
	if err != nil {
		return nil, err
	}
	p, err := t.AssessStudy(file.Settings, len(file.LHAs), eps, c)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// printStudyPlan writes, for study new, what the planner expects of the
// schedule it would choose (p) and of the study's own schedule (own), and
// the warnings of the study's own (the planner's without own).
func printStudyPlan(w io.Writer, file *study.File, p, own *plan.Plan, applied bool) {
	if p == nil {
		return
	}
	pp := p.Parameters
	sched := fmt.Sprintf("one campaign of %d rounds", pp.Rounds)
	if pp.Campaigns > 1 {
		sched = fmt.Sprintf("%d campaigns of %d rounds, one every %d days", pp.Campaigns, pp.Rounds, pp.EveryDays)
	}
	fmt.Fprintf(w, "Planner: expected relative WIS %s against the no-change forecast for this many LHAs and this budget on the planner's schedule (%s, %s per round)",
		p.Expectation(), sched, plural(pp.ExpectedClients, "LHA"))
	switch {
	case applied && file.Campaigns > 1 && (pp.Campaigns != file.Campaigns || time.Duration(pp.EveryDays)*24*time.Hour != time.Duration(file.Every)):
		fmt.Fprintf(w, "; its rounds per campaign and LHAs per round were used where no flag set them (--plan), not its campaigns: this study runs the %d campaigns, one every %s, that --campaigns and --every set\n",
			file.Campaigns, days(time.Duration(file.Every)))
	case applied:
		fmt.Fprintf(w, "; its parameters were used where no flag set them (--plan)\n")
	default:
		fmt.Fprintf(w, "; parameters unchanged (add --plan to use the planner's)\n")
	}
	if own == nil {
		for _, s := range p.Warnings {
			fmt.Fprintf(w, "warning: %s\n", s)
		}
		return
	}
	printOwnSchedule(w, file, own)
}

// printOwnSchedule writes what the planner's table expects of the study's
// own schedule, and its warnings.
func printOwnSchedule(w io.Writer, file *study.File, own *plan.Plan) {
	sched := fmt.Sprintf("%d rounds", file.Rounds)
	note := ""
	if file.Campaigns > 1 {
		sched = fmt.Sprintf("%d campaigns of %d rounds, one every %s", file.Campaigns, file.Rounds/file.Campaigns, days(time.Duration(file.Every)))
		if own.Parameters.EveryDays != int(math.Round(time.Duration(file.Every).Hours()/24)) {
			note = fmt.Sprintf("; read at the table's campaigns every %d days, the nearest it measured", own.Parameters.EveryDays)
		}
	}
	fmt.Fprintf(w, "This study's own schedule (%s, %s per round, noise %.3g per LHA): expected relative WIS %s%s\n",
		sched, plural(own.Parameters.ExpectedClients, "LHA"), own.Parameters.NoisePerLHA, own.Expectation(), note)
	for _, s := range own.Warnings {
		fmt.Fprintf(w, "warning: this study's own schedule: %s\n", s)
	}
}

// days writes a duration in whole days where it is one ("28 days"), as
// Go writes it otherwise.
func days(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		n := int(d / (24 * time.Hour))
		if n == 1 {
			return "day"
		}
		return fmt.Sprintf("%d days", n)
	}
	return d.String()
}
