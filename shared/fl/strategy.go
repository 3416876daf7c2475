package fl

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/fedcast/fedcast/shared/privacy"
)

// StrategyName names how the clients of a study train together. It is a
// study parameter (study-file field "strategy", `simulate --strategy`) and
// is public: every client checks it before it trains. LookupStrategy turns
// it into the Strategy.
type StrategyName string

const (
	// FedAvg is DP-FedAvg (spec §5): sampled clients train from the global
	// model and the coordinator averages their clipped updates. The zero
	// value "" means FedAvg (files and states written before the field).
	FedAvg StrategyName = "fedavg"
	// MRMTL is mean-regularised multi-task learning (seed 001): each client
	// keeps a personal model pulled towards the federated one.
	MRMTL StrategyName = "mrmtl"
	// Cyclic trains the clients in turn, each passing the model on (seed 002).
	Cyclic StrategyName = "cyclic"
)

// Strategy is how the clients of a study train together: who trains in
// each step, how a step's updates become the next model, and the privacy
// events a client spends. The coordinator's engine, the LHA's session and
// the simulations hold a Strategy, never its name. A new strategy is a
// type implementing it (usually embedding one of the three below and
// overriding what differs) plus its entry in strategies.
type Strategy interface {
	// Name is the strategy's name in study files and on the command line.
	Name() StrategyName
	// Check validates a study's configuration for the strategy (errors
	// wrap ErrConfig).
	Check(cfg Config) error
	// Sequential reports whether the clients train in turn, each from the
	// model the one before handed on (a step is one turn, T·N steps), or
	// together (a step is a round of sampled clients, T steps).
	Sequential() bool
	// Personal reports whether each client keeps and forecasts with a
	// personal model (its Client holds it).
	Personal() bool
	// Steps returns the number of steps of a study: T, or T·N for a
	// sequential strategy.
	Steps(cfg Config) int
	// Plan returns the round step k (1-based) belongs to and who trains in
	// it. seed is the study's public order seed (the study file's hex
	// SHA-256); sample draws the round's sample (Poisson at q = m/N in DP
	// mode, or every client under secure aggregation).
	Plan(cfg Config, seed string, k int, sample func() []int) (round int, clients []int)
	// StepConfig is the configuration of the aggregate of a step in round
	// round (its divisor, clip bound and noise multiplier c_t).
	StepConfig(cfg Config, round int) Config
	// Combine finishes the step's aggregate agg (made for StepConfig) onto
	// next, which holds the model the step started from, drawing the noise
	// from noise. What it adds after agg.Finish is post-processing of the
	// released aggregate: it must not read the clients' updates.
	Combine(agg *Aggregator, next []float64, noise *rand.Rand)
	// Events returns the privacy events a client that takes part in each
	// of the first rounds rounds spends: the rounds at (q, c_t) for
	// sampled rounds, its own hand-offs at (1, c_t) for a sequential one.
	Events(cfg Config, rounds int) []privacy.Event
}

// strategies is the registry of the strategies fedcast knows, in the
// order help texts list them.
var strategies = []Strategy{FedAvgStrategy{}, MRMTLStrategy{}, CyclicStrategy{}}

// LookupStrategy returns the strategy named name; "" is FedAvg.
func LookupStrategy(name StrategyName) (Strategy, error) {
	if name == "" {
		name = FedAvg
	}
	names := make([]string, len(strategies))
	for i, s := range strategies {
		if s.Name() == name {
			return s, nil
		}
		names[i] = string(s.Name())
	}
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return nil, fmt.Errorf("fl: unknown strategy %q (want %s)", string(name), list)
}

// ParseStrategy reads a strategy name; "" is FedAvg.
func ParseStrategy(s string) (StrategyName, error) {
	st, err := LookupStrategy(StrategyName(s))
	if err != nil {
		return "", err
	}
	return st.Name(), nil
}

// StrategyNames lists the strategies fedcast knows, in the order help
// texts show them.
func StrategyNames() []StrategyName {
	out := make([]StrategyName, len(strategies))
	for i, s := range strategies {
		out[i] = s.Name()
	}
	return out
}

// FedAvgStrategy is DP-FedAvg (FedAvg): each round, a Poisson sample of
// the clients trains from the global model; the coordinator averages their
// clipped updates over m and adds the round's noise.
type FedAvgStrategy struct{}

// Name returns FedAvg.
func (FedAvgStrategy) Name() StrategyName { return FedAvg }

// Check validates cfg.
func (FedAvgStrategy) Check(cfg Config) error { return cfg.Validate() }

// Sequential is false: the sampled clients of a round train together.
func (FedAvgStrategy) Sequential() bool { return false }

// Personal is false: every client forecasts with the global model.
func (FedAvgStrategy) Personal() bool { return false }

// Steps returns T.
func (FedAvgStrategy) Steps(cfg Config) int { return cfg.Rounds }

// Plan returns round k and its sample.
func (FedAvgStrategy) Plan(_ Config, _ string, k int, sample func() []int) (int, []int) {
	return k, sample()
}

// StepConfig returns cfg at round's noise multiplier (Config.AtRound).
func (FedAvgStrategy) StepConfig(cfg Config, round int) Config { return cfg.AtRound(round) }

// Combine adds the noised mean update to next (Aggregator.Finish).
func (FedAvgStrategy) Combine(agg *Aggregator, next []float64, noise *rand.Rand) {
	agg.Finish(next, noise)
}

// Events returns the rounds at (q, c_t) (Config.PrivacyEvents).
func (FedAvgStrategy) Events(cfg Config, rounds int) []privacy.Event {
	return cfg.PrivacyEvents(rounds)
}

// MRMTLStrategy is MR-MTL (MRMTL): the coordinator's side is FedAvg's;
// each client keeps a personal model (Client, Pull).
type MRMTLStrategy struct{ FedAvgStrategy }

// Name returns MRMTL.
func (MRMTLStrategy) Name() StrategyName { return MRMTL }

// Personal is true.
func (MRMTLStrategy) Personal() bool { return true }

// Guarantee names what a study's differential privacy protects.
type Guarantee string

const (
	// ClientLevel protects one LHA's whole participation: DP-FedAvg's
	// clipping and noise at the coordinator. The zero value "" means ClientLevel.
	ClientLevel Guarantee = "client"
	// ExampleLevel protects one training window of one LHA: DP-SGD inside
	// each client, with the client's own accountant.
	ExampleLevel Guarantee = "example"
	// BothLevels composes both: local DP-SGD inside each client and
	// client-level noise at the coordinator.
	BothLevels Guarantee = "both"
)

// ParseGuarantee reads a guarantee name ("client", "example" or "both"); "" is ClientLevel.
func ParseGuarantee(s string) (Guarantee, error) {
	switch Guarantee(s) {
	case "":
		return ClientLevel, nil
	case ClientLevel, ExampleLevel, BothLevels:
		return Guarantee(s), nil
	}
	return "", fmt.Errorf("fl: unknown privacy level %q (want client, example or both)", s)
}
