package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func init() {
	register(&command{
		Name:    "data",
		Summary: "data tools: 'synth' writes a synthetic outbreak, 'check' validates a case CSV",
		Run:     runData,
	})
}

func runData(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("fedcast data synth -h, fedcast data check -h", "which tool? 'synth' or 'check'")
	}
	switch args[0] {
	case "synth":
		return runDataSynth(env, args[1:])
	case "check":
		return runDataCheck(env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(env.Stdout, "Usage: fedcast data synth [flags] | fedcast data check FILE")
		return nil
	}
	return usagef("use 'fedcast data synth' or 'fedcast data check'", "unknown data tool %q", args[0])
}

func runDataSynth(env *Env, args []string) error {
	fs := newFlagSet(env, "data synth", "data synth [--areas 60 --days 92 --start 2020-10-01 --seed 1 --out FILE --populations FILE]\n"+
		"       [--r0 1.4 --intervention-day D --intervention-effect 0.4 --no-intervention --prevalence 60]")
	areas := fs.Int("areas", 60, "number of areas (counties)")
	days := fs.Int("days", 92, "number of days")
	start := fs.String("start", "2020-10-01", "first day, YYYY-MM-DD")
	seed := fs.Uint64("seed", 1, "seed: the same seed gives the same data")
	out := fs.String("out", "", "case CSV to write (date,region,cases); empty: standard output")
	pops := fs.String("populations", "", "also write the areas' populations (county_id,name,state,population) here")
	var o synth.Options
	fs.Float64Var(&o.R0, "r0", 0, "reproduction number before the intervention (default 1.4)")
	fs.IntVar(&o.InterventionDay, "intervention-day", 0, "day (0 = --start) the contact reductions begin (default days·45/92)")
	fs.Float64Var(&o.InterventionEffect, "intervention-effect", 0, "fraction by which transmission falls (default 0.4)")
	fs.BoolVar(&o.NoIntervention, "no-intervention", false, "keep transmission at R0 throughout")
	fs.Float64Var(&o.InitialPrevalence, "prevalence", 0, "infectious people per 100,000 at the start of the burn-in (default 60)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"r0", o.R0}, {"intervention-effect", o.InterventionEffect}, {"prevalence", o.InitialPrevalence}, {"intervention-day", float64(o.InterventionDay)}} {
		if c.v < 0 {
			return usagef("", "--%s must not be negative, got %v", c.name, c.v)
		}
	}
	t0, err := parseDay(*start, "--start")
	if err != nil {
		return err
	}
	if *areas < 1 || *days < 1 {
		return usagef("", "--areas and --days must be at least 1")
	}
	o.Areas, o.Days, o.Start, o.Seed = *areas, *days, t0, *seed
	d, as, err := synth.Generate(o)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return series.Write(w, d) }
	if *out == "" {
		if err := write(env.Stdout); err != nil {
			return err
		}
	} else if err := writeFileAtomic(*out, write); err != nil {
		return err
	}
	if *pops != "" {
		if err := writeFileAtomic(*pops, func(w io.Writer) error { return synth.WritePopulations(w, as) }); err != nil {
			return err
		}
	}
	if *out != "" {
		fmt.Fprintf(env.Stderr, "wrote %d areas × %d days to %s\n", len(d.Regions), *days, *out)
	}
	return nil
}

func runDataCheck(env *Env, args []string) error {
	fs := newFlagSet(env, "data check", "data check FILE")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("example: fedcast data check cases.csv", "give exactly one file")
	}
	path := fs.Arg(0)
	if _, err := os.Stat(path); err != nil {
		return err
	}
	d, err := series.ReadFile(path)
	if err != nil {
		return err
	}
	first, last := d.Span()
	var total float64
	for _, r := range d.Regions {
		for _, c := range r.Cases {
			total += c
		}
	}
	fmt.Fprintf(env.Stdout, "%s: %d region(s), %s .. %s, %.0f cases in all: OK\n",
		path, len(d.Regions), first.Format("2006-01-02"), last.Format("2006-01-02"), total)
	return nil
}
