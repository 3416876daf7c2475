package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/coordinator/plan"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/publish"
)

func init() {
	register(&command{
		Name:    "backtest",
		Summary: "replay a deployment week by week on a case file and score its forecasts",
		Run:     runBacktest,
	})
}

const backtestUsage = `backtest --cases FILE --counties FILE --from DATE --to DATE --epsilon E [--delta D] [--every DAYS]
       [--rounds T] [--first-rounds N] [--hub DIR] [--json FILE] [--out DIR] [--preset NAME] [--seed S] [--quiet]
       [--publish-epsilon E [--publish-delta D]]

Every area of --cases is one simulated LHA. Forecast origins are every 7 days
from --from to --to (both included); at origin t each LHA knows the reports up
to t and forecasts the total reported cases of t+1 … t+7. Training campaigns
run every --every days from --from, each on what was known at its start.
--epsilon is the lifetime budget of all campaigns together ('inf': no noise).
--first-rounds N gives the first campaign N rounds (a warm start on all the
history known at its start); the noise is calibrated over every planned round.
National and state totals (public inputs) are the sums of --cases, by the
state column of --counties. Scores are against the hub baseline (1 = no
change).

--publish-epsilon E also publishes every forecast with output noise (a
person-level guarantee: ε per person per year, one case; needs --preset
lipschitz) and scores them beside the unpublished ones (JSON "published");
with --hub DIR they go to DIR/published/.`

func runBacktest(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "backtest", backtestUsage)
	cases := fs.String("cases", "", "case CSV (date,county_id,cases): every area is one LHA")
	counties := fs.String("counties", "", "area CSV (county_id,name,state,population): states and populations")
	from := fs.String("from", "", "first forecast origin, YYYY-MM-DD")
	to := fs.String("to", "", "last possible forecast origin, YYYY-MM-DD (included)")
	epsStr := fs.String("epsilon", "", "lifetime client-level privacy budget ε of all campaigns together, or 'inf'")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	every := fs.Int("every", backtest.DefaultEvery, "days between the starts of training campaigns")
	rounds := fs.Int("rounds", 0, "rounds per campaign (default: the design's)")
	firstRounds := fs.Int("first-rounds", 0, "rounds of the first campaign only, a warm start (default: the design's, or --rounds)")
	hub := fs.String("hub", "", "write one hub CSV per origin into this directory")
	jsonOut := fs.String("json", "", "write the scores as JSON to this file (- for standard output, the table then goes to standard error)")
	outDir := fs.String("out", "", "write the figure (relative WIS per origin) and the per-quarter table into this directory")
	preset := fs.String("preset", backtest.DefaultPreset(), "design: "+strings.Join(backtest.Presets(), ", ")+" (weekly, the default: a year of history and the public totals; default: the earlier one-month design, the default before weekly; paper: the paper's one-month protocol)")
	seed := fs.Uint64("seed", 0, "research mode: reproducible sampling and noise from this seed (0: secure randomness)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pubEps := fs.Float64("publish-epsilon", 0, "also publish every forecast with ε per person per year (one case); 0: do not publish")
	pubDelta := fs.Float64("publish-delta", publish.DefaultDelta, "δ of the published forecasts' guarantee")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	hint := "run 'fedcast backtest -h' for the flags"
	if *cases == "" || *counties == "" || *from == "" || *to == "" || *epsStr == "" {
		return usagef(hint, "--cases, --counties, --from, --to and --epsilon are required")
	}
	eps, err := parseBudget(*epsStr)
	if err != nil {
		return usagef(hint, "--epsilon: %v", err)
	}
	if err := checkOutputs(*hub, *jsonOut, *outDir); err != nil {
		return err
	}
	var dates [2]time.Time
	for i, d := range []struct{ flag, v string }{{"--from", *from}, {"--to", *to}} {
		if dates[i], err = time.Parse(time.DateOnly, d.v); err != nil {
			return usagef(hint, "%s %q is not a date: write it as YYYY-MM-DD", d.flag, d.v)
		}
	}
	if *every == 0 {
		// 0 would be taken as the default (28) without a word.
		return usagef(hint, "--every 0 days: want 1 … 3650 (default %d)", backtest.DefaultEvery)
	}
	design, err := backtest.DesignFor(*preset, *seed)
	if err != nil {
		return usagef(hint, "%s", forPeople(err.Error()))
	}
	data, meta, err := readCasesCounties(env, *cases, *counties)
	if err != nil {
		return err
	}
	opt := backtest.Options{Cases: data, AreaState: meta.State, Population: meta.Population, From: dates[0], To: dates[1],
		Epsilon: eps, Delta: *delta, Every: *every, Rounds: *rounds, FirstRounds: *firstRounds, Design: design}
	if *seed != 0 {
		opt.Seed = seed
	}
	if *pubEps != 0 {
		if !(*pubEps > 0) || math.IsInf(*pubEps, 0) {
			return usagef(hint, "--publish-epsilon %v: write a number above 0, such as 1", *pubEps)
		}
		opt.Publish = &backtest.PublishOptions{Epsilon: *pubEps, Delta: *pubDelta}
	}
	if !*quiet {
		opt.Progress = env.Stderr
		kernelNote(env.Stderr, "backtest")
	}
	res, err := backtest.Run(opt)
	if err != nil {
		return err
	}
	scored, err := backtest.Score(res, data)
	if err != nil {
		return err
	}
	sum := backtest.Summarise(*preset, res, scored)
	scoringNotes(env.Stderr, sum, backtest.ShortBaseline(data, res.Origins))
	noiseNote(env.Stderr, sum, res.Schedule, *every)
	floorNote(env.Stderr, res)
	if sum.Published, err = backtest.SummarisePublished(res, data); err != nil {
		return err
	}
	return writeBacktest(env, sum, res, *hub, *jsonOut, *outDir, *preset)
}

// kernelNote says on w, for a command that trains (cmd), when training runs
// on the scalar kernels of an amd64 binary: a plain 'go build' leaves out
// the vector kernels, and 'make build' puts them in (5–10 times faster).
func kernelNote(w io.Writer, cmd string) {
	if runtime.GOARCH != "amd64" || nn.Kernels() != "scalar" {
		return
	}
	fmt.Fprintf(w, "%s: note: training runs on the slow scalar kernels (this fedcast was built without GOEXPERIMENT=simd, "+
		"or the processor has no AVX2): expect 5–10 times the time; 'make build' builds bin/fedcast with the fast ones\n", cmd)
}

// writeBacktest prints the per-quarter table and writes the requested files.
func writeBacktest(env *Env, sum backtest.Summary, res *backtest.Result, hub, jsonOut, outDir, preset string) error {
	table := env.Stdout
	if jsonOut == "-" {
		table = env.Stderr // stdout carries the JSON alone
	}
	fmt.Fprintln(table, sum.Headline())
	if p := sum.Published; p != nil {
		fmt.Fprintf(env.Stdout, "published (ε %.3g per person per year, δ %.0e): relative WIS %.3f, relative MAE %.3f, 95%% coverage %.2f\n",
			p.EpsilonPerPersonYear, p.Delta, p.RelativeWIS, p.RelativeMAE, p.Coverage95)
		for _, g := range p.BySize {
			areas := "areas"
			if g.Areas == 1 {
				areas = "area"
			}
			fmt.Fprintf(table, "  %s (%d %s): published %.3f, unpublished %.3f\n", g.Group, g.Areas, areas, g.RelativeWIS, g.UnpublishedRelativeWIS)
		}
	}
	fmt.Fprintln(table)
	if err := sum.Markdown(table); err != nil {
		return err
	}
	if hub != "" {
		files, err := backtest.WriteHub(hub, preset, res)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "backtest: wrote %d hub files into %s\n", len(files), hub)
		staleHubNote(env.Stderr, hub, files)
		if files, err = backtest.WritePublishedHub(hub, preset, res); err != nil {
			return err
		}
		if len(files) > 0 {
			fmt.Fprintf(env.Stderr, "backtest: wrote %d published files into %s\n", len(files), filepath.Join(hub, "published"))
		}
	}
	if jsonOut == "-" {
		if err := sum.WriteJSON(env.Stdout); err != nil {
			return err
		}
	} else if jsonOut != "" {
		if err := writeFileWith(jsonOut, sum.WriteJSON); err != nil {
			return err
		}
	}
	if outDir != "" {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return err
		}
		if err := writeFileWith(filepath.Join(outDir, "relative_wis.svg"), func(w io.Writer) error { return backtest.WriteFigure(w, sum) }); err != nil {
			return err
		}
		err := writeFileWith(filepath.Join(outDir, "quarters.md"), func(w io.Writer) error {
			if _, err := fmt.Fprintf(w, "%s\n\n", sum.Headline()); err != nil {
				return err
			}
			return sum.Markdown(w)
		})
		if err != nil {
			return err
		}
		if err := writeFileWith(filepath.Join(outDir, "backtest.json"), sum.WriteJSON); err != nil {
			return err
		}
	}
	return nil
}

// staleHubNote says on stderr when the --hub folder holds CSV files this
// run did not write: a replay of a shorter span into the folder of a
// longer one left the longer one's other origins beside it, and a scorer
// reading the folder would mix the two runs.
func staleHubNote(w io.Writer, dir string, written []string) {
	mine := make(map[string]bool, len(written))
	for _, f := range written {
		mine[filepath.Base(f)] = true
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	var other []string
	for _, f := range all {
		if !mine[filepath.Base(f)] {
			other = append(other, filepath.Base(f))
		}
	}
	if len(other) == 0 {
		return
	}
	fmt.Fprintf(w, "backtest: note: %s also holds %s this run did not write (first: %s), from an earlier run or another preset: "+
		"a scorer reading the whole folder would mix them with this run's; use an empty folder for each run\n",
		dir, plural(len(other), "other CSV file"), other[0])
}

// scoringNotes says on stderr which forecasts were not scored and at
// which origins the hub baseline's ranges have less than 8 weeks behind
// them.
func scoringNotes(w io.Writer, sum backtest.Summary, short []time.Time) {
	if note := sum.UnscoredNote(); note != "" {
		fmt.Fprintf(w, "backtest: %s%s\n", strings.ToLower(note[:1]), note[1:])
	}
	if n := len(short); n > 0 {
		at := "the origin " + short[0].Format(time.DateOnly)
		if n > 1 {
			at = fmt.Sprintf("the %d origins up to %s", n, short[n-1].Format(time.DateOnly))
		}
		fmt.Fprintf(w, "backtest: at %s the cases file does not reach back the 8 weeks the hub baseline's ranges come from: there they use the weeks it has.\n", at)
	}
}

// noiseNote says on stderr, when the replay with noise scored worse than
// no change, how much noise each LHA's share of the shared model carried
// (z = c/m, the noise multiplier over the LHAs in a round, the planner's
// measure) and, for the design the planner's table measured, whether that
// noise is the likely cause: 30 counties at ε = 2 scored 3.8 without a
// word on why, while 400 at the same ε lose nothing to the noise.
func noiseNote(w io.Writer, sum backtest.Summary, sch backtest.Schedule, every int) {
	rw := float64(sum.RelativeWIS)
	if sch.NoiseMultiplier == 0 || sch.ExpectedClients < 1 || !(rw >= 1) {
		return
	}
	z := sch.NoiseMultiplier / float64(sch.ExpectedClients)
	note := fmt.Sprintf("backtest: the forecasts scored worse than no change (relative WIS %.3g). The noise per LHA is %.3g (noise multiplier %.3g over %s a round)",
		rw, z, sch.NoiseMultiplier, plural(sch.ExpectedClients, "LHA"))
	if t, err := plan.Embedded(); err == nil && t.Design == sum.Design {
		r := plan.Request{LHAs: sch.Clients, Epsilon: sch.Epsilon, Delta: sch.Delta}
		noisy, err1 := t.Assess(r, every, sch.NoiseMultiplier, sch.ExpectedClients)
		clean, err2 := t.Assess(r, every, 0, sch.ExpectedClients)
		if err1 == nil && err2 == nil {
			note += fmt.Sprintf("; at that noise the planner's table expects %s, against %.2f without noise", expectedWords(noisy.Expected), clean.Expected)
			if noisy.Expected > 1.05*clean.Expected {
				note += ": the noise is the likely cause. More LHAs, a larger --epsilon, or fewer campaigns or rounds lower it"
			} else {
				note += ": the noise is unlikely to be the cause"
			}
		}
	}
	fmt.Fprintf(w, "%s. '--epsilon inf' replays the same without noise.\n", note)
}

// floorNote says on w when the replay spent well under a finite budget:
// the calibration does not go below its smallest noise multiplier
// (privacy.NoiseMultiplier), so a budget beyond what that noise spends
// buys nothing, and "spent 8.25e+06" of 1e+09 in the headline would
// otherwise read as a fault.
func floorNote(w io.Writer, res *backtest.Result) {
	sch := res.Schedule
	spent := res.EpsilonSpent()
	if sch.NoiseMultiplier == 0 || math.IsInf(sch.Epsilon, 0) || !(spent < sch.Epsilon/2) {
		return
	}
	fmt.Fprintf(w, "backtest: the budget --epsilon %g is more than the least noise spends: at noise multiplier %.3g, the smallest the calibration uses, "+
		"the replay spent ε %.3g. A larger budget changes nothing; '--epsilon inf' replays without noise.\n", sch.Epsilon, sch.NoiseMultiplier, spent)
}

// expectedWords writes a relative WIS read from the planner's table.
func expectedWords(v float64) string {
	if v >= plan.MaxRelativeWIS {
		return fmt.Sprintf("%g or more", float64(plan.MaxRelativeWIS))
	}
	return fmt.Sprintf("%.2f", v)
}

// checkOutputs makes sure, before a replay that may take minutes, that its
// files can be written: the --hub and --out folders exist or can be made,
// and --json names a file in a folder that exists.
func checkOutputs(hub, jsonOut, outDir string) error {
	for _, d := range []struct{ flag, dir string }{{"--hub", hub}, {"--out", outDir}} {
		if d.dir == "" {
			continue
		}
		if err := os.MkdirAll(d.dir, 0o755); err != nil {
			return usagef("choose a folder that can be written", "%s %s: the folder cannot be made (%v)", d.flag, d.dir, err)
		}
	}
	if jsonOut == "" || jsonOut == "-" {
		return nil
	}
	if fi, err := os.Stat(filepath.Dir(jsonOut)); err != nil || !fi.IsDir() {
		return usagef("make the folder first, or choose another --json", "--json %s: the folder %s does not exist", jsonOut, filepath.Dir(jsonOut))
	}
	if fi, err := os.Stat(jsonOut); err == nil && fi.IsDir() {
		return usagef("name a file, e.g. --json "+filepath.Join(jsonOut, "backtest.json"), "--json %s is a folder", jsonOut)
	}
	return nil
}

// writeFileWith creates path and writes it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// parseBudget reads ε: a number > 0 or "inf".
func parseBudget(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "inf") || s == "∞" {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a budget: write a number above 0, such as 2, or inf", s)
	}
	return v, nil
}
