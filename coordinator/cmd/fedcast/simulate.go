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
       [--rounds 75 --clients-per-round 100 --local-epochs 30 --clip 0.5 --delta 1e-5
        --split temporal|random --accountant rdp|pld --seed S --json FILE --out DIR
        --point-forecast model|persistence --hub DIR]

Without --cases it runs on built-in synthetic data (fedcast data synth, seed 1).`

func runSimulate(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "simulate", simulateUsage)
	cases := fs.String("cases", "", "case CSV (date,region,cases); empty: built-in synthetic outbreak")
	counties := fs.String("counties", "", "population CSV (county_id,name,state,population) for the strata")
	from := fs.String("from", "", "first day of the study window, YYYY-MM-DD (inclusive); empty: all data")
	to := fs.String("to", "", "last day of the study window, YYYY-MM-DD (inclusive); empty: all data")
	epsList := fs.String("epsilon", "1,2,inf", "comma-separated privacy budgets ε; 'inf' is non-DP")
	runs := fs.Int("runs", 1, "runs per ε (independent seeds)")
	rounds := fs.Int("rounds", 75, "federated rounds T")
	m := fs.Int("clients-per-round", 100, "expected clients per round m (q = m/N)")
	epochs := fs.Int("local-epochs", 30, "local full-batch Adam steps E per round")
	clip := fs.Float64("clip", 0.5, "L2 clip bound S of each client update")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	lr := fs.Float64("learning-rate", 1e-3, "Adam learning rate")
	split := fs.String("split", "temporal", "per-area train/test split: temporal (last 10 % of windows test) or random (the paper's code)")
	smoothing := fs.String("smoothing", "centered", "7-day moving average: centered (paper) or trailing")
	seed := fs.Uint64("seed", 1, "seed of the experiment (run r uses a seed derived from it)")
	jsonOut := fs.String("json", "", "write the results as JSON to this file")
	outDir := fs.String("out", "", "write report.json and the figures (PNG and SVG) into this directory")
	workers := fs.Int("workers", 0, "goroutines training, shared by the runs and the clients within them (0: one per core)")
	evalEvery := fs.Int("eval-every", 5, "record test MAPE every this many rounds (convergence)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	acct := fs.String("accountant", string(privacy.DefaultAccountant), "privacy accountant that calibrates the noise: rdp or pld")
	point := fs.String("point-forecast", experiment.PointModel, "point forecaster the quantile forecasts wrap: model (the trained model) or persistence (last value; no training)")
	hubDir := fs.String("hub", "", "write the first run's test-period quantile forecasts per ε as hub CSV files into this directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, err := privacy.ParseAccountantKind(*acct)
	if err != nil {
		return usagef("use --accountant rdp or --accountant pld", "%v", err)
	}
	eps, err := parseEpsilons(*epsList)
	if err != nil {
		return usagef("example: --epsilon 0.5,1,2,inf", "%v", err)
	}
	cfg := experiment.Config{
		Epsilons: eps, Runs: *runs, Rounds: *rounds, ClientsPerRound: *m, LocalEpochs: *epochs,
		Clip: *clip, Delta: *delta, LearningRate: *lr, Seed: *seed, Workers: *workers, EvalEvery: *evalEvery,
		CasesFile: *cases, PopulationFile: *counties, Accountant: kind, PointForecast: *point,
	}
	if *point != experiment.PointModel && *point != experiment.PointPersistence {
		return usagef("use --point-forecast model or --point-forecast persistence", "unknown point forecaster %q", *point)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"--runs", *runs}, {"--rounds", *rounds}, {"--clients-per-round", *m}, {"--local-epochs", *epochs}, {"--eval-every", *evalEvery}} {
		if c.v < 1 {
			return usagef("", "%s must be at least 1, got %d", c.name, c.v)
		}
	}
	if cfg.Split, err = series.ParseSplit(*split); err != nil {
		return usagef("use --split temporal or --split random", "%v", err)
	}
	switch *smoothing {
	case "centered", "centred":
		cfg.Smoothing = series.Centered
	case "trailing":
		cfg.Smoothing = series.Trailing
	default:
		return usagef("use --smoothing centered or --smoothing trailing", "unknown smoothing %q", *smoothing)
	}
	if cfg.From, err = parseDay(*from, "--from"); err != nil {
		return err
	}
	if cfg.To, err = parseDay(*to, "--to"); err != nil {
		return err
	}
	if !cfg.From.IsZero() && !cfg.To.IsZero() && cfg.To.Before(cfg.From) {
		return usagef("", "--to %s is before --from %s", *to, *from)
	}
	if *cases == "" {
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
		if *m > len(areas) && !flagSet(fs, "clients-per-round") {
			cfg.ClientsPerRound = len(areas) / 4
		}
	} else {
		if cfg.Data, err = readCases(env, *cases, false, cfg.From, cfg.To); err != nil {
			return err
		}
	}
	if *counties != "" {
		f, err := os.Open(*counties)
		if err != nil {
			return err
		}
		cfg.Populations, err = series.ParsePopulations(f, *counties)
		f.Close()
		if err != nil {
			return err
		}
	}
	if !*quiet {
		cfg.Progress = env.Stderr
		fmt.Fprintf(env.Stderr, "simulate: %d ε × %d runs; progress below, one line per finished run\n", len(eps), *runs)
	}
	rep, err := experiment.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(env.Stdout); err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := writeFileAtomic(*jsonOut, rep.WriteJSON); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote %s\n", *jsonOut)
	}
	if *hubDir != "" {
		files, err := rep.WriteHub(*hubDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote %d hub files into %s\n", len(files), *hubDir)
	}
	if *outDir != "" {
		files, err := rep.WriteFiles(*outDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote %d files into %s\n", len(files), *outDir)
	}
	return nil
}

// flagSet reports whether the command line set the named flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
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
