package session

import (
	"fmt"
	"math"
	"slices"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// Top-ups (protocol.TopUp). The study an LHA agreed to is the one of its
// first welcome. A later welcome may differ from it only by top-ups: raises
// of the lifetime budget, each bound to the parameters before it and
// checked here (protocol.CheckTopUps: the chain, the filter order, and
// that every round composes to the new budget under the RDP filter).
//
// An LHA's limit (Options.MaxEpsilon, or without one the budget it agreed
// to) was fixed before it saw any result; the coordinator's decision to
// top up was not. So the LHA trains in a round only while the lifetime ε,
// accounted by a Rényi filter at the study's fixed order with the LHA's
// limit as its budget, stays within that limit (Feldman & Zrnic 2021): a
// top-up beyond its limit is refused simply by sitting out the added
// rounds.

// acceptStudy checks the study of a welcome after the first against the
// one this session holds, and takes it when it differs only by new,
// valid top-ups.
func (s *Session) acceptStudy(st protocol.Study) error {
	if !slices.Equal(s.study.PublicInputs, st.PublicInputs) {
		return fmt.Errorf("%w: the study's public inputs changed on reconnect", ErrBadStudy)
	}
	if s.study.ID() == st.ID() { // the same study: the hash covers every parameter
		return nil
	}
	up, err := protocol.CheckTopUps(s.study, st)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	if up.ID() != st.ID() {
		return fmt.Errorf("%w: the study parameters changed on reconnect beyond the announced top-ups", ErrBadStudy)
	}
	s.mu.Lock()
	s.study = up
	s.mu.Unlock()
	return nil
}

// checkFirstTopUps checks, at the first welcome, that a study already
// topped up composes to its announced budget under its filter.
func checkFirstTopUps(st protocol.Study) error {
	if len(st.TopUps) == 0 {
		return nil
	}
	last := st.TopUps[len(st.TopUps)-1]
	eps, err := privacy.FilterEpsilon(st.PlannedEvents(), st.Delta, last.Order)
	if err != nil {
		return err
	}
	if last.Epsilon != st.Epsilon || !(eps <= st.Epsilon*(1+1e-12)) || last.Order != st.TopUps[0].Order {
		return fmt.Errorf("top-up %d: all %d rounds compose to ε=%v under the filter, the study announces %v", last.Number, st.Rounds, eps, st.Epsilon)
	}
	return nil
}

// agreedLimit is this LHA's own limit: Options.MaxEpsilon, or the budget
// of the study it agreed to at its first welcome.
func (s *Session) agreedLimit() float64 {
	if s.opt.MaxEpsilon != 0 {
		return s.opt.MaxEpsilon
	}
	return s.agreed.Epsilon
}

// lifetimeEpsilon is the ε the limit is compared with after round: eps
// (the study accountant's) or, in a topped-up study, the larger ε of the
// rounds so far at the filter's fixed order.
func (s *Session) lifetimeEpsilon(round int, eps float64) float64 {
	if len(s.study.TopUps) == 0 {
		return eps
	}
	f, err := privacy.FilterEpsilon(s.studyEvents(round), s.study.Delta, s.study.FilterOrder())
	if err != nil {
		return math.Inf(1) // cannot account: over every limit
	}
	return max(eps, f)
}
