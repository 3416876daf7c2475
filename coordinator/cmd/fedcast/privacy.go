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

const privacyUsage = `privacy epsilon --sampling-rate Q --noise-multiplier C --rounds T --delta D [--accountant rdp|pld] [--json]
       fedcast privacy noise --epsilon E --delta D --sampling-rate Q --rounds T [--accountant rdp|pld] [--json]`

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

// privacyResult is the --json output of both calculations. Order is the
// best RDP order (0 with the PLD accountant, which has none);
// DiscretisationError is the PLD's bound on how far Epsilon is above the
// exact ε (PLD only). Epsilon is always the proven bound; ArguedEpsilon (RDP
// with 0 < q < 1 only) is the smaller figure of the fractional Rényi
// orders, whose bound is argued, not proven: shown beside, never used.
type privacyResult struct {
	Accountant          privacy.AccountantKind `json:"accountant"`
	Epsilon             float64                `json:"epsilon"`
	DiscretisationError *float64               `json:"discretisation_error,omitempty"`
	Delta               float64                `json:"delta"`
	Order               float64                `json:"order"`
	ArguedEpsilon       *float64               `json:"argued_epsilon,omitempty"`
	SamplingRate        float64                `json:"sampling_rate"`
	NoiseMultiplier     float64                `json:"noise_multiplier"`
	Rounds              int                    `json:"rounds"`
	TargetEpsilon       *float64               `json:"target_epsilon,omitempty"`
}

func runPrivacyEpsilon(env *Env, args []string) error {
	fs := newFlagSet(env, "privacy epsilon", "privacy epsilon --sampling-rate Q --noise-multiplier C --rounds T --delta D [--accountant rdp|pld] [--json]")
	q := fs.Float64("sampling-rate", 0, "client sampling rate q = m/N, in (0, 1] (required)")
	c := fs.Float64("noise-multiplier", 0, "noise multiplier c = σ/S (required)")
	rounds := fs.Int("rounds", 0, "number of rounds T (required)")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	acct := fs.String("accountant", string(privacy.DefaultAccountant), "privacy accountant: rdp (Rényi DP) or pld (privacy loss distribution)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, err := privacy.ParseAccountantKind(*acct)
	if err != nil {
		return usagef("--accountant is rdp or pld", "%v", err)
	}
	p := privacy.Params{SampleRate: *q, NoiseMultiplier: *c, Rounds: *rounds, Delta: *delta}
	if err := checkAll(
		privacy.CheckSampleRate(p.SampleRate), privacy.CheckNoiseMultiplier(p.NoiseMultiplier),
		privacy.CheckRounds(p.Rounds), privacy.CheckDelta(p.Delta)); err != nil {
		return usagef("all of --sampling-rate, --noise-multiplier, --rounds and --delta are needed", "%v", err)
	}
	res, err := privacyEpsilon(kind, p.SampleRate, p.NoiseMultiplier, p.Rounds, p.Delta)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "ε = %.6f at δ = %g (%s) after %d rounds with sampling rate %g and noise multiplier %g\n",
		res.Epsilon, p.Delta, res.method(), p.Rounds, p.SampleRate, p.NoiseMultiplier)
	return nil
}

// privacyEpsilon computes ε with accountant kind and fills the result.
func privacyEpsilon(kind privacy.AccountantKind, q, c float64, rounds int, delta float64) (privacyResult, error) {
	res := privacyResult{Accountant: kind, Delta: delta, SamplingRate: q, NoiseMultiplier: c, Rounds: rounds}
	if kind == privacy.AccountantPLD {
		est, err := privacy.PLDEpsilon([]privacy.Event{{SampleRate: q, NoiseMultiplier: c, Rounds: rounds}}, delta)
		if err != nil {
			return res, err
		}
		e := est.DiscretisationError()
		res.Epsilon, res.DiscretisationError = est.Epsilon, &e
		return res, nil
	}
	res.Epsilon, res.Order = privacy.Epsilon(q, c, rounds, delta)
	if q > 0 && q < 1 {
		a, _ := privacy.ArguedEpsilon(q, c, rounds, delta)
		res.ArguedEpsilon = &a
	}
	return res, nil
}

// method describes how ε was computed, for the text output.
func (r privacyResult) method() string {
	if r.Accountant == privacy.AccountantPLD {
		return fmt.Sprintf("PLD accountant, at most %.2g above the exact ε", *r.DiscretisationError)
	}
	if r.ArguedEpsilon != nil {
		return fmt.Sprintf("best RDP order %g, integer orders: proven; with fractional orders, argued not proven: %.6f", r.Order, *r.ArguedEpsilon)
	}
	return fmt.Sprintf("best RDP order %g", r.Order)
}

func runPrivacyNoise(env *Env, args []string) error {
	fs := newFlagSet(env, "privacy noise", "privacy noise --epsilon E --delta D --sampling-rate Q --rounds T [--accountant rdp|pld] [--json]")
	target := fs.Float64("epsilon", 0, "target ε (required)")
	delta := fs.Float64("delta", 1e-5, "δ of the (ε, δ) guarantee")
	q := fs.Float64("sampling-rate", 0, "client sampling rate q = m/N, in (0, 1] (required)")
	rounds := fs.Int("rounds", 0, "number of rounds T (required)")
	acct := fs.String("accountant", string(privacy.DefaultAccountant), "privacy accountant: rdp (Rényi DP) or pld (privacy loss distribution)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, err := privacy.ParseAccountantKind(*acct)
	if err != nil {
		return usagef("--accountant is rdp or pld", "%v", err)
	}
	if err := checkAll(privacy.CheckEpsilon(*target), privacy.CheckDelta(*delta),
		privacy.CheckSampleRate(*q), privacy.CheckRounds(*rounds)); err != nil {
		return usagef("all of --epsilon, --delta, --sampling-rate and --rounds are needed", "%v", err)
	}
	c, err := privacy.NoiseMultiplierFor(kind, *target, *delta, *q, *rounds)
	if err != nil {
		return err
	}
	res, err := privacyEpsilon(kind, *q, c, *rounds, *delta)
	if err != nil {
		return err
	}
	t := *target
	res.TargetEpsilon = &t
	if *asJSON {
		return writeJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "noise multiplier c = %.6f gives ε = %.6f ≤ %g at δ = %g (%s) over %d rounds with sampling rate %g\n",
		c, res.Epsilon, t, *delta, res.method(), *rounds, *q)
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
