package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
)

// Study holds the public parameters of a study, everything a client needs
// to train and to recompute the privacy budget itself. Nothing in it is
// secret or depends on any LHA's data.
type Study struct {
	// Protocol is the protocol version of the coordinator.
	Protocol int `json:"protocol"`
	// Settings are the parameters the coordinator set (settings.go): the
	// budget, the schedule, the training and the windows; their JSON names
	// are the study file's.
	Settings
	// Clients is N, the number of enrolled LHAs (fixed at the start).
	Clients int `json:"clients"`
	// SampleRate is q = m/N.
	SampleRate float64 `json:"sample_rate"`
	// NoiseMultiplier is c; the noise on the mean has σ = c·S/m.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// Layers are the MLP's layer sizes: the input H first, Hidden, the
	// output 1 last.
	Layers []int `json:"layers"`
	// Params is the length of the flat parameter vector.
	Params int `json:"params"`
	// InsecureSeed is true when the coordinator runs in research mode with
	// reproducible (not secret) sampling and noise.
	InsecureSeed bool `json:"insecure_seed,omitempty"`
	// StudyStrategy: strategy, λ, privacy level and local DP-SGD
	// (strategy.go; all empty: DP-FedAvg with client-level DP).
	StudyStrategy
	// NoiseMultipliers, when present, are c_1 … c_T: the noise multiplier
	// of every round, fixed before the study by calibrating the rule
	// NoiseSchedule (privacy.Schedule). Each LHA checks every round's c
	// against them. NoiseMultiplier is then the smallest of them. Absent:
	// every round has NoiseMultiplier.
	NoiseMultipliers []float64 `json:"noise_multipliers,omitempty"`
	// CyclicSeed, in a study with strategy "cyclic", is the seed of the
	// public turn timetable: the hex SHA-256 of the study file. Round r's
	// order is fl.CyclicOrder(CyclicSeed, r, Clients), and a round of the
	// protocol (round_start, update, event) is then one turn k = 1 … T·N
	// (fl.CyclicTurn). Empty in other studies.
	CyclicSeed string `json:"cyclic_seed,omitempty"`
	// Helper, when present, names the second server of two-server secure
	// aggregation (shared/secagg, studyhash.go): no single server sees an
	// LHA's update. Absent: the coordinator sees each clipped update.
	Helper *Helper `json:"helper,omitempty"`
	// TopUps are the raises of the lifetime budget made since the study
	// was created, in order (topup.go); the fields above already include
	// them. Absent: the budget is the one written at creation.
	TopUps []TopUp `json:"top_ups,omitempty"`
	// PublicInputs are the public data the study's design reads beside
	// each LHA's file, with source and hash (public.go).
	PublicInputs []PublicInput `json:"public_inputs,omitempty"`
}

// Bounds of a study's parameters, written only here: Study.Validate
// applies them for the coordinator (to its study file's value) and for
// every LHA (to the value of its welcome) alike.
const (
	// MaxLocalEpochs bounds E, the local Adam steps per round.
	MaxLocalEpochs = 100000
	// MaxWidth bounds each layer of the network, the input layer (H)
	// included.
	MaxWidth = 4096
	// MinRoundLength is the shortest round length L (tests use a few
	// hundred milliseconds; real studies minutes).
	MinRoundLength = 50 * time.Millisecond
	// DefaultRoundLength is L when the study file gives none.
	DefaultRoundLength = 60 * time.Second
)

// DefaultRoundSlack is the slack of a round of length l when the study
// file gives none: l/10, so that updates are taken for 90 % of each slot.
// It is the one slack rule; Validate accepts any slack in (0, l/2].
func DefaultRoundSlack(l time.Duration) time.Duration { return l / 10 }

// ErrStudy is wrapped by every error of Study.Validate.
var ErrStudy = errors.New("protocol: invalid study")

// StudyError is a parameter of a study out of its range: Field is the
// parameter's JSON name, Problem says what is wrong and what is allowed,
// starting with the field ("local_epochs is 0, must be in [1, 100000]").
type StudyError struct {
	Field   string
	Problem string
}

func (e *StudyError) Error() string { return "protocol: study: " + e.Problem }

// Unwrap makes every StudyError an ErrStudy.
func (e *StudyError) Unwrap() error { return ErrStudy }

func bad(field, format string, a ...any) error {
	return &StudyError{Field: field, Problem: field + " " + fmt.Sprintf(format, a...)}
}

// Validate checks every parameter of the study against its bounds and
// the parameters against each other (q = m/N, the layers against H, the
// parameter count against the layers, campaigns against the schedule).
// Errors are *StudyError, naming the field and its range. It is the one
// check of a study's parameters: the coordinator runs it on the value its
// study file describes, every LHA on the value of its welcome. It does not
// check the noise calibration (the LHA recomputes ε from the events) nor
// the helper's key and the sums' range (CheckSecureAggregation).
func (s *Study) Validate() error {
	for _, check := range []func() error{s.checkBudget, s.checkClients, s.checkTraining, s.checkWindows, s.checkModel, s.checkSchedule} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Study) checkBudget() error {
	if !s.ClientLevelDP() {
		// privacy "example": the coordinator adds no noise and keeps no
		// client-level budget; each LHA's budget is example_epsilon.
		if s.Epsilon != 0 {
			return bad("epsilon", "is %v: privacy \"example\" has no client-level budget (leave it out and give each LHA's budget as example_epsilon, or use privacy \"both\")", s.Epsilon)
		}
	} else if !finite(s.Epsilon) || s.Epsilon <= 0 {
		return bad("epsilon", "is %v, must be finite and > 0", s.Epsilon)
	} else if err := privacy.CheckEpsilon(s.Epsilon); err != nil {
		return bad("epsilon", "is %v: %v", s.Epsilon, err)
	}
	if err := privacy.CheckDelta(s.Delta); err != nil {
		return bad("delta", "is %v: %v", s.Delta, err)
	}
	// δ ≥ 1/N would allow a mechanism that publishes one LHA's data
	// outright with probability δ·N ≥ 1 and still meet (ε, δ).
	if n := s.Clients; n > 0 && s.Delta*float64(n) >= 1 {
		return bad("delta", "is %v, must be < 1/N = %v (N = %d LHAs): a larger δ admits releasing an LHA's data outright", s.Delta, 1/float64(n), n)
	}
	if _, err := s.AccountantKind(); err != nil {
		return bad("accountant", "is %q, must be \"rdp\" or \"pld\"", s.Accountant)
	}
	if err := privacy.CheckClipNorm(s.ClipNorm); err != nil {
		return bad("clip_norm", "is %v: %v", s.ClipNorm, err)
	}
	if err := s.checkNoiseSchedule(); err != nil {
		return err
	}
	for _, c := range append([]float64{s.NoiseMultiplier}, s.NoiseMultipliers...) {
		if !finite(c) || c < 0 {
			return bad("noise_multiplier", "is %v (schedule %v): every noise multiplier must be finite and ≥ 0", s.NoiseMultiplier, s.NoiseMultipliers)
		}
	}
	if err := s.StrategyParams.CheckStrategy(); err != nil {
		return bad("strategy", "settings: %s", strings.TrimPrefix(err.Error(), "protocol: study: "))
	}
	return nil
}

// checkNoiseSchedule checks the rule of the noise schedule (its
// calibrated values are NoiseMultipliers): it parses, fits T rounds, and
// exists only with client-level noise.
func (s *Study) checkNoiseSchedule() error {
	if s.NoiseSchedule == "" {
		return nil
	}
	if !s.ClientLevelDP() {
		return bad("noise_schedule", "%q is the coordinator's client-level noise, which privacy \"example\" does not have: leave it out and give each LHA's budget as example_epsilon (or use privacy \"both\")", s.NoiseSchedule)
	}
	sch, err := privacy.ParseSchedule(s.NoiseSchedule)
	if err == nil && s.Rounds >= 1 {
		_, err = sch.Shape(s.Rounds)
	}
	if err != nil {
		return bad("noise_schedule", "is %q: %v", s.NoiseSchedule, err)
	}
	return nil
}

func (s *Study) checkClients() error {
	switch n, m := s.Clients, s.ExpectedClients; {
	case n < 1:
		return bad("clients", "is %d: no LHAs enrolled", n)
	case m < 1 || m > n:
		return bad("expected_clients", "(m) is %d, must be in [1, N=%d]", m, n)
	case s.Sequential() && m != n:
		return bad("expected_clients", "(m) is %d, must be N=%d: strategy %q gives every LHA a turn in every round (q = 1)", m, n, s.Strategy)
	case s.SampleRate != float64(m)/float64(n):
		return bad("sample_rate", "is %v, must be m/N = %d/%d", s.SampleRate, m, n)
	}
	return nil
}

func (s *Study) checkTraining() error {
	if s.LocalEpochs < 1 || s.LocalEpochs > MaxLocalEpochs {
		return bad("local_epochs", "is %d, must be in [1, %d]", s.LocalEpochs, MaxLocalEpochs)
	}
	if !(s.LearningRate > 0) || !finite(s.LearningRate) {
		return bad("learning_rate", "is %v, must be finite and > 0", s.LearningRate)
	}
	if s.Damping != 0 {
		if err := model.CheckDamping(s.Damping); err != nil {
			return bad("damping", "is %v: %v", s.Damping, err)
		}
	}
	if err := model.CheckStudyFeatures(s.Features, s.Weekly); err != nil {
		return bad("features", "is %q: %v", s.Features, err)
	}
	if err := CheckPublicInputs(s.PublicInputs); err != nil {
		return bad("public_inputs", "%v", err)
	}
	if s.Weekly == nil {
		return nil
	}
	if in := s.Weekly.Inputs(); s.History != in {
		return bad("history", "is %d: the weekly design's network reads %d inputs, so history must be %d", s.History, in, in)
	}
	if s.Smoothing != "trailing" || s.Horizon != 7 {
		return bad("smoothing", "is %q and horizon %d: the weekly design forecasts the next 7-day total, so smoothing must be \"trailing\" and horizon 7", s.Smoothing, s.Horizon)
	}
	for _, p := range s.PublicInputs {
		if p.Name == PublicTotals && p.SHA256 != "" {
			return nil
		}
	}
	return bad("public_inputs", "lack the national and state totals the weekly design reads: declare them with 'fedcast study new --public FILE' (written by 'fedcast data public')")
}

func (s *Study) checkWindows() error {
	if s.History < 1 || s.History > MaxWidth {
		return bad("history", "is %d, must be in [1, %d]", s.History, MaxWidth)
	}
	if s.Horizon < 1 {
		return bad("horizon", "is %d, must be ≥ 1", s.Horizon)
	}
	if _, err := series.ParseSmoothing(s.Smoothing); err != nil {
		return bad("smoothing", "is %q, must be \"centered\" or \"trailing\"", s.Smoothing)
	}
	if !(s.TrainFraction > 0 && s.TrainFraction <= 1) {
		return bad("train_fraction", "is %v, must be in (0, 1]", s.TrainFraction)
	}
	for _, d := range []struct{ name, v string }{{"from", s.From}, {"to", s.To}} {
		if d.v != "" {
			if _, err := time.Parse(time.DateOnly, d.v); err != nil {
				return bad(d.name, "is %q, want a date YYYY-MM-DD", d.v)
			}
		}
	}
	return nil
}

func (s *Study) checkModel() error {
	l := s.Layers
	out := s.NetOutputs()
	if s.Weekly != nil && s.Weekly.Outputs() != out {
		return bad("outputs", "is %d, the weekly design has %d", out, s.Weekly.Outputs())
	}
	if len(l) < 2 || l[0] != s.History || l[len(l)-1] != out {
		return bad("layers", "are %v, must run from the input days H=%d to %d output(s)", l, s.History, out)
	}
	for _, w := range l {
		if w < 1 || w > MaxWidth {
			return bad("layers", "are %v: each layer's size must be in [1, %d]", l, MaxWidth)
		}
	}
	if !slices.Equal(l[1:len(l)-1], s.Hidden) {
		return bad("layers", "are %v, must be the input days H=%d, the hidden layers %v and %d output(s)", l, s.History, s.Hidden, out)
	}
	if p := ParamCount(l); p > MaxWeights {
		return bad("layers", "are %v: %d weights, more than a protocol frame carries (%d)", l, p, MaxWeights)
	} else if s.Params != p {
		return bad("params", "is %d, the layers %v have %d", s.Params, l, p)
	}
	return nil
}

func (s *Study) checkSchedule() error {
	length, slack := time.Duration(s.RoundLength), time.Duration(s.RoundSlack)
	if length < MinRoundLength {
		return bad("round_length", "is %v, must be ≥ %v", length, MinRoundLength)
	}
	if slack <= 0 || slack > length/2 {
		return bad("round_slack", "is %v, must be in (0, round_length/2 = %v]", slack, length/2)
	}
	every := time.Duration(s.Every)
	switch c := s.Campaigns; {
	case s.Rounds < 1 || s.Rounds > MaxRound:
		return bad("rounds", "is %d, must be in [1, %d]", s.Rounds, uint32(MaxRound))
	case c < 0:
		return bad("campaigns", "is %d, must be 0 or more", c)
	case every < 0:
		return bad("every", "is %v, must be ≥ 0", every)
	case c <= 1:
		if every != 0 && c == 0 {
			return bad("every", "is set (%v) but campaigns is not: give both, e.g. \"campaigns\": 4, \"every\": \"168h\"", every)
		}
	case s.Rounds%c != 0:
		return bad("rounds", "is %d, not a multiple of campaigns %d: rounds counts every round of every campaign", s.Rounds, c)
	case s.Sequential():
		return bad("campaigns", "is %d: strategy %q cannot run in campaigns", c, s.Strategy)
	case every < time.Duration(s.Rounds/c)*length:
		return bad("every", "is %v, shorter than one campaign (%d rounds of %v = %v): campaigns would overlap",
			every, s.Rounds/c, length, time.Duration(s.Rounds/c)*length)
	}
	return nil
}

// ParamCount returns the number of weights and biases of an MLP with these
// layer sizes (nn.NewMLP(layers...).NumParams()) without allocating it,
// saturating at MaxWeights+1 (a study may name absurd sizes).
func ParamCount(layers []int) int {
	n := 0
	for i := 1; i < len(layers); i++ {
		in, out := layers[i-1], layers[i]
		if in < 0 || out < 0 || in > MaxWeights || out > MaxWeights {
			return MaxWeights + 1
		}
		n += (in + 1) * out
		if n > MaxWeights {
			return MaxWeights + 1
		}
	}
	return n
}
