package ledger

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/secagg"
)

// secureRounds marks the rounds of a study with a helper (its study file
// names one) as secure_aggregation and gives each its epsilon_public: ε
// after the rounds so far with every round's noise multiplier c_t taken
// as √2·c_t (secagg.PublicNoiseMultiplier: the sum of both servers'
// noise, argued), by the study's accountant at the round's δ. Epsilon
// stays each server's ε.
func secureRounds(e *Export) error {
	var f struct {
		Helper json.RawMessage `json:"helper"`
	}
	if json.Unmarshal(e.Study, &f) != nil || len(f.Helper) == 0 || string(f.Helper) == "null" {
		return nil
	}
	kind, err := privacy.ParseAccountantKind(e.Accountant)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	var events []privacy.Event
	for i := range e.Rounds {
		r := &e.Rounds[i]
		r.SecureAggregation = true
		events = append(events, privacy.Event{SampleRate: r.SampleRate,
			NoiseMultiplier: secagg.PublicNoiseMultiplier(r.NoiseMultiplier), Rounds: 1})
		eps, err := privacy.EpsilonFor(kind, events, r.Delta)
		if err != nil || math.IsNaN(eps) {
			return fmt.Errorf("ledger: round %d: the public ε: %v", r.Round, err)
		}
		r.EpsilonPublic = &eps
	}
	return nil
}
