package session

import (
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// The study's strategy and privacy level on the LHA's side
// (docs/strategies.md): under MR-MTL the LHA keeps a personal model and
// forecasts with it; under privacy "both" it trains with local DP-SGD and
// its own example-level accountant, and sits a round out rather than pass
// its own example-level budget.

// ExampleBudget is this LHA's own example-level budget under local DP-SGD.
type ExampleBudget struct {
	// Epsilon and Delta are the budget every LHA of the study has.
	Epsilon, Delta float64
	// Spent is the ε its own accountant reports for the steps taken.
	Spent float64
	// Steps is the number of local DP-SGD steps taken, MaxSteps the number
	// the budget covers (E per round, T rounds).
	Steps, MaxSteps int
}

// strategyState is the session's fl.Client and what the page may read of
// it while a round trains (copies taken under Session.mu).
type strategyState struct {
	client   *fl.Client
	personal []float64 // MR-MTL: the personal model after its last round
	budget   ExampleBudget
	example  bool
}

// setClient installs the study's client state (at the first welcome).
func (s *Session) setClient(c *fl.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strategy = strategyState{client: c}
	if c.DPSGD != nil {
		s.strategy.example = true
		s.strategy.budget = budgetOf(c.DPSGD)
	}
}

// accountJoinedLate charges the local accountant, at the first welcome,
// for the rounds this LHA may already have trained in before this session
// (a page reload, a restarted client): every released round, and the
// open one when the study is running. The accountant lives as long as the
// session, so without this a second session would start from nothing and
// could send more than the calibration covers. It costs utility only to
// an LHA that joins late, never privacy.
func (s *Session) accountJoinedLate(released int, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.strategy.client
	if c == nil || c.DPSGD == nil {
		return
	}
	rounds := released
	if state == protocol.StateRunning {
		rounds++
	}
	rounds = min(rounds, s.study.Rounds)
	if s.isCyclic() {
		// A round of the protocol is one turn: charge this LHA's own
		// turns among those released and the open one.
		if state == protocol.StateRunning {
			rounds = s.ownTurns(released + 1)
		} else {
			rounds = s.ownTurns(released)
		}
	}
	if rounds <= 0 {
		return
	}
	e := c.DPSGD.Setting
	c.DPSGD.Accountant.Compose(e.SampleRate, e.NoiseMultiplier, rounds*s.study.LocalEpochs)
	s.strategy.budget = budgetOf(c.DPSGD)
}

// rememberAccount, at the first welcome, takes the stored account of an
// earlier session of this study on this machine into the accountant when
// it holds more steps than the charge for the rounds so far, and stores
// the result (see AccountStore).
func (s *Session) rememberAccount() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restoreAccount()
	if c := s.strategy.client; c != nil {
		s.saveAccount(c.DPSGD, 0)
	}
}

func budgetOf(d *fl.LocalDPSGD) ExampleBudget {
	return ExampleBudget{Epsilon: d.Setting.Epsilon, Delta: d.Setting.Delta, Spent: d.Spent(),
		Steps: d.Accountant.Steps(), MaxSteps: d.Setting.Steps}
}

// ExampleBudget returns this LHA's own example-level budget and what it
// has spent; ok is false when the study runs no local DP-SGD.
func (s *Session) ExampleBudget() (b ExampleBudget, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.strategy.budget, s.strategy.example
}

// Personal reports whether this LHA forecasts with its own MR-MTL model.
func (s *Session) Personal() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.strategy.client != nil && s.trains.Personal()
}

// GlobalModel returns a copy of the latest global model received.
func (s *Session) GlobalModel() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float64(nil), s.global...)
}

// forecastModel is Model's value; s.mu must be held.
func (s *Session) forecastModel() []float64 {
	out := append([]float64(nil), s.global...)
	c := s.strategy.client
	if c == nil || !s.trains.Personal() || s.strategy.personal == nil || len(out) == 0 {
		return out
	}
	cfg, err := s.study.FLConfig()
	if err != nil {
		return out
	}
	p := fl.Client{Strategy: c.Strategy, Lambda: c.Lambda, Personal: s.strategy.personal}
	p.Model(s.global, cfg, out)
	return out
}

// update trains one round through the client state: FedAvg without local
// DP-SGD is fl.LocalUpdateProgress; local DP-SGD draws its batches and
// noise from a crypto-seeded generator. A non-nil error is the LHA's own
// example-level budget refusing the round (nothing was changed).
func (s *Session) update(tr *nn.Trainer, global, x, y []float64, cfg fl.Config, dst []float64, progress func(step, steps int)) error {
	s.mu.Lock()
	c := s.strategy.client
	s.mu.Unlock()
	var batches, noise *rand.Rand
	if c.DPSGD != nil {
		batches, noise = privacy.NewSecureRand(), privacy.NewSecureRand()
		if len(y) > 0 && c.DPSGD.Fits(cfg.LocalEpochs) == nil {
			s.saveAccount(c.DPSGD, cfg.LocalEpochs) // stored before the steps are taken
		}
	}
	_, err := c.Update(tr, global, x, y, cfg, dst, batches, noise, progress)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Personal != nil {
		s.strategy.personal = append(s.strategy.personal[:0], c.Personal...)
	}
	if c.DPSGD != nil {
		s.strategy.budget = budgetOf(c.DPSGD)
	}
	return err
}
