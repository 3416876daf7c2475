package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
)

// A top-up raises a continuing study's lifetime budget after it was
// created: it adds campaigns (of the study's rounds per campaign, on the
// same timetable, after the planned ones) whose noise is calibrated so that
// all rounds, planned and added, compose to the new budget. The coordinator
// records it in its ledger and sends it in the welcome (Study.TopUps);
// every LHA checks it (CheckTopUps) and trains in the added rounds only
// while its own limit, fixed before it joined, allows.
//
// The decision to top up is made after seeing results, so the added rounds
// are an adaptive choice: their ε is accounted by a Rényi privacy filter
// (privacy.Filter, Feldman & Zrnic 2021) at one order fixed before any
// result (the order that minimises the ε of the study's plan at creation),
// never by PLD and never by minimising over orders after the fact.

// MaxTopUps bounds the top-ups of a study (a welcome carrying more is
// malformed).
const MaxTopUps = 64

// TopUp is one raise of the lifetime budget, as recorded in the ledger.
type TopUp struct {
	// Number is 1 for the first top-up of the study, then 2, …
	Number int `json:"number"`
	// FromEpsilon is the lifetime budget before it, Epsilon the new one.
	FromEpsilon float64 `json:"from_epsilon"`
	Epsilon     float64 `json:"epsilon"`
	// Campaigns is the number of campaigns it adds, Rounds their rounds.
	Campaigns int `json:"campaigns"`
	Rounds    int `json:"rounds"`
	// NoiseMultiplier is c' of every added round.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// Order is the filter's Rényi order α (the same for every top-up).
	Order float64 `json:"order"`
	// Previous is the ID (study hash) of the public parameters before it: the
	// top-up is bound to the study each LHA agreed to.
	Previous string `json:"previous_sha256"`
	// At is when it was made.
	At time.Time `json:"at"`
}

// ErrTopUp is wrapped by every error about a top-up.
var ErrTopUp = errors.New("protocol: invalid top-up")

// PlannedEvents returns the privacy events of all the study's planned
// rounds (c_t of its noise schedule, or c).
func (st Study) PlannedEvents() []privacy.Event {
	if len(st.NoiseMultipliers) == 0 {
		return []privacy.Event{{SampleRate: st.SampleRate, NoiseMultiplier: st.NoiseMultiplier, Rounds: st.Rounds}}
	}
	return privacy.ScheduleEvents(st.SampleRate, st.NoiseMultipliers)
}

// FilterOrder returns the Rényi order of the study's privacy filter: the
// first top-up's, or, before any, the order that minimises ε of the
// planned rounds (fixed at creation, before any result).
func (st Study) FilterOrder() float64 {
	if len(st.TopUps) > 0 {
		return st.TopUps[0].Order
	}
	a := privacy.NewRDP(nil)
	for _, e := range st.PlannedEvents() {
		a.Compose(e.SampleRate, e.NoiseMultiplier, e.Rounds)
	}
	_, order := a.Epsilon(st.Delta)
	return order
}

// canTopUp says why the study cannot be topped up, or nil.
func (st Study) canTopUp() error {
	switch {
	case !st.ClientLevelDP() || math.IsInf(st.Epsilon, 1):
		return fmt.Errorf("%w: the study has no client-level budget to raise", ErrTopUp)
	case st.Sequential():
		return fmt.Errorf("%w: a study of strategy %q cannot be topped up", ErrTopUp, st.Strategy)
	case st.Helper != nil:
		// The helper keeps its own ledger per canonical study hash and its
		// own budget from the study value the LHAs sealed: a top-up would
		// be a new study to it.
		return fmt.Errorf("%w: a study with a helper (two-server aggregation) cannot be topped up; create a new study", ErrTopUp)
	case st.Accountant != "" && st.Accountant != privacy.AccountantRDP:
		return fmt.Errorf("%w: the study uses the %s accountant; a top-up is an adaptive choice and composes under an RDP filter, never PLD", ErrTopUp, st.Accountant)
	}
	return nil
}

// NewTopUp plans a top-up of st to the lifetime budget eps with campaigns
// more campaigns, made at at: it calibrates c' of the added rounds so
// that all rounds compose to eps under the filter.
func (st Study) NewTopUp(eps float64, campaigns int, at time.Time) (TopUp, error) {
	if err := st.canTopUp(); err != nil {
		return TopUp{}, err
	}
	if campaigns < 1 || campaigns > MaxRound {
		return TopUp{}, fmt.Errorf("%w: %d added campaigns (want at least 1)", ErrTopUp, campaigns)
	}
	if !(eps > st.Epsilon) || math.IsInf(eps, 1) {
		return TopUp{}, fmt.Errorf("%w: new budget ε=%v must be finite and above the current %v", ErrTopUp, eps, st.Epsilon)
	}
	rounds := campaigns * st.CampaignRounds()
	order := st.FilterOrder()
	c, err := privacy.TopUpNoise(st.PlannedEvents(), st.SampleRate, rounds, eps, st.Delta, order)
	if err != nil {
		return TopUp{}, fmt.Errorf("%w: %w", ErrTopUp, err)
	}
	return TopUp{Number: len(st.TopUps) + 1, FromEpsilon: st.Epsilon, Epsilon: eps, Campaigns: campaigns, Rounds: rounds,
		NoiseMultiplier: c, Order: order, Previous: st.ID(), At: at.UTC()}, nil
}

// Apply returns the study after top-up t, checking that t follows st (its
// number, previous parameters and budget), that its order is the study's
// filter order, and that all rounds, planned and added, compose to at most
// t.Epsilon under the filter.
func (st Study) Apply(t TopUp) (Study, error) {
	if err := st.canTopUp(); err != nil {
		return st, err
	}
	switch {
	case t.Number != len(st.TopUps)+1:
		return st, fmt.Errorf("%w: top-up %d after %d top-ups", ErrTopUp, t.Number, len(st.TopUps))
	case t.Previous != st.ID():
		return st, fmt.Errorf("%w: top-up %d was made for other study parameters (sha256 %s, these %s)", ErrTopUp, t.Number, t.Previous, st.ID())
	case t.FromEpsilon != st.Epsilon || !(t.Epsilon > t.FromEpsilon) || math.IsInf(t.Epsilon, 0) || math.IsNaN(t.Epsilon):
		return st, fmt.Errorf("%w: top-up %d from ε=%v to %v, the study's budget is %v", ErrTopUp, t.Number, t.FromEpsilon, t.Epsilon, st.Epsilon)
	case t.Campaigns < 1 || t.Rounds != t.Campaigns*st.CampaignRounds() || st.Rounds+t.Rounds > MaxRound:
		return st, fmt.Errorf("%w: top-up %d adds %d campaigns of %d rounds in all; the study's campaigns have %d rounds", ErrTopUp, t.Number, t.Campaigns, t.Rounds, st.CampaignRounds())
	case t.Order != st.FilterOrder():
		return st, fmt.Errorf("%w: top-up %d accounts at order %v, the study's filter order is %v", ErrTopUp, t.Number, t.Order, st.FilterOrder())
	case privacy.CheckNoiseMultiplier(t.NoiseMultiplier) != nil || t.NoiseMultiplier == 0:
		return st, fmt.Errorf("%w: top-up %d noise multiplier %v", ErrTopUp, t.Number, t.NoiseMultiplier)
	}
	out := st
	sched := slices.Clone(st.NoiseMultipliers)
	if len(sched) == 0 {
		sched = slices.Repeat([]float64{st.NoiseMultiplier}, st.Rounds)
	}
	out.NoiseMultipliers = append(sched, slices.Repeat([]float64{t.NoiseMultiplier}, t.Rounds)...)
	out.NoiseMultiplier = slices.Min(out.NoiseMultipliers)
	out.Rounds += t.Rounds
	out.Campaigns = st.CampaignCount() + t.Campaigns
	out.Epsilon = t.Epsilon
	out.TopUps = append(slices.Clone(st.TopUps), t)
	eps, err := privacy.FilterEpsilon(out.PlannedEvents(), out.Delta, t.Order)
	if err != nil {
		return st, fmt.Errorf("%w: top-up %d: %w", ErrTopUp, t.Number, err)
	}
	if !(eps <= t.Epsilon*(1+1e-12)) {
		return st, fmt.Errorf("%w: top-up %d: all %d rounds compose to ε=%v under the filter, above its budget %v", ErrTopUp, t.Number, out.Rounds, eps, t.Epsilon)
	}
	return out, nil
}

// CheckTopUps returns the study an LHA that agreed to old should now
// accept: old after the top-ups of cur it has not seen, each checked by
// Apply. It fails when cur does not extend old's top-ups or differs from
// old in anything but its top-ups.
func CheckTopUps(old, cur Study) (Study, error) {
	if len(cur.TopUps) < len(old.TopUps) {
		return old, fmt.Errorf("%w: the coordinator now shows %d top-ups, %d before", ErrTopUp, len(cur.TopUps), len(old.TopUps))
	}
	for i, t := range old.TopUps {
		a, _ := json.Marshal(t)
		b, _ := json.Marshal(cur.TopUps[i])
		if string(a) != string(b) {
			return old, fmt.Errorf("%w: top-up %d changed since it was announced", ErrTopUp, t.Number)
		}
	}
	st := old
	for _, t := range cur.TopUps[len(old.TopUps):] {
		var err error
		if st, err = st.Apply(t); err != nil {
			return old, err
		}
	}
	return st, nil
}
