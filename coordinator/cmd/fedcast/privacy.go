package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fedcast/fedcast/shared/privacy"
)

func init() {
	register(&command{
		Name:    "privacy",
		Summary: "privacy calculator: ε for a noise multiplier, or the noise for a target ε",
		Run:     runPrivacy,
	})
}

const privacyUsage = `privacy epsilon --sampling-rate Q --noise-multiplier C --rounds T --delta D [--json]
       fedcast privacy noise --epsilon E --delta D --sampling-rate Q --rounds T [--json]`

func runPrivacy(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("fedcast privacy epsilon -h, fedcast privacy noise -h", "which calculation? 'epsilon' or 'noise'")
	}
	switch args[0] {
	case "epsilon":
		return runPrivacyEpsilon(env, args[1:])
	case "noise":
		return runPrivacyNoise(env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(env.Stdout, "Usage: fedcast %s\n", privacyUsage)
		return nil
	}
	return usagef("use 'fedcast privacy epsilon' or 'fedcast privacy noise'", "unknown calculation %q", args[0])
}

// privacyResult is the --json output of both calculations.
type privacyResult struct {
	Epsilon         float64  `json:"epsilon"`
	Delta           float64  `json:"delta"`
	Order           float64  `json:"order"`
	SamplingRate    float64  `json:"sampling_rate"`
	NoiseMultiplier float64  `json:"noise_multiplier"`
	Rounds          int      `json:"rounds"`
	TargetEpsilon   *float64 `json:"target_epsilon,omitempty"`
}

func runPrivacyEpsilon(env *Env, args []string) error {
	fs := newFlagSet(env, "privacy epsilon", "privacy epsilon --sampling-rate Q --noise-multiplier C --rounds T --delta D [--json]")
	q := fs.Float64("sampling-rate", 0, "client sampling rate q = m/N, in (0, 1] (required)")
	c := fs.Float64("noise-multiplier", 0, "noise multiplier c = σ/S (required)")
	rounds := fs.Int("rounds", 0, "number of rounds T (required)")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p := privacy.Params{SampleRate: *q, NoiseMultiplier: *c, Rounds: *rounds, Delta: *delta}
	if err := checkAll(
		privacy.CheckSampleRate(p.SampleRate), privacy.CheckNoiseMultiplier(p.NoiseMultiplier),
		privacy.CheckRounds(p.Rounds), privacy.CheckDelta(p.Delta)); err != nil {
		return usagef("all of --sampling-rate, --noise-multiplier, --rounds and --delta are needed", "%v", err)
	}
	eps, order := privacy.Epsilon(p.SampleRate, p.NoiseMultiplier, p.Rounds, p.Delta)
	res := privacyResult{Epsilon: eps, Delta: p.Delta, Order: order, SamplingRate: p.SampleRate, NoiseMultiplier: p.NoiseMultiplier, Rounds: p.Rounds}
	if *asJSON {
		return writeJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "ε = %.6f at δ = %g (best RDP order %g) after %d rounds with sampling rate %g and noise multiplier %g\n",
		eps, p.Delta, order, p.Rounds, p.SampleRate, p.NoiseMultiplier)
	return nil
}

func runPrivacyNoise(env *Env, args []string) error {
	fs := newFlagSet(env, "privacy noise", "privacy noise --epsilon E --delta D --sampling-rate Q --rounds T [--json]")
	target := fs.Float64("epsilon", 0, "target ε (required)")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	q := fs.Float64("sampling-rate", 0, "client sampling rate q = m/N, in (0, 1] (required)")
	rounds := fs.Int("rounds", 0, "number of rounds T (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkAll(privacy.CheckEpsilon(*target), privacy.CheckDelta(*delta),
		privacy.CheckSampleRate(*q), privacy.CheckRounds(*rounds)); err != nil {
		return usagef("all of --epsilon, --delta, --sampling-rate and --rounds are needed", "%v", err)
	}
	c, err := privacy.NoiseMultiplier(*target, *delta, *q, *rounds)
	if err != nil {
		return err
	}
	eps, order := privacy.Epsilon(*q, c, *rounds, *delta)
	t := *target
	res := privacyResult{Epsilon: eps, Delta: *delta, Order: order, SamplingRate: *q, NoiseMultiplier: c, Rounds: *rounds, TargetEpsilon: &t}
	if *asJSON {
		return writeJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "noise multiplier c = %.6f gives ε = %.6f ≤ %g at δ = %g (best RDP order %g) over %d rounds with sampling rate %g\n",
		c, eps, t, *delta, order, *rounds, *q)
	return nil
}

func checkAll(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func writeJSON(env *Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	return enc.Encode(v)
}
