package fl

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// Cyclic FL (seed 002, Beguier et al., Algorithm 2): in each round every
// enrolled client takes one turn, in a public order; a turn trains the
// model it receives on the client's own windows and hands the result on to
// the next client (through the coordinator). There is no averaging and no
// client sampling.
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
// With local DP-SGD (CyclicSimulation.Example) each client makes its own
// turn differentially private at the example level: the turn is E local
// DP-SGD steps (LocalDPSGD.Train: Poisson batches at q_local, per-window
// clipping to C, the discrete Gaussian at c_local·C) from a fresh Adam
// state, instead of LocalTurn's full-batch steps. Each client keeps its own
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

// A ClientStep is one client's turn: it trains from model on the client's
// data and writes the model it hands on into dst (len(model)). model must
// not be modified. The default, LocalTurn, is LocalUpdate's E full-batch
// Adam steps from a fresh optimiser state.
type ClientStep func(t *nn.Trainer, model []float64, data ClientData, cfg Config, dst []float64)

// LocalTurn is the default ClientStep: cfg.LocalEpochs full-batch Adam
// steps from a fresh optimiser state starting at model; a client with no
// windows hands the model on unchanged. Clipping is left to the hand-off.
func LocalTurn(t *nn.Trainer, model []float64, data ClientData, cfg Config, dst []float64) {
	copy(dst, model)
	if len(data.Y) == 0 {
		return
	}
	t.Train(dst, data.X, data.Y, cfg.LocalEpochs, nn.AdamOptions{LearningRate: cfg.LearningRate})
}

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

// CyclicEvent is the record of one round of a cyclic study.
type CyclicEvent struct {
	Round int `json:"round"` // 1-based
	// NoiseMultiplier is c_t, the multiplier of every hand-off of the
	// round (0 in non-DP mode).
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// HandOffs is the number of turns taken (N), Refused those whose model
	// was not finite and counted as no change.
	HandOffs int `json:"hand_offs"`
	Refused  int `json:"refused"`
	// Epsilon is the largest per-client ε after the round (+Inf in non-DP mode).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// CyclicSimulation runs a cyclic study in process (research runs: its noise
// is reproducible, never use one for a release).
type CyclicSimulation struct {
	// Model is the architecture. Required.
	Model *nn.MLP
	// Initial, if set, is the initial model (copied); otherwise Model.Init
	// draws one from the run's StreamInit.
	Initial []float64
	// Config is the study setting; ExpectedClients must equal Clients
	// (CheckCyclic). In DP mode NoiseMultiplier (or NoiseSchedule) is the
	// multiplier of each hand-off, calibrated with q = 1 (CyclicEpsilon).
	Config Config
	// Clients holds every enrolled client's windows; len must be Config.Clients.
	Clients []ClientData
	// Epsilon is each client's budget at Delta; +Inf in non-DP mode.
	Epsilon, Delta float64
	// Seed derives the streams: StreamInit (initial model), StreamSampling
	// (the public order of turns, a fresh permutation every round) and
	// StreamNoise.
	Seed uint64
	// Step is a client's turn; nil means LocalTurn (or local DP-SGD when
	// Example is set; the two are exclusive).
	Step ClientStep
	// Example, if set, makes every turn local DP-SGD with this setting
	// (calibrated for E·T steps per client). Each client's own accountant
	// is in Locals after Run.
	Example *ExampleDP
	// Locals holds, after Run with Example set, each client's local DP-SGD
	// and its accountant (the steps of its own turns only).
	Locals []*LocalDPSGD
	// OnRound, if set, is called after each round with its record and the
	// model at the end of the round (not to be retained or modified).
	OnRound func(ev CyclicEvent, model []float64)
}

// Run executes the T rounds and returns the final model and the per-client
// accounts (nil in non-DP mode). It drives a CyclicServer: before it
// starts it refuses a study whose clients' ε would exceed the budget, and
// before every hand-off it checks that the client's own account stays
// within it (privacy.ErrBudgetExhausted).
func (s *CyclicSimulation) Run(ctx context.Context) ([]float64, *CyclicAccountant, error) {
	cfg := s.Config
	if err := CheckCyclic(cfg); err != nil {
		return nil, nil, err
	}
	if len(s.Clients) != cfg.Clients {
		return nil, nil, configErr("the simulation has %d clients' data but Config.Clients is %d", len(s.Clients), cfg.Clients)
	}
	dim := s.Model.NumParams()
	w := make([]float64, dim)
	if s.Initial != nil {
		if len(s.Initial) != dim {
			return nil, nil, configErr("the initial model has %d values, the architecture %d", len(s.Initial), dim)
		}
		copy(w, s.Initial)
	} else {
		s.Model.Init(w, NewRand(s.Seed, StreamInit))
	}
	if cfg.DP {
		if err := privacy.CheckDelta(s.Delta); err != nil {
			return nil, nil, err
		}
	}
	srv, err := NewCyclicServer(cfg, w, s.Epsilon, s.Delta)
	if err != nil {
		return nil, nil, err
	}
	step := s.Step
	if step == nil {
		step = LocalTurn
	}
	s.Locals = nil
	if s.Example != nil {
		if s.Step != nil {
			return nil, nil, configErr("a cyclic simulation takes either a Step or local DP-SGD (Example), not both")
		}
		s.Locals = make([]*LocalDPSGD, cfg.Clients)
		for i := range s.Locals {
			l, err := NewLocalDPSGD(*s.Example)
			if err != nil {
				return nil, nil, err
			}
			s.Locals[i] = l
		}
	}
	order := NewRand(s.Seed, StreamSampling)
	noise := NewRand(s.Seed, StreamNoise)
	t := nn.NewTrainer(s.Model)
	trained := make([]float64, dim)
	var ev CyclicEvent
	for {
		if err := ctx.Err(); err != nil {
			return srv.Global, srv.Accounts, err
		}
		i, err := srv.Next(order)
		if err == ErrStudyComplete {
			return srv.Global, srv.Accounts, nil
		}
		if err != nil {
			return srv.Global, srv.Accounts, err
		}
		if s.Locals != nil {
			if err := s.exampleTurn(t, i, srv.Round+1, srv.Global, trained); err != nil {
				return srv.Global, srv.Accounts, err
			}
		} else {
			step(t, srv.Global, s.Clients[i], cfg, trained)
		}
		p, err := srv.Propose(trained, noise)
		if err != nil {
			return srv.Global, srv.Accounts, err
		}
		srv.Apply(p)
		if p.Turn == 1 {
			ev = CyclicEvent{Round: p.Round, NoiseMultiplier: p.NoiseMultiplier, Delta: s.Delta, Epsilon: math.Inf(1)}
		}
		ev.HandOffs++
		if !p.Used {
			ev.Refused++
		}
		if p.Turn == cfg.Clients {
			if srv.Accounts != nil {
				ev.Epsilon = srv.Accounts.MaxEpsilon()
			}
			if s.OnRound != nil {
				s.OnRound(ev, srv.Global)
			}
		}
	}
}

// exampleTurn is client i's turn in round round (1-based) under local
// DP-SGD: E steps of its own LocalDPSGD from model into dst, with batches
// and noise from ClientRand (independent per client and round). A client
// whose own budget cannot cover the turn refuses it; the study was
// calibrated for E·T steps per client, so in a simulation that is an error
// (privacy.ErrBudgetExhausted), not a silent skip.
func (s *CyclicSimulation) exampleTurn(t *nn.Trainer, i, round int, model, dst []float64) error {
	copy(dst, model)
	d := s.Clients[i]
	err := s.Locals[i].Train(t, dst, d.X, d.Y, s.Config.LocalEpochs, s.Config.LearningRate,
		ClientRand(s.Seed, StreamExampleBatches, i, round), ClientRand(s.Seed, StreamExampleNoise, i, round), nil)
	if err != nil {
		return fmt.Errorf("fl: cyclic round %d, client %d: %w", round, i, err)
	}
	return nil
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
