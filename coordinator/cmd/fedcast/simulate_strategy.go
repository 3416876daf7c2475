package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fedcast/fedcast/coordinator/experiment"
	"github.com/fedcast/fedcast/shared/fl"
)

const simulateStrategyUsage = `
Strategy and privacy level (docs/strategies.md):
  --strategy fedavg|mrmtl|cyclic
                            how the LHAs train together (default fedavg); cyclic trains the areas
                            in turn, each passing the model on, every area every round: with
                            --privacy client the coordinator adds c_t·S at every hand-off; with
                            example each turn is the area's own local DP-SGD (no hand-off noise);
                            with both, the two
  --lambda L                MR-MTL's pull λ ≥ 0 towards the federated model (0: local training; 'inf': FedAvg)
  --privacy client|example|both
                            client: DP-FedAvg, --epsilon is the coordinator's client-level ε (default);
                            example: local DP-SGD in every LHA, --epsilon is each LHA's example-level ε
                            and the coordinator adds no noise; both: --epsilon is client-level and every
                            LHA also runs local DP-SGD at --example-epsilon
  --example-epsilon E       each LHA's example-level ε with --privacy both
  --example-delta D         δ of the example-level guarantee (default: --delta)
  --example-rate Q          local DP-SGD's Poisson batch rate q_local (default 0.5)
  --example-clip C          L2 bound on one window's gradient (default 0.1)
  --embargo                 train only on windows whose target is known at the first test origin of the area`

// strategyFlags registers the strategy and example-level flags on fs and
// returns the function that reads them after parsing.
func strategyFlags(fs *flag.FlagSet) func() (experiment.StrategyOptions, error) {
	strategy := fs.String("strategy", string(fl.FedAvg), "training strategy: fedavg, mrmtl or cyclic")
	lambda := fs.String("lambda", "1", "MR-MTL's penalty λ ≥ 0 ('inf' is FedAvg)")
	level := fs.String("privacy", string(fl.ClientLevel), "privacy level: client, example or both")
	exEps := fs.String("example-epsilon", "", "each LHA's example-level ε with --privacy both")
	exDelta := fs.Float64("example-delta", 0, "δ of the example-level guarantee (default: --delta)")
	exRate := fs.Float64("example-rate", fl.DefaultExampleSampleRate, "local DP-SGD's Poisson batch rate q_local in (0, 1]")
	exClip := fs.Float64("example-clip", fl.DefaultExampleClip, "local DP-SGD's L2 bound on one window's gradient")
	embargo := fs.Bool("embargo", false, "drop training windows whose target comes after the area's first test origin")
	return func() (experiment.StrategyOptions, error) {
		o := experiment.StrategyOptions{Embargo: *embargo}
		var err error
		if o.Strategy, err = fl.ParseStrategy(*strategy); err != nil {
			return o, usagef("use --strategy fedavg, mrmtl or cyclic", "unknown strategy %q", *strategy)
		}
		if o.Privacy, err = fl.ParseGuarantee(*level); err != nil {
			return o, usagef("use --privacy client, example or both", "%v", err)
		}
		lam, err := parseLambda(*lambda)
		if err != nil {
			return o, usagef("e.g. --lambda 1 (0 is local training, inf is FedAvg)", "%v", err)
		}
		o.Lambda = fl.JSONFloat(lam)
		if flagSet(fs, "lambda") && o.Strategy != fl.MRMTL {
			return o, usagef("add --strategy mrmtl", "--lambda is MR-MTL's penalty; the strategy is %s", o.Strategy)
		}
		example := o.Privacy != fl.ClientLevel
		for _, name := range []string{"example-epsilon", "example-delta", "example-rate", "example-clip"} {
			if flagSet(fs, name) && !example {
				return o, usagef("add --privacy example or --privacy both", "--%s sets local DP-SGD, which --privacy client does not run", name)
			}
		}
		if flagSet(fs, "example-epsilon") {
			if o.Privacy != fl.BothLevels {
				return o, usagef("with --privacy example the --epsilon list is each LHA's ε", "--example-epsilon is for --privacy both")
			}
			eps, err := parseEpsilons(*exEps)
			if err != nil || len(eps) != 1 {
				return o, usagef("e.g. --example-epsilon 5", "--example-epsilon must be one ε, got %q", *exEps)
			}
			o.ExampleEpsilon = fl.JSONFloat(eps[0])
		} else if o.Privacy == fl.BothLevels {
			return o, usagef("e.g. --privacy both --epsilon 2 --example-epsilon 5", "--privacy both needs --example-epsilon")
		}
		if example {
			if flagSet(fs, "example-delta") && !(*exDelta > 0 && *exDelta < 1) {
				return o, usagef("e.g. --example-delta 1e-5", "--example-delta must be in (0, 1), got %v", *exDelta)
			}
			if !(*exRate > 0 && *exRate <= 1) {
				return o, usagef("e.g. --example-rate 0.5", "--example-rate must be in (0, 1], got %v", *exRate)
			}
			if !(*exClip > 0) || math.IsInf(*exClip, 0) {
				return o, usagef("e.g. --example-clip 1", "--example-clip must be a number > 0, got %v", *exClip)
			}
			o.ExampleDelta, o.ExampleRate, o.ExampleClip = *exDelta, *exRate, *exClip
		}
		if o.Strategy != fl.MRMTL {
			o.Lambda = 0
		}
		return o, nil
	}
}

// parseLambda reads λ: a number ≥ 0 or "inf".
func parseLambda(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "inf") || s == "∞" {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("λ %q is not a number ≥ 0 or 'inf'", s)
	}
	return v, nil
}
