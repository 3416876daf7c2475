package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/fedcast/fedcast/coordinator/audit"
)

func init() {
	register(&command{
		Name:    "audit",
		Summary: "empirical privacy audit: a 95 % lower bound on ε from one run with canary clients",
		Run:     runAudit,
	})
}

const auditUsage = `audit --epsilon E [--delta D --clients N --expected M --rounds T --canaries K --seed S --noise-scale F] [--json]`

func runAudit(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "audit", auditUsage)
	eps := fs.Float64("epsilon", 0, "target ε the study's noise is calibrated for (required)")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	clients := fs.Int("clients", 20000, "N, the number of enrolled clients (canaries included)")
	expected := fs.Int("expected", 0, "m, the expected clients per round (default N/4: sampling rate 0.25)")
	rounds := fs.Int("rounds", 75, "T, the number of rounds")
	canaries := fs.Int("canaries", 5000, "K, the number of canary clients (each enrolled with probability 1/2)")
	seed := fs.Uint64("seed", 0, "seed for a reproducible run (research mode; default: fresh randomness, live noise)")
	scale := fs.Float64("noise-scale", 1, "TESTING ONLY: multiply the noise by F to emulate a broken mechanism")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	seen := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { seen[f.Name] = true })
	if !seen["epsilon"] {
		return usagef("fedcast audit --epsilon 2 --json", "--epsilon is required")
	}
	o := audit.Options{Epsilon: *eps, Delta: *delta, Clients: *clients, Expected: *expected, Rounds: *rounds,
		Canaries: *canaries, NoiseScale: *scale}
	if seen["seed"] {
		o.Seed = seed
	}
	if *scale != 1 {
		fmt.Fprintf(env.Stderr, "fedcast audit: WARNING: --noise-scale %g is for testing only: the audited mechanism adds %g × the noise the accountant assumes, so its privacy claim is FALSE by design\n", *scale, *scale)
	}
	res, err := audit.Run(ctx, o)
	if err != nil {
		// The package's errors begin "audit: ", which main's "fedcast
		// audit: " already says.
		return usagef("fedcast audit -h", "%s", strings.TrimPrefix(err.Error(), "audit: "))
	}
	if *asJSON {
		return writeJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "claimed ε = %.4f at δ = %g (noise multiplier %.6g", res.Epsilon, res.Delta, res.NoiseMultiplier)
	if res.NoiseScale != 1 {
		fmt.Fprintf(env.Stdout, ", noise ×%g: TESTING ONLY", res.NoiseScale)
	}
	fmt.Fprintf(env.Stdout, ")\nmeasured lower bound ε ≥ %.4f with %.0f %% confidence (%d canaries; best choice %d of %d guesses right)\n",
		res.EpsilonLower, 100*res.Confidence, res.Canaries, res.Correct, res.Guesses)
	return nil
}
