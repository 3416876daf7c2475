package fl

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/privacy"
)

// Cyclic FL (seed 002, Beguier et al., Algorithm 2): in each round every
// enrolled client takes one turn, in a public order; a turn trains the
// model it receives on the client's own windows and hands the result on to
// the next client (through the coordinator). There is no averaging and no
// client sampling.
//
// One driver runs it, live and simulated: the study engine's cyclic state
// (coordinator/study, cyclic.go) behind its Coordinator, which `fedcast
// serve`, the worker and `fedcast simulate` (study.InProcess) drive. This
// package holds its transport-free parts: the public order (CyclicOrder,
// CyclicTurn), the hand-off (HandOff), each client's own account
// (CyclicAccountant) and the strategy (CyclicStrategy).
//
// # What is accounted (client-level DP)
//
// The coordinator receives the model a client trained, forms the change
// Δ = w_trained − w_received, re-clips it to S, and hands on
//
//	w ← w_received + clip_S(Δ) + N(0, (c_t·S)² I)
//
// on the lattice of privacy.Lattice, with the exact discrete Gaussian,
// exactly as a DP-FedAvg round with one client and divisor 1 (it is one:
// the hand-off is made by an Aggregator over a one-client configuration).
// Adjacency is the one of DP-FedAvg (a client's data replaced by nothing,
// so its change is zero): the hand-off's sensitivity is S and its noise
// c_t·S, the Gaussian mechanism with multiplier c_t and no amplification by
// sampling (q = 1: every client takes part in every round, publicly).
//
// A client's guarantee covers everything released that depends on its
// data. The hand-offs it produced depend on it directly. Every other
// hand-off is computed from released (noised) models and another client's
// data only, so from this client's point of view it is post-processing
// (seed 002, Theorem 9). Each client's accountant therefore composes
// exactly its own hand-offs: T of them, one per round, with RDP α/(2c_t²)
// each. A client's ε does not grow with the number of other clients, and
// the study's ε is the largest over clients (all equal when every client
// takes every turn).
//
// What this does not cover: the coordinator sees each clipped, un-noised
// change (the trust model of spec §5); the order of turns and who took part
// are public (they are drawn from a public seed, independently of the data).
//
// # Example-level variant
//
// With local DP-SGD (a Client with DPSGD) each client makes its own
// turn differentially private at the example level: the turn is E local
// DP-SGD steps (LocalDPSGD.Train: Poisson batches at q_local, per-window
// clipping to C, the discrete Gaussian at c_local·C) from a fresh Adam
// state, instead of LocalUpdate's full-batch steps. Each client keeps its own
// LocalDPSGD for the whole study, and its accountant composes the steps of
// its own turns only: E per round, E·T in all, the number the setting was
// calibrated for. The turns of the other clients read this client's data
// only through the models handed on, which its own DP-SGD already made
// private, so for it they are post-processing (seed 002, Theorem 9), as in
// the client-level case. The client-level hand-off (re-clip to S, noise
// c_t·S) then depends on Config.DP: off for privacy "example" (the model
// is handed on as the client trained it; the coordinator and the next
// client see it), on for "both" (both mechanisms, each with its own
// accountant; the two ε protect different units and are never added).

// CheckCyclic checks that cfg describes a cyclic study: a valid
// configuration in which every client takes a turn in every round
// (ExpectedClients = Clients, q = 1).
func CheckCyclic(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.ExpectedClients != cfg.Clients {
		return configErr("cyclic FL gives every client a turn in every round: expected clients per round m=%d must equal N=%d (q = 1, no sampling)",
			cfg.ExpectedClients, cfg.Clients)
	}
	return nil
}

// handOffConfig is the one-client configuration of a hand-off in round t:
// sensitivity S, divisor 1, noise c_t·S.
func handOffConfig(cfg Config, round int) Config {
	h := cfg.AtRound(round)
	h.Clients, h.ExpectedClients = 1, 1
	return h
}

// HandOff forms the model a client's turn hands on in round t (1-based)
// and writes it into next: in DP mode received + clip_S(trained − received)
// + the round's noise N(0, (c_t·S)²) on the lattice (see the Cyclic FL notes
// above); in non-DP mode trained as it is. A trained model with NaN or Inf
// (diverged training) is refused as the coordinator refuses such an update:
// the turn counts as a zero change, and in DP mode the noise is still drawn
// and added (the hand-off is released either way). It reports whether the
// client's model was used.
func HandOff(cfg Config, round int, received, trained, next []float64, noise *rand.Rand) (used bool) {
	if len(received) != len(trained) || len(next) != len(received) {
		panic("fl: HandOff: models of different lengths")
	}
	delta := make([]float64, len(received))
	for i := range delta {
		delta[i] = trained[i] - received[i]
	}
	ok := CheckUpdate(delta, len(received)) == nil
	if !cfg.DP {
		if ok {
			copy(next, trained)
		} else {
			copy(next, received)
		}
		return ok
	}
	agg := NewAggregator(handOffConfig(cfg, round), len(received))
	if ok {
		ok = agg.Add(delta) == nil
	}
	copy(next, received)
	agg.Finish(next, noise)
	return ok
}

// CyclicAccountant keeps each client's own privacy account in a cyclic
// study: client i's accountant composes the hand-offs client i produced and
// nothing else. Its fields are exported and it round-trips through JSON;
// HandOffs changes through Record only.
type CyclicAccountant struct {
	Kind  privacy.AccountantKind `json:"accountant"`
	Delta float64                `json:"delta"`
	// HandOffs[i] lists the noise multipliers of client i's hand-offs, in
	// order, as runs of equal c (q = 1).
	HandOffs [][]privacy.Event `json:"hand_offs"`

	// memo holds the ε of each account seen (by key: clients with the
	// same hand-offs share it); own[i] client i's ε when known[i] (a
	// study's ε, the largest, is asked for at every turn).
	memo  map[string]float64
	own   []float64
	known []bool
}

// NewCyclicAccountant returns empty accounts for clients clients.
func NewCyclicAccountant(kind privacy.AccountantKind, clients int, delta float64) *CyclicAccountant {
	return &CyclicAccountant{Kind: kind, Delta: delta, HandOffs: make([][]privacy.Event, clients)}
}

// Record adds one hand-off of client i with noise multiplier c.
func (a *CyclicAccountant) Record(i int, c float64) {
	a.HandOffs[i] = appendHandOff(a.HandOffs[i], c)
	if i < len(a.known) {
		a.known[i] = false
	}
}

func appendHandOff(evs []privacy.Event, c float64) []privacy.Event {
	if n := len(evs); n > 0 && evs[n-1].NoiseMultiplier == c {
		out := append([]privacy.Event(nil), evs...)
		out[n-1].Rounds++
		return out
	}
	return append(append([]privacy.Event(nil), evs...), privacy.Event{SampleRate: 1, NoiseMultiplier: c, Rounds: 1})
}

// Turns returns the number of hand-offs recorded for client i.
func (a *CyclicAccountant) Turns(i int) int {
	n := 0
	for _, e := range a.HandOffs[i] {
		n += e.Rounds
	}
	return n
}

// Epsilon returns client i's ε at Delta: the exact composition of its own
// hand-offs by the accountant (0 before its first).
func (a *CyclicAccountant) Epsilon(i int) float64 {
	if len(a.known) != len(a.HandOffs) {
		a.own, a.known = make([]float64, len(a.HandOffs)), make([]bool, len(a.HandOffs))
	}
	if !a.known[i] {
		a.own[i], a.known[i] = a.epsilon(a.HandOffs[i]), true
	}
	return a.own[i]
}

// EpsilonIfNext returns client i's ε after one more hand-off with noise
// multiplier c.
func (a *CyclicAccountant) EpsilonIfNext(i int, c float64) float64 {
	return a.epsilon(appendHandOff(a.HandOffs[i], c))
}

// MaxEpsilon returns the largest ε of any client: the study's guarantee.
func (a *CyclicAccountant) MaxEpsilon() float64 {
	m := 0.0
	for i := range a.HandOffs {
		m = max(m, a.Epsilon(i))
	}
	return m
}

func (a *CyclicAccountant) epsilon(evs []privacy.Event) float64 {
	if len(evs) == 0 {
		return 0
	}
	key := make([]byte, 0, 24*len(evs))
	for _, e := range evs {
		key = binary.LittleEndian.AppendUint64(key, math.Float64bits(e.SampleRate))
		key = binary.LittleEndian.AppendUint64(key, math.Float64bits(e.NoiseMultiplier))
		key = binary.LittleEndian.AppendUint64(key, uint64(e.Rounds))
	}
	if e, ok := a.memo[string(key)]; ok {
		return e
	}
	e, err := privacy.EpsilonFor(a.Kind, evs, a.Delta)
	if err != nil {
		return math.NaN() // the budget gates refuse NaN
	}
	if a.memo == nil {
		a.memo = map[string]float64{}
	}
	a.memo[string(key)] = e
	return e
}

// CyclicEpsilon returns ε at delta of one client of a cyclic study that
// takes its turn in each of the cfg.Rounds rounds: the composition of its
// own hand-offs with multipliers c_1 … c_T at q = 1 (see the Cyclic FL
// notes). Calibrate a cyclic study's schedule with q = 1:
// privacy.Schedule.Calibrate(kind, ε, δ, 1, T).
func CyclicEpsilon(cfg Config, delta float64) (float64, error) {
	a, err := cfg.Accounting()
	if err != nil {
		return 0, err
	}
	return a.Epsilon(CyclicStrategy{}.Events(cfg, cfg.Rounds), delta)
}

// CyclicStrategy is cyclic FL (Cyclic; see the notes above): a step is
// one client's turn in the round's public order, its hand-off the
// aggregate of one update (handOffConfig), and a client spends its own
// hand-offs only.
type CyclicStrategy struct{}

// Name returns Cyclic.
func (CyclicStrategy) Name() StrategyName { return Cyclic }

// Check is CheckCyclic.
func (CyclicStrategy) Check(cfg Config) error { return CheckCyclic(cfg) }

// Sequential is true.
func (CyclicStrategy) Sequential() bool { return true }

// Personal is false.
func (CyclicStrategy) Personal() bool { return false }

// Steps returns T·N turns.
func (CyclicStrategy) Steps(cfg Config) int { return cfg.Rounds * cfg.Clients }

// Plan returns the round of turn k and the client whose turn it is
// (CyclicTurn); no sample is drawn.
func (CyclicStrategy) Plan(cfg Config, seed string, k int, _ func() []int) (int, []int) {
	round, _, client := CyclicTurn(seed, k, cfg.Clients)
	return round, []int{client}
}

// StepConfig returns the hand-off's one-client configuration.
func (CyclicStrategy) StepConfig(cfg Config, round int) Config { return handOffConfig(cfg, round) }

// Combine adds the noised change to next (Aggregator.Finish, as HandOff).
func (CyclicStrategy) Combine(agg *Aggregator, next []float64, noise *rand.Rand) {
	agg.Finish(next, noise)
}

// Events returns a client's own hand-offs, one per round at (1, c_t).
func (CyclicStrategy) Events(cfg Config, rounds int) []privacy.Event {
	return privacy.RoundEvents(1, cfg.NoiseMultiplier, cfg.NoiseSchedule, rounds)
}
