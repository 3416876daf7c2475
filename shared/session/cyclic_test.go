package session

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// cyclicStudy is a cyclic study of 3 LHAs × 2 rounds at c = 1 (q = 1).
func cyclicStudy() protocol.Study {
	st := fakeStudy()
	st.Clients, st.ExpectedClients, st.SampleRate, st.Rounds = 3, 3, 1, 2
	st.Strategy = string(fl.Cyclic)
	st.CyclicSeed = strings.Repeat("ab", 32)
	return st
}

// turnsOf returns the turns of LHA i in st's timetable.
func turnsOf(st protocol.Study, i int) []int {
	var k []int
	for t := 1; t <= st.Rounds*st.Clients; t++ {
		if _, _, lha := fl.CyclicTurn(st.CyclicSeed, t, st.Clients); lha == i {
			k = append(k, t)
		}
	}
	return k
}

// handOff is turn k's event: c (0: missed) and ε of own hand-offs.
func handOff(st protocol.Study, k int, c, eps float64, w []float64) protocol.Event {
	return protocol.Event{Round: k, SampleRate: 1, NoiseMultiplier: c, Epsilon: eps, Delta: st.Delta,
		ModelSHA256: protocol.HashHex(w), Accountant: string(st.Accountant)}
}

func epsOf(t *testing.T, st protocol.Study, n int) float64 {
	t.Helper()
	if n == 0 {
		return 0
	}
	eps, err := privacy.EpsilonFor(privacy.AccountantRDP, []privacy.Event{{SampleRate: 1, NoiseMultiplier: st.NoiseMultiplier, Rounds: n}}, st.Delta)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

// TestSessionCyclicAccountsOwnHandOffs: in a cyclic study the LHA's
// client-level ε composes its own hand-offs only (the others' are
// post-processing), whatever the number of turns released; a missed turn
// (c = 0, model unchanged) costs nothing.
func TestSessionCyclicAccountsOwnHandOffs(t *testing.T) {
	st := cyclicStudy()
	const me = 1
	mine := map[int]bool{}
	for _, k := range turnsOf(st, me) {
		mine[k] = true
	}
	idx := me
	var log []protocol.Event
	own := 0
	w := []float64{0.1, 0.2, 0.3, 0.4}
	for k := 1; k <= 6; k++ {
		c := st.NoiseMultiplier
		if k == 4 && !mine[k] {
			c = 0 // another LHA missed its turn: the model is handed on unchanged
		} else {
			w = []float64{float64(k), 0.2, 0.3, 0.4}
		}
		if mine[k] {
			own++
		}
		log = append(log, handOff(st, k, c, epsOf(t, st, own), w))
	}
	s := &Session{}
	if err := s.welcome(&protocol.Welcome{Study: st, LHA: "B", Index: &idx, State: protocol.StateFinished, Log: log}); err != nil {
		t.Fatal(err)
	}
	if got, want := s.LocalEpsilon(), epsOf(t, st, 2); math.Abs(got-want) > 1e-12 {
		t.Fatalf("ε after 6 turns: %v, want that of this LHA's own 2 hand-offs %v (all 5 would give %v)", got, want, epsOf(t, st, 5))
	}
}

// TestSessionCyclicRefusals: the LHA refuses a cyclic study without its
// timetable or its index; a turn whose c departs from the announced one;
// a missed turn that changes the model; a round_start of a turn the
// timetable gives to another LHA; and it sits out a turn of its own that
// would take it past its own limit.
func TestSessionCyclicRefusals(t *testing.T) {
	st := cyclicStudy()
	idx := 0
	for name, w := range map[string]protocol.Welcome{
		"no index": {Study: st, LHA: "A"},
		"no seed":  {Study: func() protocol.Study { x := st; x.CyclicSeed = ""; return x }(), LHA: "A", Index: &idx},
		"m < N":    {Study: func() protocol.Study { x := st; x.ExpectedClients, x.SampleRate = 1, 1.0/3; return x }(), LHA: "A", Index: &idx},
	} {
		w.State = protocol.StateWaiting
		if err := (&Session{}).welcome(&w); !errors.Is(err, ErrBadStudy) {
			t.Errorf("%s: %v, want ErrBadStudy", name, err)
		}
	}
	w0 := []float64{0.1, 0.2, 0.3, 0.4}
	w1 := []float64{0.5, 0.2, 0.3, 0.4}
	for name, log := range map[string][]protocol.Event{
		"c off the schedule":      {handOff(st, 1, 1.5, 0, w1)},
		"missed turn with change": {handOff(st, 1, 1, 0, w0), handOff(st, 2, 0, 0, w1)},
		"q below 1":               {func() protocol.Event { e := handOff(st, 1, 1, 0, w1); e.SampleRate = 0.5; return e }()},
	} {
		// ε is not what is tested here: a turn that is this LHA's would be
		// refused for its ε too; give LHA index of nobody's first turns.
		other := 0
		if _, _, lha := fl.CyclicTurn(st.CyclicSeed, 1, 3); lha == 0 {
			other = 1
		}
		if _, _, lha := fl.CyclicTurn(st.CyclicSeed, 2, 3); lha == other {
			other = 3 - other - lha
			if _, _, l1 := fl.CyclicTurn(st.CyclicSeed, 1, 3); l1 == other {
				t.Skip("timetable seed gives no LHA free of turns 1 and 2")
			}
		}
		s := &Session{}
		if err := s.welcome(&protocol.Welcome{Study: st, LHA: "A", Index: &other, State: protocol.StateRunning, Log: log}); !errors.Is(err, ErrBudgetMismatch) {
			t.Errorf("%s: %v, want ErrBudgetMismatch", name, err)
		}
	}

	// round_start: only this LHA's own turns are trained, within its limit.
	mine := turnsOf(st, 0)
	s := &Session{}
	if err := s.welcome(&protocol.Welcome{Study: st, LHA: "A", Index: &idx, State: protocol.StateWaiting}); err != nil {
		t.Fatal(err)
	}
	notMine := 1
	for mine[0] == notMine {
		notMine++
	}
	if notMine != 1 {
		// Release turns 1 … notMine−1 so that notMine is the next turn.
		for k := 1; k < notMine; k++ {
			eps := 0.0
			if k == mine[0] {
				eps = epsOf(t, st, 1)
			}
			if _, err := s.event(handOff(st, k, 1, eps, []float64{float64(k), 0, 0, 0}), true); err != nil {
				t.Fatal(err)
			}
		}
	}
	var prev []float64
	if n := len(s.events); n > 0 {
		prev = []float64{float64(n), 0, 0, 0}
	} else {
		prev = []float64{0.1, 0.2, 0.3, 0.4}
	}
	set := func(State) {}
	err := s.answer(context.Background(), nil, fl.Config{}, &protocol.RoundStart{Round: notMine, TimeLeft: time.Minute, Picked: true, Weights: prev}, nil, math.Inf(1), Observer{}, set)
	if !errors.Is(err, ErrBadStudy) {
		t.Fatalf("round_start of another LHA's turn %d: %v, want ErrBadStudy", notMine, err)
	}
	// Its own turn, with a limit below one hand-off: sat out.
	lha, coord := Pipe()
	s2 := &Session{ws: lha, sampled: map[int]bool{}, answered: map[int]bool{}}
	if err := s2.welcome(&protocol.Welcome{Study: st, LHA: "A", Index: &idx, State: protocol.StateWaiting}); err != nil {
		t.Fatal(err)
	}
	for k := 1; k < mine[0]; k++ {
		if _, err := s2.event(handOff(st, k, 1, 0, []float64{float64(k), 0, 0, 0}), true); err != nil {
			t.Fatal(err)
		}
	}
	start := []float64{0.1, 0.2, 0.3, 0.4}
	if mine[0] > 1 {
		start = []float64{float64(mine[0] - 1), 0, 0, 0}
	}
	var skipped []Skip
	obs := Observer{Skipped: func(k Skip) { skipped = append(skipped, k) }}
	if err := s2.answer(context.Background(), nil, fl.Config{}, &protocol.RoundStart{Round: mine[0], TimeLeft: answerIn, Picked: true, Weights: start}, nil, epsOf(t, st, 1)*0.99, obs, set); err != nil {
		t.Fatal(err)
	}
	// Sat out, it answers with a dummy all the same.
	if k, b, err := coord.Read(context.Background(), protocol.FrameSize(st.Params)); err != nil {
		t.Fatal(err)
	} else if m, err := protocol.Decode(k, b); err != nil || !m.(*protocol.Update).Dummy {
		t.Errorf("own turn sat out: sent %v, %v; want a dummy", m, err)
	}
	if len(skipped) != 1 || skipped[0].Round != mine[0] || math.Abs(skipped[0].Epsilon-epsOf(t, st, 1)) > 1e-12 {
		t.Fatalf("own turn %d past the limit: skips %+v, want one at the ε of one hand-off %v", mine[0], skipped, epsOf(t, st, 1))
	}
}
