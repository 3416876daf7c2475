package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

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
	fs := newFlagSet(env, "report", "report [--compare] [--figures DIR] FILE.json [FILE.json …]")
	figures := fs.String("figures", "", "also redraw the privacy–utility and convergence figures of each file into DIR/<file name>/")
	compare := fs.Bool("compare", false, "one table per study window and split comparing the files' designs with each other and with the no-change forecast")
	epsList := fs.String("epsilon", "", "with --compare: only these ε, e.g. 0.5,1,2,inf (default: all)")
	if err := seeFlags(fs); err != nil {
		return err
	}
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
		if *figures != "" {
			dir := filepath.Join(*figures, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if _, err := r.SummaryFigures(dir); err != nil {
				return err
			}
		}
	}
	if *compare {
		var only []float64
		if *epsList != "" {
			var err error
			if only, err = parseEpsilons(*epsList); err != nil {
				return usagef("example: --epsilon 0.5,1,2,inf", "%v", err)
			}
		}
		return experiment.WriteComparison(env.Stdout, fs.Args(), reps, only)
	}
	return experiment.WriteMarkdown(env.Stdout, fs.Args(), reps)
}
