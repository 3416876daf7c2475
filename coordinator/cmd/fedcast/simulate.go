package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/experiment"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func init() {
	register(&command{
		Name:    "simulate",
		Summary: "reproduce the paper's experiments on a case file (or built-in synthetic data)",
		Run:     runSimulate,
	})
}

const simulateUsage = `simulate --cases FILE [--counties FILE] --from YYYY-MM-DD --to YYYY-MM-DD --epsilon LIST --runs N
       [--preset default|paper] [--history H --rounds T --clients-per-round M --local-epochs E --clip S
        --learning-rate LR --hidden LIST --features log-change|counts --damping D --delta 1e-5
        --split temporal|random --accountant rdp|pld --seed S --json FILE --out DIR
        --point-forecast model|persistence --hub DIR]
       [--strategy fedavg|cyclic --noise-schedule SPEC]

--preset default (fedcast's design: log-change features over 13 input days
anchored at the no-change forecast, MLP 13-16-1 pretrained on synthetic
outbreaks, T=5, every area every round, E=30, S=0.5, lr=0.001, forecast change
damped by 0.5) or paper (10 input days, MLP 10-128-64-32-1 on counts, T=75,
m=100, E=30, S=0.5, lr=0.001); the other flags override single settings of
the preset.
Without --cases it runs on built-in synthetic data (fedcast data synth, seed 1).` + simulateStrategyUsage + `
--noise-schedule gives each round its own noise multiplier, composed exactly:
constant (default), linear:r, step:j,r, geometric:r (r = last round's c over
the first's; the scale is calibrated to each ε) or an explicit list c1,c2,…,cT.`

func runSimulate(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "simulate", simulateUsage)
	f := newSimulateFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, design, err := f.config(fs)
	if err != nil {
		return err
	}
	if err := f.loadData(env, fs, &cfg, &design); err != nil {
		return err
	}
	cfg.ClientsPerRound = design.ExpectedClients(len(cfg.Data.Regions))
	if !*f.quiet {
		cfg.Progress = env.Stderr
		fmt.Fprintf(env.Stderr, "simulate: %d ε × %d runs; progress below, one line per finished run\n", len(cfg.Epsilons), *f.runs)
		kernelNote(env.Stderr, "simulate")
	}
	rep, err := experiment.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return f.write(env, rep)
}

// simulateFlags are simulate's flags.
type simulateFlags struct {
	cases         *string
	counties      *string
	from          *string
	to            *string
	epsList       *string
	runs          *int
	preset        *string
	history       *int
	rounds        *int
	m             *int
	epochs        *int
	clip          *float64
	delta         *float64
	lr            *float64
	hidden        *string
	features      *string
	damping       *float64
	split         *string
	smoothing     *string
	seed          *uint64
	jsonOut       *string
	outDir        *string
	workers       *int
	evalEvery     *int
	quiet         *bool
	acct          *string
	point         *string
	hubDir        *string
	readStrategy  func() (experiment.StrategyOptions, error)
	noiseSchedule *string
}

// newSimulateFlags defines simulate's flags on fs.
func newSimulateFlags(fs *flag.FlagSet) *simulateFlags {
	return &simulateFlags{
		cases:         fs.String("cases", "", "case CSV (date,region,cases); empty: built-in synthetic outbreak"),
		counties:      fs.String("counties", "", "population CSV (county_id,name,state,population) for the strata"),
		from:          fs.String("from", "", "first day of the study window, YYYY-MM-DD (inclusive); empty: all data"),
		to:            fs.String("to", "", "last day of the study window, YYYY-MM-DD (inclusive); empty: all data"),
		epsList:       fs.String("epsilon", "1,2,inf", "comma-separated privacy budgets ε; 'inf' is non-DP"),
		runs:          fs.Int("runs", 1, "runs per ε (independent seeds)"),
		preset:        fs.String("preset", "default", "study design: default (fedcast's) or paper (every setting of the paper)"),
		history:       fs.Int("history", 0, "input days H of each window (default: the preset's, 13 or 10)"),
		rounds:        fs.Int("rounds", 0, "federated rounds T (default: the preset's, 5 or 75)"),
		m:             fs.Int("clients-per-round", 0, "expected clients per round m, q = m/N (default: the preset's, all areas or 100)"),
		epochs:        fs.Int("local-epochs", 0, "local full-batch Adam steps E per round (default: the preset's, 30)"),
		clip:          fs.Float64("clip", 0, "L2 clip bound S of each client update (default: the preset's, 0.5)"),
		delta:         fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee"),
		lr:            fs.Float64("learning-rate", 0, "Adam learning rate (default: the preset's, 0.001 for both)"),
		hidden:        fs.String("hidden", "", "hidden layer widths, e.g. 128,64,32; 'none' is a linear model (default: the preset's)"),
		features:      fs.String("features", "", "what the network reads: log-change or counts (default: the preset's)"),
		damping:       fs.Float64("damping", 0, "factor in (0, 1] on the forecast change of a log-change model (default: the preset's)"),
		split:         fs.String("split", "temporal", "per-area train/test split: temporal (last 10 % of windows test) or random (the paper's code)"),
		smoothing:     fs.String("smoothing", "centered", "7-day moving average: centered (paper) or trailing"),
		seed:          fs.Uint64("seed", 1, "seed of the experiment (run r uses a seed derived from it)"),
		jsonOut:       fs.String("json", "", "write the results as JSON to this file"),
		outDir:        fs.String("out", "", "write report.json and the figures (PNG and SVG) into this directory"),
		workers:       fs.Int("workers", 0, "goroutines training, shared by the runs and the clients within them (0: one per core)"),
		evalEvery:     fs.Int("eval-every", 5, "record test MAPE every this many rounds (convergence)"),
		quiet:         fs.Bool("quiet", false, "no progress on stderr"),
		acct:          fs.String("accountant", string(privacy.DefaultAccountant), "privacy accountant that calibrates the noise: rdp or pld"),
		point:         fs.String("point-forecast", experiment.PointModel, "point forecaster the quantile forecasts wrap: model (the trained model) or persistence (last value; no training)"),
		hubDir:        fs.String("hub", "", "write the first run's test-period quantile forecasts per ε as hub CSV files into this directory"),
		readStrategy:  strategyFlags(fs),
		noiseSchedule: fs.String("noise-schedule", privacy.RuleConstant, "per-round noise multipliers: constant, linear:r, step:j,r, geometric:r or c1,c2,…,cT"),
	}
}

// config reads the flags into the experiment's setting and the design it
// starts from (the preset with the flags' overrides), or a usage error.
func (f *simulateFlags) config(fs *flag.FlagSet) (experiment.Config, model.Design, error) {
	grid, design, err := f.design(fs)
	if err != nil {
		return grid, design, err
	}
	cfg := experiment.Config{
		Damping: design.Damping, History: design.History,
		Epsilons: grid.Epsilons, Runs: *f.runs, Rounds: design.Rounds, LocalEpochs: design.LocalEpochs,
		Clip: design.Clip, Delta: *f.delta, LearningRate: design.LearningRate, Seed: *f.seed, Workers: *f.workers, EvalEvery: *f.evalEvery,
		Hidden: design.Hidden, Features: design.Features, Preset: design.Name,
		CasesFile: *f.cases, PopulationFile: *f.counties, Accountant: grid.Accountant, PointForecast: *f.point,
		StrategyOptions: grid.StrategyOptions, NoiseSchedule: *f.noiseSchedule,
	}
	if cfg.Split, err = series.ParseSplit(*f.split); err != nil {
		return cfg, design, usagef("use --split temporal or --split random", "%v", err)
	}
	switch *f.smoothing {
	case "centered", "centred":
		cfg.Smoothing = series.Centered
	case "trailing":
		cfg.Smoothing = series.Trailing
	default:
		return cfg, design, usagef("use --smoothing centered or --smoothing trailing", "unknown smoothing %q", *f.smoothing)
	}
	if cfg.From, err = parseDay(*f.from, "--from"); err != nil {
		return cfg, design, err
	}
	if cfg.To, err = parseDay(*f.to, "--to"); err != nil {
		return cfg, design, err
	}
	if !cfg.From.IsZero() && !cfg.To.IsZero() && cfg.To.Before(cfg.From) {
		return cfg, design, usagef("", "--to %s is before --from %s", *f.to, *f.from)
	}
	return cfg, design, nil
}

// design reads the strategy, accountant, noise schedule, ε grid and point
// forecaster, and the preset with the flags' overrides; the Config it
// returns holds the grid, the accountant and the strategy.
func (f *simulateFlags) design(fs *flag.FlagSet) (experiment.Config, model.Design, error) {
	var cfg experiment.Config
	var design model.Design
	strategy, err := f.readStrategy()
	if err != nil {
		return cfg, design, err
	}
	kind, err := privacy.ParseAccountantKind(*f.acct)
	if err != nil {
		return cfg, design, usagef("use --accountant rdp or --accountant pld", "%v", err)
	}
	if _, err := privacy.ParseSchedule(*f.noiseSchedule); err != nil {
		return cfg, design, usagef("e.g. --noise-schedule linear:0.5 (less noise in the last round) or --noise-schedule step:5,0.8", "%v", err)
	}
	eps, err := parseEpsilons(*f.epsList)
	if err != nil {
		return cfg, design, usagef("example: --epsilon 0.5,1,2,inf", "%v", err)
	}
	if *f.point != experiment.PointModel && *f.point != experiment.PointPersistence {
		return cfg, design, usagef("use --point-forecast model or --point-forecast persistence", "unknown point forecaster %q", *f.point)
	}
	design, err = model.Preset(*f.preset)
	if err == nil && design.Features == model.Lipschitz {
		err = fmt.Errorf("simulate does not bound the layers' norms: measure the publishable design with 'fedcast backtest --preset lipschitz'")
	}
	if err != nil {
		return cfg, design, usagef("use --preset default or --preset paper", "%v", err)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"runs", *f.runs}, {"history", *f.history}, {"rounds", *f.rounds}, {"clients-per-round", *f.m}, {"local-epochs", *f.epochs}, {"eval-every", *f.evalEvery}} {
		if c.v < 1 && (flagSet(fs, c.name) || c.name == "runs" || c.name == "eval-every") {
			return cfg, design, usagef("", "--%s must be at least 1, got %d", c.name, c.v)
		}
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"clip", *f.clip}, {"learning-rate", *f.lr}} {
		if flagSet(fs, c.name) && !(c.v > 0 && !math.IsInf(c.v, 0)) {
			return cfg, design, usagef("", "--%s must be a number > 0, got %v", c.name, c.v)
		}
	}
	if *f.history > 0 {
		design.History = *f.history
	}
	if *f.rounds > 0 {
		design.Rounds = *f.rounds
	}
	if *f.m > 0 {
		design.ClientsPerRound = *f.m
	}
	if *f.epochs > 0 {
		design.LocalEpochs = *f.epochs
	}
	if *f.clip > 0 {
		design.Clip = *f.clip
	}
	if *f.lr > 0 {
		design.LearningRate = *f.lr
	}
	if flagSet(fs, "hidden") {
		if design.Hidden, err = parseHidden(*f.hidden); err != nil {
			return cfg, design, usagef("e.g. --hidden 128,64,32 or --hidden none", "%v", err)
		}
	}
	if flagSet(fs, "features") {
		if design.Features, err = model.Parse(*f.features); err != nil {
			return cfg, design, usagef("use --features log-change or --features counts", "%v", err)
		}
	}
	if flagSet(fs, "damping") {
		if err := model.CheckDamping(*f.damping); err != nil {
			return cfg, design, usagef("e.g. --damping 0.5", "%v", err)
		}
		design.Damping = *f.damping
	}
	cfg = experiment.Config{Epsilons: eps, Accountant: kind, StrategyOptions: strategy}
	return cfg, design, nil
}

// loadData reads the cases (or makes the built-in synthetic outbreak)
// and the populations into cfg; with the synthetic outbreak the design's
// m shrinks to a quarter of its areas unless --clients-per-round is set.
func (f *simulateFlags) loadData(env *Env, fs *flag.FlagSet, cfg *experiment.Config, design *model.Design) error {
	if *f.cases == "" {
		d, areas, err := synth.Generate(synth.Options{Seed: 1})
		if err != nil {
			return err
		}
		cfg.Data = d
		cfg.Populations = map[string]float64{}
		for _, a := range areas {
			cfg.Populations[a.ID] = a.Population
		}
		cfg.CasesFile = "built-in synthetic outbreak (fedcast data synth --seed 1)"
		if design.ClientsPerRound > len(areas) && !flagSet(fs, "clients-per-round") {
			design.ClientsPerRound = len(areas) / 4
		}
	} else {
		d, err := readCases(env, *f.cases, false, cfg.From, cfg.To)
		if err != nil {
			return err
		}
		cfg.Data = d
	}
	if *f.counties != "" {
		r, err := os.Open(*f.counties)
		if err != nil {
			return err
		}
		cfg.Populations, err = series.ParsePopulations(r, *f.counties)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// write prints the table and writes the JSON, hub files and figures the
// flags ask for.
func (f *simulateFlags) write(env *Env, rep *experiment.Report) error {
	if err := rep.WriteTable(env.Stdout); err != nil {
		return err
	}
	if *f.jsonOut != "" {
		if err := writeFileAtomic(*f.jsonOut, rep.WriteJSON); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote %s\n", *f.jsonOut)
	}
	if *f.hubDir != "" {
		files, err := rep.WriteHub(*f.hubDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote %d hub files into %s\n", len(files), *f.hubDir)
	}
	if *f.outDir != "" {
		files, err := rep.WriteFiles(*f.outDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote %d files into %s\n", len(files), *f.outDir)
	}
	return nil
}

// flagSet reports whether the command line set the named flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseHidden reads "128,64,32"; "none" (or "0") is no hidden layer.
func parseHidden(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "none" || s == "0" {
		return []int{}, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > 4096 {
			return nil, fmt.Errorf("hidden layer width %q is not a whole number in 1 … 4096", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseEpsilons reads "0.5,1,2,inf".
func parseEpsilons(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.EqualFold(f, "inf") || f == "∞" {
			out = append(out, math.Inf(1))
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ε %q is not a positive number or 'inf'", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ε given")
	}
	return out, nil
}

// parseDay reads YYYY-MM-DD as a UTC calendar day; "" is the zero time.
func parseDay(s, flagName string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, usagef("dates are written YYYY-MM-DD, e.g. 2020-11-01", "%s %q is not a date", flagName, s)
	}
	return t, nil
}

// writeFileAtomic writes through a temporary file and renames it, so that a
// failure never leaves a half-written file in place of an old one.
func writeFileAtomic(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file private (0600); results are for sharing.
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
