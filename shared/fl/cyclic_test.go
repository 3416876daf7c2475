package fl

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

func cyclicConfig(n, rounds int) Config {
	return Config{Clients: n, ExpectedClients: n, Rounds: rounds, ClipNorm: 0.5, NoiseMultiplier: 3,
		DP: true, LocalEpochs: 3, LearningRate: 1e-2}
}

// The per-client accounting of a whole cyclic study (each LHA's own T
// hand-offs, not the N·T of the study) is tested on the one driver that
// runs it: coordinator/study, TestInProcessCyclicOwnHandOffs.

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

// CheckCyclic refuses sampling (m < N); the multiplier of a DP-FedAvg
// study (with its amplification by sampling) does not cover a cyclic one
// (q = 1), which CyclicEpsilon shows; and the one calibrated at q = 1
// does, exactly.
func TestCyclicRefusesSampling(t *testing.T) {
	cfg := cyclicConfig(4, 2)
	cfg.ExpectedClients = 2
	if err := CheckCyclic(cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("cyclic with m < N: %v, want ErrConfig", err)
	}
	if err := CheckCyclic(cyclicConfig(4, 2)); err != nil {
		t.Errorf("cyclic with m = N: %v", err)
	}
	cfg = cyclicConfig(4, 10)
	cfg.NoiseMultiplier, _ = privacy.NoiseMultiplier(1, 1e-5, 0.25, 10)
	if eps, err := CyclicEpsilon(cfg, 1e-5); err != nil || !(eps > 1.5) {
		t.Errorf("cyclic at the multiplier of q = 0.25: ε %v (%v), want well above 1", eps, err)
	}
	cfg.NoiseMultiplier, _ = privacy.NoiseMultiplier(1, 1e-5, 1, 10)
	if eps, err := CyclicEpsilon(cfg, 1e-5); err != nil || !(eps <= 1) || eps < 0.999 {
		t.Errorf("cyclic at the multiplier of q = 1: ε %v (%v), want 1", eps, err)
	}
}

// CyclicOrder is a permutation, the same for the same (seed, round), a
// copy the caller may change without changing CyclicTurn's answer.
func TestCyclicOrderIsACopy(t *testing.T) {
	seed := strings.Repeat("ab", 32)
	o := CyclicOrder(seed, 3, 9)
	if !slices.Equal(slices.Sorted(slices.Values(o)), []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("order %v is not a permutation of 9", o)
	}
	want := slices.Clone(o)
	o[0], o[1] = o[1], o[0]
	for pos := range 9 {
		if r, p, c := CyclicTurn(seed, 2*9+pos+1, 9); r != 3 || p != pos || c != want[pos] {
			t.Fatalf("turn %d: round %d, position %d, client %d; want 3, %d, %d", 2*9+pos+1, r, p, c, pos, want[pos])
		}
	}
	if slices.Equal(CyclicOrder(seed, 4, 9), want) && slices.Equal(CyclicOrder(seed, 5, 9), want) {
		t.Error("rounds 3, 4 and 5 have the same order")
	}
}
