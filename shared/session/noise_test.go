package session

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// scheduledStudy is fakeStudy with a noise schedule calibrated to ε = 5:
// c_1 = 2·c_2 ("step:1,0.5" over T = 2 rounds at q = 0.5).
func scheduledStudy(t *testing.T) protocol.Study {
	t.Helper()
	st := fakeStudy()
	st.Epsilon = 5
	sch, _ := privacy.ParseSchedule("step:1,0.5")
	cs, err := sch.Calibrate(privacy.AccountantRDP, st.Epsilon, st.Delta, st.SampleRate, st.Rounds)
	if err != nil {
		t.Fatal(err)
	}
	st.NoiseMultipliers, st.NoiseMultiplier = cs, slices.Min(cs)
	return st
}

// releasedAt is round r's event as a coordinator following the schedule
// cs would release it (cs[i] for round i+1, ε composed over rounds 1…r).
func releasedAt(st protocol.Study, r int, cs []float64, w []float64) protocol.Event {
	acc := privacy.NewRDP(nil)
	for _, c := range cs[:r] {
		acc.Compose(st.SampleRate, c, 1)
	}
	eps, _ := acc.Epsilon(st.Delta)
	return protocol.Event{Round: r, SampleRate: st.SampleRate, NoiseMultiplier: cs[r-1], Delta: st.Delta, Epsilon: eps,
		ModelSHA256: protocol.HashHex(w), Accountant: string(st.Accountant)}
}

// The LHA checks each released round's c against the announced schedule:
// rounds at c_1, c_2 are taken and give the composed ε; a round at any
// other c (the constant c, or the other round's c_t) is refused.
func TestSessionRefusesRoundOffSchedule(t *testing.T) {
	st := scheduledStudy(t)
	cs := st.NoiseMultipliers
	w := []float64{0.1, 0.2, 0.3, 0}
	s := &Session{}
	if err := s.welcome(&protocol.Welcome{Study: st, LHA: "A", State: protocol.StateRunning,
		Log: []protocol.Event{releasedAt(st, 1, cs, w), releasedAt(st, 2, cs, w)}}); err != nil {
		t.Fatalf("rounds on the schedule refused: %v", err)
	}
	want, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, st.SampleRate, cs, st.Delta)
	if got := s.LocalEpsilon(); math.Abs(got-want) > 1e-12 || !(got <= st.Epsilon) {
		t.Errorf("ε recomputed %v, schedule composes to %v (budget %v)", got, want, st.Epsilon)
	}
	for name, off := range map[string][]float64{
		"round 1 at the constant c": {cs[1], cs[1]},
		"round 2 at c_1":            {cs[0], cs[0]},
		"round 2 a hair off c_2":    {cs[0], cs[1] * (1 + 1e-12)},
	} {
		s := &Session{}
		log := []protocol.Event{releasedAt(st, 1, off, w), releasedAt(st, 2, off, w)}
		if err := s.welcome(&protocol.Welcome{Study: st, LHA: "A", State: protocol.StateRunning, Log: log}); !errors.Is(err, ErrBudgetMismatch) {
			t.Errorf("%s: %v, want ErrBudgetMismatch", name, err)
		}
	}
}

// A study whose schedule does not add up is refused before joining, and a
// reconnect may not change the schedule.
func TestSessionChecksAnnouncedSchedule(t *testing.T) {
	good := scheduledStudy(t)
	for name, mod := range map[string]func(*protocol.Study){
		"wrong length":       func(st *protocol.Study) { st.NoiseMultipliers = st.NoiseMultipliers[:1] },
		"c not the smallest": func(st *protocol.Study) { st.NoiseMultiplier = st.NoiseMultipliers[0] },
		"over budget": func(st *protocol.Study) {
			st.NoiseMultipliers = []float64{st.NoiseMultipliers[1], st.NoiseMultipliers[1]}
		},
		"zero multiplier": func(st *protocol.Study) {
			st.NoiseMultipliers = []float64{st.NoiseMultipliers[0], 0}
			st.NoiseMultiplier = 0
		},
		"cyclic strategy":  func(st *protocol.Study) { st.Strategy = "cyclic" },
		"unknown strategy": func(st *protocol.Study) { st.Strategy = "gossip" },
	} {
		st := good
		st.NoiseMultipliers = slices.Clone(good.NoiseMultipliers)
		mod(&st)
		if err := (&Session{}).welcome(&protocol.Welcome{Study: st, LHA: "A", State: protocol.StateWaiting}); !errors.Is(err, ErrBadStudy) {
			t.Errorf("%s: %v, want ErrBadStudy", name, err)
		}
	}
	s := &Session{}
	if err := s.welcome(&protocol.Welcome{Study: good, LHA: "A", State: protocol.StateWaiting}); err != nil {
		t.Fatal(err)
	}
	changed := good
	changed.NoiseMultipliers = []float64{good.NoiseMultipliers[0] * 1.01, good.NoiseMultipliers[1]}
	if err := s.welcome(&protocol.Welcome{Study: changed, LHA: "A", State: protocol.StateWaiting}); !errors.Is(err, ErrBadStudy) {
		t.Errorf("schedule changed on reconnect: %v", err)
	}
	fedavg := fakeStudy()
	fedavg.Strategy = "fedavg"
	if err := (&Session{}).welcome(&protocol.Welcome{Study: fedavg, LHA: "A", State: protocol.StateWaiting}); err != nil {
		t.Errorf("strategy fedavg refused: %v", err)
	}
}
