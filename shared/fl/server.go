package fl

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// Server is the coordinator-side state of one study: everything needed to
// run the next round, and nothing that is not. All fields are exported and
// the value round-trips through JSON, so a coordinator that starts afresh
// for every request (Cloudflare Workers) can load it, act and store it.
type Server struct {
	Config Config `json:"config"`
	// Round is the number of rounds committed so far (0 before the first).
	Round int `json:"round"`
	// Global is the current global model w_Round.
	Global []float64 `json:"global"`
	// Accountant holds the RDP composed over the committed rounds (nil in
	// non-DP mode).
	Accountant *privacy.RDP `json:"accountant,omitempty"`
	// EpsilonBudget is the ε the study may spend at Delta; +Inf in non-DP mode.
	EpsilonBudget float64 `json:"-"`
	Delta         float64 `json:"delta"`
	// Strategy combines a round's aggregate into the next model
	// (Strategy.Combine); nil is FedAvg. It is the study's, not state.
	Strategy Strategy `json:"-"`
}

type serverJSON struct {
	*serverAlias
	EpsilonBudget JSONFloat `json:"epsilon_budget"`
}

type serverAlias Server

// MarshalJSON encodes the state (EpsilonBudget as a number or "inf").
func (s *Server) MarshalJSON() ([]byte, error) {
	return json.Marshal(serverJSON{(*serverAlias)(s), JSONFloat(s.EpsilonBudget)})
}

// UnmarshalJSON decodes what MarshalJSON wrote and validates it before
// use (errors wrap ErrConfig): a valid configuration, a non-empty finite
// model, 0 ≤ Round ≤ T, and in DP mode a finite budget > 0, δ in (0, 1)
// and an accountant that holds exactly Round rounds at the configured q
// and c, whose ε is within the budget; in non-DP mode no accountant and an
// infinite budget. On error s is unchanged.
func (s *Server) UnmarshalJSON(b []byte) error {
	var t Server
	v := serverJSON{serverAlias: (*serverAlias)(&t)}
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

// validate checks a state read back from storage (see UnmarshalJSON).
func (s *Server) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: stored server state: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if err := s.Config.Validate(); err != nil {
		return err
	}
	if len(s.Global) == 0 {
		return bad("empty model")
	}
	for i, w := range s.Global {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return bad("model weight %d is %v", i, w)
		}
	}
	if s.Round < 0 || s.Round > s.Config.Rounds {
		return bad("round %d outside [0, T=%d]", s.Round, s.Config.Rounds)
	}
	if !s.Config.DP {
		if s.Accountant != nil || !math.IsInf(s.EpsilonBudget, 1) {
			return bad("non-DP state with an accountant or a finite budget ε=%v", s.EpsilonBudget)
		}
		return nil
	}
	if !(s.EpsilonBudget > 0) || math.IsInf(s.EpsilonBudget, 0) {
		return bad("budget ε=%v, must be finite and > 0", s.EpsilonBudget)
	}
	if err := privacy.CheckDelta(s.Delta); err != nil {
		return bad("%v", err)
	}
	if s.Accountant == nil {
		return bad("DP state without an accountant")
	}
	// The accountant must be what Round rounds at (q, c) compose to:
	// otherwise ε would be reported from a history that did not happen.
	want := privacy.NewRDP(s.Accountant.Orders())
	for _, e := range s.Config.PrivacyEvents(s.Round) {
		want.Compose(e.SampleRate, e.NoiseMultiplier, e.Rounds)
	}
	got, stored := want.Curve(), s.Accountant.Curve()
	for i := range got {
		if !(math.Abs(got[i]-stored[i]) <= 1e-9*math.Max(1, math.Abs(got[i]))) && got[i] != stored[i] {
			return bad("the accountant does not hold %d rounds at q=%v, c=%v (order %d: RDP %v, want %v)",
				s.Round, s.Config.SampleRate(), s.Config.NoiseMultiplier, i, stored[i], got[i])
		}
	}
	if s.Round > 0 {
		// By the study's accountant: a PLD study may be within its budget
		// by PLD and above it by RDP.
		if eps := s.epsilonAfter(s.Round, s.Accountant); !(eps <= s.EpsilonBudget) {
			return bad("ε spent %v is not within the budget %v", eps, s.EpsilonBudget)
		}
	}
	return nil
}

// NewServer starts a study at round 0 from the initial model global (kept,
// not copied). In DP mode it refuses a configuration whose T rounds would
// exceed the budget (epsilonBudget at delta), so that a study never starts
// with parameters it cannot account for. In non-DP mode epsilonBudget must
// be +Inf.
func NewServer(cfg Config, global []float64, epsilonBudget, delta float64) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(global) == 0 {
		return nil, fmt.Errorf("%w: empty model", ErrConfig)
	}
	s := &Server{Config: cfg, Global: global, EpsilonBudget: epsilonBudget, Delta: delta}
	if !cfg.DP {
		if !math.IsInf(epsilonBudget, 1) {
			return nil, fmt.Errorf("%w: DP is off but the budget is ε=%v (use +Inf)", ErrConfig, epsilonBudget)
		}
		return s, nil
	}
	p := privacy.Params{
		Epsilon: epsilonBudget, Delta: delta, SampleRate: cfg.SampleRate(),
		NoiseMultiplier: cfg.NoiseMultiplier, ClipNorm: cfg.ClipNorm, Rounds: cfg.Rounds,
		Accountant: cfg.AccountantKind(),
	}
	if len(cfg.NoiseSchedule) > 0 {
		// Params.Validate's budget check assumes one c for all rounds; a
		// schedule's budget is checked below over its own rounds.
		p.Epsilon = math.Inf(1)
		if err := privacy.CheckEpsilon(epsilonBudget); err != nil {
			return nil, err
		}
		if err := privacy.CheckDelta(delta); err != nil {
			return nil, err
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// !(eps <= budget), not eps > budget: a NaN on either side refuses.
	if eps := s.epsilonAfter(cfg.Rounds, nil); !(eps <= epsilonBudget) {
		return nil, fmt.Errorf("%w: %d rounds at q=%.4g, c=%.6g spend ε=%.6g > budget %.6g; raise the noise multiplier or lower the rounds",
			privacy.ErrBudgetExhausted, cfg.Rounds, cfg.SampleRate(), cfg.NoiseMultiplier, eps, epsilonBudget)
	}
	s.Accountant = privacy.NewRDP(nil)
	return s, nil
}

// Sample returns the clients of the next round: Poisson sampling with
// q = m/N in DP mode, exactly m uniformly without replacement otherwise.
func (s *Server) Sample(rng *rand.Rand) []int {
	if s.Config.DP {
		return PoissonSample(s.Config.Clients, s.Config.SampleRate(), rng)
	}
	return FixedSample(s.Config.Clients, s.Config.ExpectedClients, rng)
}

// EpsilonSpent returns ε after the committed rounds (0 before the first
// round; +Inf in non-DP mode once a round is committed).
func (s *Server) EpsilonSpent() float64 {
	if !s.Config.DP {
		if s.Round == 0 {
			return 0
		}
		return math.Inf(1)
	}
	if s.Round == 0 {
		return 0
	}
	return s.epsilonAfter(s.Round, s.Accountant)
}

// epsilonAfter returns ε at s.Delta after rounds rounds of the study's
// (q, c_t) by the configured accountant (privacy.EpsilonAfter): acc, if
// not nil, is the accumulated RDP of exactly those rounds.
func (s *Server) epsilonAfter(rounds int, acc *privacy.RDP) float64 {
	a, err := s.Config.Accounting()
	eps := math.NaN() // invalid parameters: the budget gates refuse NaN (!(ε ≤ budget))
	if err == nil {
		if e, err := privacy.EpsilonAfter(a, s.Config.PrivacyEvents(rounds), acc, s.Delta); err == nil {
			eps = e
		}
	}
	return eps
}

// NextRoundFits reports whether one more round may run: ErrStudyComplete
// after T rounds, privacy.ErrBudgetExhausted if its privacy cost would take
// ε above the budget.
func (s *Server) NextRoundFits() error {
	if s.Round >= s.Config.Rounds {
		return ErrStudyComplete
	}
	if !s.Config.DP {
		return nil
	}
	a := s.Accountant.Clone()
	a.Compose(s.Config.SampleRate(), s.Config.NoiseMultiplierAt(s.Round+1), 1)
	// !(eps <= budget), not eps > budget: a NaN on either side refuses.
	if eps := s.epsilonAfter(s.Round+1, a); !(eps <= s.EpsilonBudget) {
		return fmt.Errorf("%w: round %d would take ε to %.6g > %.6g", privacy.ErrBudgetExhausted, s.Round+1, eps, s.EpsilonBudget)
	}
	return nil
}

// Pending is a computed but not yet applied round: the next model and its
// privacy event. A coordinator commits it to durable storage, then Applies
// it, then releases it; it never computes a second Pending for the same
// round (that would be a second, unaccounted release).
type Pending struct {
	Event      Event
	Global     []float64
	Accountant *privacy.RDP
}

// Propose finishes the round held in agg — mean over m plus noise, or the
// plain mean in non-DP mode — without changing s, and resets agg. It fails,
// leaving agg untouched, when the round does not fit the budget.
func (s *Server) Propose(agg *Aggregator, noise *rand.Rand) (*Pending, error) {
	if err := s.NextRoundFits(); err != nil {
		return nil, err
	}
	c := s.Config.NoiseMultiplierAt(s.Round + 1)
	if s.Config.DP && len(s.Config.NoiseSchedule) > 0 && agg.cfg.NoiseMultiplier != c {
		// The noise is the aggregator's: one made for another round of a
		// schedule would release this round with the wrong noise. (Without
		// a schedule the caller makes one aggregator for the study; the
		// privacy audit deliberately gives it another c.)
		return nil, fmt.Errorf("%w: round %d has noise multiplier %v, the aggregator was made for %v (use Config.AtRound)",
			ErrConfig, s.Round+1, c, agg.cfg.NoiseMultiplier)
	}
	next := make([]float64, len(s.Global))
	copy(next, s.Global)
	st := s.Strategy
	if st == nil {
		st = FedAvgStrategy{}
	}
	st.Combine(agg, next, noise)
	var gamma float64
	if s.Config.DP {
		gamma = agg.Lattice().Gamma
	}
	return s.pending(next, c, gamma), nil
}

// pending is the Pending of the next round with model next, noise
// multiplier c and lattice step gamma (DP mode): its event and accountant.
func (s *Server) pending(next []float64, c, gamma float64) *Pending {
	if len(s.Config.Spectral) > 0 {
		nn.NewMLP(s.Config.Spectral...).ProjectSpectral(next)
	}
	p := &Pending{Global: next, Event: Event{
		Round: s.Round + 1, SampleRate: s.Config.SampleRate(),
		NoiseMultiplier: c, Delta: s.Delta,
		Epsilon: math.Inf(1),
	}}
	if s.Config.DP {
		p.Event.Gamma = gamma
		p.Event.Sampler = privacy.SamplerName
		p.Accountant = s.Accountant.Clone()
		p.Accountant.Compose(s.Config.SampleRate(), c, 1)
		p.Event.Epsilon = s.epsilonAfter(s.Round+1, p.Accountant)
		p.Event.Accountant = s.Config.AccountantKind()
	} else {
		p.Event.NoiseMultiplier = 0
	}
	return p
}

// ProposeSum is Propose for a round aggregated elsewhere (two-server
// secure aggregation, shared/secagg): z is the noised integer sum in
// lattice steps of gamma, already carrying each server's discrete Gaussian
// noise at this round's c, and the next model is global + γ·z/m, the
// arithmetic of Aggregator.Finish. The event and the accountant are those
// of Propose: each server's view is today's mechanism at c. DP mode only.
func (s *Server) ProposeSum(z []int64, gamma float64) (*Pending, error) {
	if !s.Config.DP {
		return nil, fmt.Errorf("%w: a secure-aggregation round needs DP mode", ErrConfig)
	}
	if len(z) != len(s.Global) {
		return nil, fmt.Errorf("%w: the sum has %d values, the model %d", ErrUpdateLength, len(z), len(s.Global))
	}
	if err := s.NextRoundFits(); err != nil {
		return nil, err
	}
	next := make([]float64, len(s.Global))
	copy(next, s.Global)
	step := gamma / float64(s.Config.ExpectedClients)
	for i, v := range z {
		next[i] += float64(v) * step
	}
	return s.pending(next, s.Config.NoiseMultiplierAt(s.Round+1), gamma), nil
}

// Apply makes p the current state. p must come from Propose on this state.
func (s *Server) Apply(p *Pending) {
	if p.Event.Round != s.Round+1 {
		panic(fmt.Sprintf("fl: Apply: pending round %d does not follow round %d", p.Event.Round, s.Round))
	}
	s.Global = p.Global
	s.Accountant = p.Accountant
	s.Round = p.Event.Round
}

// Commit is Propose followed by Apply, for callers with nothing to persist
// in between (the in-process simulator).
func (s *Server) Commit(agg *Aggregator, noise *rand.Rand) (Event, error) {
	p, err := s.Propose(agg, noise)
	if err != nil {
		return Event{}, err
	}
	s.Apply(p)
	return p.Event, nil
}
