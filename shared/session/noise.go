package session

import (
	"fmt"
	"math"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// checkPrivacy checks a study's privacy parameters before this LHA takes
// part: the strategy is one this client runs (DP-FedAvg, MR-MTL or cyclic:
// in a cyclic study q = 1 and T rounds are each LHA's own T hand-offs, so
// the same check holds), and the study's
// T rounds, at c or with a noise schedule at c_1 … c_T, stay within the
// announced (ε, δ) by the announced accountant. A schedule must hold T
// valid multipliers whose smallest is c (fl.Config.Validate), and its ε is
// the exact composition of its rounds.
func checkPrivacy(st protocol.Study, kind privacy.AccountantKind) error {
	strategy, err := fl.LookupStrategy(fl.StrategyName(st.Strategy))
	if err != nil {
		return fmt.Errorf("this client cannot take part: %w", err)
	}
	if !st.ClientLevelDP() {
		// privacy "example": no client-level noise or budget may be
		// announced (a study cannot claim a client-level ε it does not
		// account for); the local DP-SGD setting is checked by NewClient.
		if st.Epsilon != 0 || st.NoiseMultiplier != 0 || len(st.NoiseMultipliers) != 0 {
			return fmt.Errorf("privacy \"example\" announced with client-level ε=%v, c=%v, schedule %v: the coordinator adds no noise in such a study",
				st.Epsilon, st.NoiseMultiplier, st.NoiseMultipliers)
		}
		for _, err := range []error{privacy.CheckDelta(st.Delta), privacy.CheckSampleRate(st.SampleRate), privacy.CheckRounds(st.Rounds)} {
			if err != nil {
				return err
			}
		}
		return nil
	}
	p := privacy.Params{Epsilon: st.Epsilon, Delta: st.Delta, SampleRate: st.SampleRate, NoiseMultiplier: st.NoiseMultiplier,
		ClipNorm: st.ClipNorm, Rounds: st.Rounds, Accountant: kind}
	if len(st.NoiseMultipliers) == 0 {
		return p.Validate()
	}
	if math.IsInf(st.Epsilon, 1) {
		return fmt.Errorf("a noise schedule in a study without a finite ε")
	}
	for _, err := range []error{privacy.CheckEpsilon(st.Epsilon), privacy.CheckDelta(st.Delta), privacy.CheckSampleRate(st.SampleRate),
		privacy.CheckClipNorm(st.ClipNorm), privacy.CheckRounds(st.Rounds)} {
		if err != nil {
			return err
		}
	}
	cfg, err := st.FLConfig()
	if err != nil {
		return err
	}
	cfg.Accountant = kind
	if err := cfg.Validate(); err != nil {
		return err
	}
	a, err := privacy.LookupAccountant(kind)
	if err != nil {
		return err
	}
	// A client that takes part in every round: the strategy's events
	// (the same T rounds at (q, c_t) for every strategy today, q = 1 for
	// cyclic hand-offs).
	eps, err := a.Epsilon(strategy.Events(cfg, st.Rounds), st.Delta)
	if err != nil {
		return err
	}
	if !(eps <= st.Epsilon) {
		return fmt.Errorf("%w: the noise schedule's %d rounds give ε=%.6g at δ=%g (%s accountant), above the announced ε=%g",
			privacy.ErrBudgetExhausted, st.Rounds, eps, st.Delta, kind, st.Epsilon)
	}
	return nil
}

// noiseAt returns the noise multiplier the study announced for round
// (1-based): c_round of its noise schedule, or its one c.
func (s *Session) noiseAt(round int) float64 {
	return privacy.MultiplierAt(s.study.NoiseMultiplier, s.study.NoiseMultipliers, round)
}

// studyEvents returns the privacy events of the study's first rounds
// rounds at the announced q and c_t.
func (s *Session) studyEvents(rounds int) []privacy.Event {
	return privacy.RoundEvents(s.study.SampleRate, s.study.NoiseMultiplier, s.study.NoiseMultipliers, rounds)
}
