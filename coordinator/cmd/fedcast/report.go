package main

import (
	"context"

	"github.com/fedcast/fedcast/coordinator/experiment"
)

func init() {
	register(&command{
		Name:    "report",
		Summary: "render simulate's JSON results as Markdown tables beside the paper's",
		Run:     runReport,
	})
}

func runReport(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report", "report FILE.json [FILE.json …]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("example: fedcast report docs/results/nov2020_random.json", "give one or more JSON files written by 'fedcast simulate --json'")
	}
	var reps []*experiment.Report
	for _, f := range fs.Args() {
		r, err := experiment.ReadReport(f)
		if err != nil {
			return err
		}
		reps = append(reps, r)
	}
	return experiment.WriteMarkdown(env.Stdout, fs.Args(), reps)
}
