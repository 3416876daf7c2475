package fl

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

func cyclicConfig(n, rounds int) Config {
	return Config{Clients: n, ExpectedClients: n, Rounds: rounds, ClipNorm: 0.5, NoiseMultiplier: 3,
		DP: true, LocalEpochs: 3, LearningRate: 1e-2}
}

// Each client's account holds exactly its own hand-offs (T of them, one per
// round), not the N·T hand-offs of the study, and its ε is the exact
// composition of those T Gaussian releases at q = 1: the same whether the
// study has 2 or 7 clients.
func TestCyclicAccountingCountsOwnHandOffs(t *testing.T) {
	const rounds, delta = 4, 1e-5
	sched, _ := privacy.ParseSchedule("linear:0.5")
	cs, err := sched.Calibrate(privacy.AccountantRDP, 2, delta, 1, rounds)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, 1, cs, delta)
	for _, n := range []int{2, 7} {
		cfg := cyclicConfig(n, rounds).WithSchedule(cs)
		var events []CyclicEvent
		sim := &CyclicSimulation{Model: nn.NewMLP(4, 8, 1), Config: cfg, Clients: toyClients(n, rand.New(rand.NewPCG(3, 3))),
			Epsilon: 2, Delta: delta, Seed: 9, OnRound: func(ev CyclicEvent, _ []float64) { events = append(events, ev) }}
		_, acct, err := sim.Run(context.Background())
		if err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		for i := 0; i < n; i++ {
			if got := acct.Turns(i); got != rounds {
				t.Errorf("N=%d: client %d's account holds %d hand-offs, want its own %d (the study made %d)", n, i, got, rounds, n*rounds)
			}
			if got := acct.Epsilon(i); math.Abs(got-want) > 1e-12*want || !(got <= 2) {
				t.Errorf("N=%d: client %d's ε = %v, want %v (≤ 2)", n, i, got, want)
			}
		}
		if len(events) != rounds {
			t.Fatalf("N=%d: %d round records", n, len(events))
		}
		for k, ev := range events {
			if ev.HandOffs != n || ev.NoiseMultiplier != cs[k] {
				t.Errorf("N=%d round %d: %+v, want %d hand-offs at c=%v", n, k+1, ev, n, cs[k])
			}
		}
		// Counting every hand-off of the study against each client would
		// spend far more: the accounting is not that.
		all := make([]float64, 0, n*rounds)
		for _, c := range cs {
			for range n {
				all = append(all, c)
			}
		}
		if everyone, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, 1, all, delta); !(everyone > want*math.Sqrt(float64(n))*0.9) {
			t.Errorf("N=%d: test premise: all hand-offs would give ε %v, own ones %v", n, everyone, want)
		}
	}
}

// The accountant composes per client: clients with different numbers of
// hand-offs have different ε, each that of its own.
func TestCyclicAccountantPerClient(t *testing.T) {
	a := NewCyclicAccountant(privacy.AccountantRDP, 3, 1e-5)
	a.Record(0, 4)
	a.Record(0, 4)
	a.Record(0, 2)
	a.Record(1, 4)
	for i, want := range []struct {
		turns int
		cs    []float64
	}{{3, []float64{4, 4, 2}}, {1, []float64{4}}, {0, nil}} {
		eps, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, 1, want.cs, 1e-5)
		if len(want.cs) == 0 {
			eps = 0
		}
		if a.Turns(i) != want.turns || a.Epsilon(i) != eps {
			t.Errorf("client %d: %d turns, ε %v; want %d, %v", i, a.Turns(i), a.Epsilon(i), want.turns, eps)
		}
	}
	if a.MaxEpsilon() != a.Epsilon(0) {
		t.Errorf("study ε %v, want the largest client's %v", a.MaxEpsilon(), a.Epsilon(0))
	}
	if next := a.EpsilonIfNext(1, 4); !(next > a.Epsilon(1)) || a.Turns(1) != 1 {
		t.Errorf("EpsilonIfNext changed the account or did not grow: %v", next)
	}
}

// A hand-off re-clips the client's change to S and adds N(0, (c·S)²) per
// coordinate. Checks: the mean of the noise (z6 per check: false rejection
// 1e-6), its variance (chi-square, normal approximation, z6), and the
// projection of the hand-off on the (clipped) change: S ± z6·c·S.
func TestHandOffClipsAndNoises(t *testing.T) {
	const d = 100000
	cfg := cyclicConfig(3, 2)
	cfg.NoiseMultiplier = 0.02
	received := make([]float64, d)
	trained := make([]float64, d)
	for i := range trained {
		received[i] = 1
		trained[i] = 1 + 10*float64(i%3) // a change far above S
	}
	next := make([]float64, d)
	if !HandOff(cfg, 1, received, trained, next, NewRand(5, StreamNoise)) {
		t.Fatal("a finite change was refused")
	}
	u := make([]float64, d)
	for i := range u {
		u[i] = trained[i] - received[i]
	}
	privacy.ClipL2(u, 1) // unit direction of the change
	sigma := cfg.NoiseMultiplier * cfg.ClipNorm
	var proj, s, ss float64
	for i := range next {
		v := next[i] - received[i]
		proj += v * u[i]
		e := v - cfg.ClipNorm*u[i] // the noise
		s += e
		ss += e * e
	}
	if math.Abs(proj-cfg.ClipNorm) > z6*sigma {
		t.Errorf("projection on the change %v, want S = %v ± %v", proj, cfg.ClipNorm, z6*sigma)
	}
	mean := s / d
	if math.Abs(mean) > z6*sigma/math.Sqrt(d) {
		t.Errorf("noise mean %v", mean)
	}
	if rel := (ss/d-mean*mean)/(sigma*sigma) - 1; math.Abs(rel) > z6*math.Sqrt(2.0/d)+1e-3 {
		t.Errorf("noise variance off by %v relative, want (c·S)² = %v", rel, sigma*sigma)
	}
	// A diverged turn counts as no change, and the noise is still added.
	trained[7] = math.NaN()
	if HandOff(cfg, 1, received, trained, next, NewRand(5, StreamNoise)) {
		t.Error("a NaN model was used")
	}
	moved := 0
	for i := range next {
		if math.IsNaN(next[i]) {
			t.Fatal("NaN handed on")
		}
		if next[i] != received[i] {
			moved++
		}
	}
	if moved < d/2 {
		t.Errorf("only %d of %d coordinates got noise after a refused turn", moved, d)
	}
}

// The hand-offs of round t use c_t of the schedule.
func TestHandOffFollowsSchedule(t *testing.T) {
	const d = 50000
	cfg := cyclicConfig(2, 2).WithSchedule([]float64{0.5, 4})
	for round, c := range map[int]float64{1: 0.5, 2: 4} {
		z := make([]float64, d)
		next := make([]float64, d)
		HandOff(cfg, round, z, z, next, NewRand(uint64(round), StreamNoise))
		var ss float64
		for _, v := range next {
			ss += v * v
		}
		sigma := c * cfg.ClipNorm
		if rel := ss/d/(sigma*sigma) - 1; math.Abs(rel) > z6*math.Sqrt(2.0/d)+1e-3 {
			t.Errorf("round %d: noise variance %v, want (c_t·S)² = %v", round, ss/d, sigma*sigma)
		}
	}
}

func TestCyclicRefusesSampling(t *testing.T) {
	cfg := cyclicConfig(4, 2)
	cfg.ExpectedClients = 2
	sim := &CyclicSimulation{Model: nn.NewMLP(4, 1), Config: cfg, Clients: toyClients(4, rand.New(rand.NewPCG(1, 1))), Epsilon: 5, Delta: 1e-5}
	if _, _, err := sim.Run(context.Background()); !errors.Is(err, ErrConfig) {
		t.Errorf("cyclic with m < N: %v, want ErrConfig", err)
	}
	// Over budget: the multiplier of a DP-FedAvg study (with its sampling
	// amplification) does not cover a cyclic one.
	cfg = cyclicConfig(4, 10)
	cfg.NoiseMultiplier, _ = privacy.NoiseMultiplier(1, 1e-5, 0.25, 10)
	sim = &CyclicSimulation{Model: nn.NewMLP(4, 1), Config: cfg, Clients: toyClients(4, rand.New(rand.NewPCG(1, 1))), Epsilon: 1, Delta: 1e-5}
	if _, _, err := sim.Run(context.Background()); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("cyclic calibrated with q = 0.25: %v, want ErrBudgetExhausted", err)
	}
}

// Without DP, cyclic training learns, and a swapped-in ClientStep is what
// trains each turn.
func TestCyclicLearnsAndStepSwaps(t *testing.T) {
	clients := toyClients(6, rand.New(rand.NewPCG(5, 5)))
	m := nn.NewMLP(4, 16, 8, 1)
	cfg := Config{Clients: 6, ExpectedClients: 6, Rounds: 15, LocalEpochs: 5, LearningRate: 1e-2}
	tr := nn.NewTrainer(m)
	loss := func(w []float64) (l float64) {
		for _, c := range clients {
			l += tr.Loss(w, c.X, c.Y)
		}
		return l
	}
	init := make([]float64, m.NumParams())
	m.Init(init, NewRand(1, StreamInit))
	sim := &CyclicSimulation{Model: m, Config: cfg, Clients: clients, Epsilon: math.Inf(1), Seed: 1, Initial: init}
	w, acct, err := sim.Run(context.Background())
	if err != nil || acct != nil {
		t.Fatal(err, acct)
	}
	if !(loss(w) < 0.1*loss(init)) {
		t.Errorf("cyclic training did not learn: loss %v → %v", loss(init), loss(w))
	}
	turns := 0
	sim.Step = func(t *nn.Trainer, model []float64, data ClientData, cfg Config, dst []float64) {
		turns++
		copy(dst, model)
	}
	w, _, err = sim.Run(context.Background())
	if err != nil || turns != 6*15 {
		t.Fatalf("%v; %d turns, want 90", err, turns)
	}
	for i := range w {
		if w[i] != init[i] {
			t.Fatal("a step that hands the model on unchanged changed it")
		}
	}
}
