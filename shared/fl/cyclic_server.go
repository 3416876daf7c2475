package fl

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// CyclicServer is the coordinator-side state of a cyclic study (see the
// Cyclic FL notes in cyclic.go): whose turn it is and the model to hand
// on. Like Server it is explicit and JSON-serialisable, and a hand-off is
// computed (Propose), committed by the caller, then applied (Apply), never
// computed twice. CyclicSimulation drives it in process.
type CyclicServer struct {
	Config Config `json:"config"`
	// Round is the number of completed rounds; Turn the number of turns
	// taken in the round under way (0 … N).
	Round int `json:"round"`
	Turn  int `json:"turn"`
	// Order is the public order of the round under way (a permutation of
	// the N clients; empty between rounds).
	Order []int `json:"order,omitempty"`
	// Global is the model the next turn receives.
	Global []float64 `json:"global"`
	// Accounts holds each client's own hand-offs (nil in non-DP mode).
	Accounts *CyclicAccountant `json:"accounts,omitempty"`
	// EpsilonBudget is each client's budget at Delta; +Inf in non-DP mode.
	EpsilonBudget float64 `json:"-"`
	Delta         float64 `json:"delta"`
}

type cyclicServerJSON struct {
	*cyclicServerAlias
	EpsilonBudget JSONFloat `json:"epsilon_budget"`
}

type cyclicServerAlias CyclicServer

// MarshalJSON encodes the state (EpsilonBudget as a number or "inf").
func (s *CyclicServer) MarshalJSON() ([]byte, error) {
	return json.Marshal(cyclicServerJSON{(*cyclicServerAlias)(s), JSONFloat(s.EpsilonBudget)})
}

// UnmarshalJSON decodes what MarshalJSON wrote and validates it: a valid
// cyclic configuration, a finite model, 0 ≤ Round ≤ T, an order that is a
// permutation of the clients, and in DP mode accounts in which every
// client has exactly its own hand-offs so far (Round, plus one if it has
// had its turn in the round under way) at the configured c_t. Errors wrap
// ErrConfig; on error s is unchanged.
func (s *CyclicServer) UnmarshalJSON(b []byte) error {
	var t CyclicServer
	v := cyclicServerJSON{cyclicServerAlias: (*cyclicServerAlias)(&t)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t.EpsilonBudget = float64(v.EpsilonBudget)
	if err := t.validate(); err != nil {
		return err
	}
	*s = t
	return nil
}

func (s *CyclicServer) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: stored cyclic state: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if err := CheckCyclic(s.Config); err != nil {
		return err
	}
	n := s.Config.Clients
	if len(s.Global) == 0 || CheckUpdate(s.Global, len(s.Global)) != nil {
		return bad("empty or non-finite model")
	}
	if s.Round < 0 || s.Round > s.Config.Rounds || s.Turn < 0 || s.Turn > n || (s.Turn > 0 && len(s.Order) != n) {
		return bad("round %d, turn %d, order of %d for T=%d, N=%d", s.Round, s.Turn, len(s.Order), s.Config.Rounds, n)
	}
	if len(s.Order) != 0 && len(s.Order) != n {
		return bad("order of %d clients, N=%d", len(s.Order), n)
	}
	seen := make([]bool, n)
	for _, i := range s.Order {
		if i < 0 || i >= n || seen[i] {
			return bad("order %v is not a permutation of the clients", s.Order)
		}
		seen[i] = true
	}
	if !s.Config.DP {
		if s.Accounts != nil || !math.IsInf(s.EpsilonBudget, 1) {
			return bad("non-DP state with accounts or a finite budget")
		}
		return nil
	}
	if !(s.EpsilonBudget > 0) || math.IsInf(s.EpsilonBudget, 0) {
		return bad("budget ε=%v, must be finite and > 0", s.EpsilonBudget)
	}
	if err := privacy.CheckDelta(s.Delta); err != nil {
		return bad("%v", err)
	}
	if s.Accounts == nil || len(s.Accounts.HandOffs) != n || s.Accounts.Delta != s.Delta || s.Accounts.Kind != s.Config.AccountantKind() {
		return bad("accounts missing or not of this study")
	}
	had := make([]bool, n) // had its turn in the round under way
	for _, i := range s.Order[:s.Turn] {
		had[i] = true
	}
	for i := range n {
		want := NewCyclicAccountant(s.Accounts.Kind, 1, s.Delta)
		turns := s.Round
		if had[i] {
			turns++
		}
		for r := 1; r <= turns; r++ {
			want.Record(0, s.Config.NoiseMultiplierAt(r))
		}
		if fmt.Sprint(want.HandOffs[0]) != fmt.Sprint(s.Accounts.HandOffs[i]) {
			return bad("client %d's account %v is not its %d hand-offs", i, s.Accounts.HandOffs[i], turns)
		}
	}
	return nil
}

// NewCyclicServer starts a cyclic study at round 0 from the initial model
// global (kept, not copied). In DP mode it refuses a study whose clients'
// T hand-offs would exceed the budget (epsilonBudget at delta; q = 1).
func NewCyclicServer(cfg Config, global []float64, epsilonBudget, delta float64) (*CyclicServer, error) {
	if err := CheckCyclic(cfg); err != nil {
		return nil, err
	}
	if len(global) == 0 {
		return nil, fmt.Errorf("%w: empty model", ErrConfig)
	}
	s := &CyclicServer{Config: cfg, Global: global, EpsilonBudget: epsilonBudget, Delta: delta}
	if !cfg.DP {
		if !math.IsInf(epsilonBudget, 1) {
			return nil, fmt.Errorf("%w: DP is off but the budget is ε=%v (use +Inf)", ErrConfig, epsilonBudget)
		}
		return s, nil
	}
	if err := privacy.CheckEpsilon(epsilonBudget); err != nil || math.IsInf(epsilonBudget, 1) {
		return nil, fmt.Errorf("%w: budget ε=%v, must be finite and > 0 in DP mode", ErrConfig, epsilonBudget)
	}
	if err := privacy.CheckDelta(delta); err != nil {
		return nil, err
	}
	eps, err := CyclicEpsilon(cfg, delta)
	if err != nil {
		return nil, err
	}
	if !(eps <= epsilonBudget) {
		return nil, fmt.Errorf("%w: %d hand-offs per client spend ε=%.6g > budget %.6g (cyclic FL has no sampling: calibrate with q = 1)",
			privacy.ErrBudgetExhausted, cfg.Rounds, eps, epsilonBudget)
	}
	s.Accounts = NewCyclicAccountant(cfg.AccountantKind(), cfg.Clients, delta)
	return s, nil
}

// Next returns the client whose turn comes next. At the start of a round
// it draws the round's public order from order (a permutation; the draw
// depends only on the generator). It returns ErrStudyComplete after T
// rounds, and privacy.ErrBudgetExhausted if the client's hand-off would
// take its own ε above the budget.
func (s *CyclicServer) Next(order *rand.Rand) (client int, err error) {
	if s.Turn == len(s.Order) && len(s.Order) > 0 {
		// The round under way is complete: close it.
		s.Round++
		s.Turn, s.Order = 0, nil
	}
	if s.Round >= s.Config.Rounds {
		return 0, ErrStudyComplete
	}
	if len(s.Order) == 0 {
		s.Order = order.Perm(s.Config.Clients)
	}
	i := s.Order[s.Turn]
	if s.Accounts != nil {
		c := s.Config.NoiseMultiplierAt(s.Round + 1)
		if e := s.Accounts.EpsilonIfNext(i, c); !(e <= s.EpsilonBudget) {
			return 0, fmt.Errorf("%w: client %d's hand-off in round %d would take its ε to %.6g > %.6g",
				privacy.ErrBudgetExhausted, i, s.Round+1, e, s.EpsilonBudget)
		}
	}
	return i, nil
}

// CyclicPending is a computed hand-off not yet applied.
type CyclicPending struct {
	Round  int `json:"round"` // 1-based
	Turn   int `json:"turn"`  // 1-based within the round
	Client int `json:"client"`
	// NoiseMultiplier is c_t (0 in non-DP mode); Used is false when the
	// client's model was refused (not finite) and the turn counted as no
	// change.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	Used            bool    `json:"used"`
	// Epsilon is the client's own ε after this hand-off (+Inf in non-DP mode).
	Epsilon float64   `json:"-"`
	Global  []float64 `json:"-"`
}

// Propose computes the hand-off of the current turn (after Next) from the
// model the client trained, without changing s.
func (s *CyclicServer) Propose(trained []float64, noise *rand.Rand) (*CyclicPending, error) {
	if len(s.Order) == 0 || s.Turn >= len(s.Order) {
		return nil, fmt.Errorf("%w: no turn under way (call Next first)", ErrConfig)
	}
	if len(trained) != len(s.Global) {
		return nil, fmt.Errorf("%w: got %d values, the model has %d", ErrUpdateLength, len(trained), len(s.Global))
	}
	round := s.Round + 1
	p := &CyclicPending{Round: round, Turn: s.Turn + 1, Client: s.Order[s.Turn], Global: make([]float64, len(s.Global)), Epsilon: math.Inf(1)}
	p.Used = HandOff(s.Config, round, s.Global, trained, p.Global, noise)
	if len(s.Config.Spectral) > 0 { // as Server releases: projected after the noise
		nn.NewMLP(s.Config.Spectral...).ProjectSpectral(p.Global)
	}
	if s.Config.DP {
		p.NoiseMultiplier = s.Config.NoiseMultiplierAt(round)
		p.Epsilon = s.Accounts.EpsilonIfNext(p.Client, p.NoiseMultiplier)
	}
	return p, nil
}

// Apply makes p the current state. p must come from Propose on this state.
func (s *CyclicServer) Apply(p *CyclicPending) {
	if p.Round != s.Round+1 || p.Turn != s.Turn+1 || p.Client != s.Order[s.Turn] {
		panic(fmt.Sprintf("fl: CyclicServer.Apply: hand-off %d.%d does not follow %d.%d", p.Round, p.Turn, s.Round+1, s.Turn))
	}
	if s.Accounts != nil {
		s.Accounts.Record(p.Client, p.NoiseMultiplier)
	}
	s.Global = p.Global
	s.Turn++
}

// Done reports whether all T rounds are complete.
func (s *CyclicServer) Done() bool {
	return s.Round >= s.Config.Rounds || (s.Round == s.Config.Rounds-1 && s.Turn == s.Config.Clients)
}
