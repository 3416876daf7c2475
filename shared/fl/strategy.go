package fl

import "fmt"

// Strategy names how the clients of a study train together. It is a study
// parameter (study-file field "strategy", `simulate --strategy`) and is
// public: every client checks it before it trains.
type Strategy string

const (
	// FedAvg is DP-FedAvg (spec §5): sampled clients train from the global
	// model and the coordinator averages their clipped updates. The zero
	// value "" means FedAvg (files and states written before the field).
	FedAvg Strategy = "fedavg"
	// MRMTL is mean-regularised multi-task learning (seed 001): each client
	// keeps a personal model pulled towards the federated one.
	MRMTL Strategy = "mrmtl"
	// Cyclic trains the clients in turn, each passing the model on (seed 002).
	Cyclic Strategy = "cyclic"
)

// Strategies lists the strategies fedcast knows, in the order help texts show them.
var Strategies = []Strategy{FedAvg, MRMTL, Cyclic}

// ParseStrategy reads a strategy name; "" is FedAvg.
func ParseStrategy(s string) (Strategy, error) {
	if s == "" {
		return FedAvg, nil
	}
	for _, k := range Strategies {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("fl: unknown strategy %q (want fedavg, mrmtl or cyclic)", s)
}

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
