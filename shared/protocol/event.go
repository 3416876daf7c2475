package protocol

import "github.com/fedcast/fedcast/shared/fl"

// Event (protocol.go) is fedcast's one privacy event of a committed round:
// the wire's round_result and welcome log carry it, the study's committed
// state (coordinator/study.State) and the ledger (coordinator/ledger.Round,
// its export) store it. The in-process engine's fl.Event is where it is
// computed; EventOf maps it, once. (privacy.Event is another thing: a run
// of identical rounds for the accountant.)
//
// Its JSON names are "sample_rate" (the wire and the ledger export since
// protocol 1) where fl.Event and `fedcast privacy --json` say
// "sampling_rate"; both contracts stay as they are.

// Mechanism is the noise mechanism of a committed round, recorded beside
// its Event (not on the wire: an LHA needs q, c and δ to recompute ε, not
// the lattice). Gamma is the lattice step γ and Sampler the noise
// sampler (privacy.SamplerName); 0 and "" in non-DP rounds and in rounds
// recorded before the lattice mechanism.
type Mechanism struct {
	Gamma   float64 `json:"gamma,omitempty"`
	Sampler string  `json:"sampler,omitempty"`
}

// EventOf returns the public event and the mechanism of the round that
// fl's engine committed as e, whose released model has hex SHA-256
// modelSHA256 (HashHex).
func EventOf(e fl.Event, modelSHA256 string) (Event, Mechanism) {
	return Event{Round: e.Round, SampleRate: e.SampleRate, NoiseMultiplier: e.NoiseMultiplier,
			Epsilon: e.Epsilon, Delta: e.Delta, ModelSHA256: modelSHA256, Accountant: string(e.Accountant)},
		Mechanism{Gamma: e.Gamma, Sampler: e.Sampler}
}
