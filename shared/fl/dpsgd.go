package fl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// Local DP-SGD: example-level differential privacy inside each client
// (seeds 001 and 002). The privacy unit is one training window of one LHA.
// Every local step
//
//  1. draws a Poisson batch: each of the client's n windows is kept
//     independently with probability q (ExampleDP.SampleRate); the batch
//     may be empty, and an empty batch is still a step (noise only) that
//     the accountant counts;
//  2. computes each kept window's gradient on its own (nn.Trainer.ExampleGradients)
//     and clips it to L2 norm C (nn.ClipExample);
//  3. rounds each clipped gradient onto the lattice γℤᵈ of privacy.Lattice
//     (C, c) within the exact norm bound and sums them in int64;
//  4. adds exact discrete Gaussian noise N_ℤ(0, σ_ℤ²), σ_ℤ ≥ c·C/γ, to every
//     coordinate of the sum, and divides γ·sum by the expected batch size
//     q·n (fixed, whatever the batch held);
//  5. takes an Adam step with that gradient (post-processing).
//
// So each step is the Sampled Gaussian Mechanism with rate q and noise
// multiplier c on the client's windows, and the client's own accountant
// (LocalAccountant: RDP or PLD, privacy.EpsilonFor) composes its steps.
// The client calibrates c for the steps its budget must cover (E per round,
// T rounds) and refuses to train once one more round would take its ε
// above its budget (privacy.ErrBudgetExhausted).

// Streams of the local DP-SGD randomness in research runs (per client and
// round, see ClientRand). Live clients use privacy.NewSecureRand for both.
const (
	StreamExampleBatches Stream = 0x100 // Poisson batches of local DP-SGD
	StreamExampleNoise   Stream = 0x101 // local DP-SGD noise
)

// ExampleDP is the public setting of local DP-SGD, the same for every
// client of a study: each client spends at most Epsilon (at Delta) on its
// own windows. Epsilon = +Inf keeps the per-example clipping and the
// Poisson batches but adds no noise (no example-level guarantee: the
// ε = ∞ row of an experiment).
type ExampleDP struct {
	// Epsilon is each client's example-level budget at Delta; +Inf for no
	// noise (JSON: a number or "inf").
	Epsilon float64 `json:"-"`
	// Delta is δ of the example-level guarantee, in (0, 1).
	Delta float64 `json:"delta"`
	// SampleRate is q_local: the probability that a window is in a step's
	// batch, in (0, 1].
	SampleRate float64 `json:"sample_rate"`
	// ClipNorm is C, the L2 bound on one window's gradient. > 0.
	ClipNorm float64 `json:"clip_norm"`
	// NoiseMultiplier is c_local: the noise standard deviation in units of
	// C. 0 if and only if Epsilon is +Inf.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// Steps is the number of local steps the budget covers (E per round
	// times the rounds a client may train in). ≥ 1.
	Steps int `json:"steps"`
	// Accountant is the client's accountant ("" is RDP).
	Accountant privacy.AccountantKind `json:"accountant,omitempty"`
}

type exampleDPAlias ExampleDP

type exampleDPJSON struct {
	exampleDPAlias
	Epsilon JSONFloat `json:"epsilon"`
}

// MarshalJSON encodes Epsilon as a number or "inf".
func (e ExampleDP) MarshalJSON() ([]byte, error) {
	return json.Marshal(exampleDPJSON{exampleDPAlias(e), JSONFloat(e.Epsilon)})
}

// UnmarshalJSON is the inverse of MarshalJSON.
func (e *ExampleDP) UnmarshalJSON(b []byte) error {
	var v exampleDPJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = ExampleDP(v.exampleDPAlias)
	e.Epsilon = float64(v.Epsilon)
	return nil
}

// AccountantKind returns the client's accountant (RDP when none is named).
func (e ExampleDP) AccountantKind() privacy.AccountantKind {
	if e.Accountant == "" {
		return privacy.DefaultAccountant
	}
	return e.Accountant
}

// Default local DP-SGD settings (see docs/strategies.md): chosen on
// synthetic outbreaks, never on the study months.
const (
	DefaultExampleSampleRate = 0.5
	DefaultExampleClip       = 0.1
)

// ExampleDefaults returns local DP-SGD's δ, Poisson rate and clip bound
// with each one left 0 filled in: δ with the study's delta, the others
// with their defaults. Every caller that reads these settings fills them
// here.
func ExampleDefaults(delta, rate, clip, studyDelta float64) (float64, float64, float64) {
	if delta == 0 {
		delta = studyDelta
	}
	if rate == 0 {
		rate = DefaultExampleSampleRate
	}
	if clip == 0 {
		clip = DefaultExampleClip
	}
	return delta, rate, clip
}

// NewExampleDP calibrates local DP-SGD: the smallest noise multiplier c for
// which steps steps at Poisson rate q meet (eps, delta) by accountant kind.
// eps = +Inf gives c = 0 (clipping and sampling only).
func NewExampleDP(eps, delta, q, clip float64, steps int, kind privacy.AccountantKind) (ExampleDP, error) {
	e := ExampleDP{Epsilon: eps, Delta: delta, SampleRate: q, ClipNorm: clip, Steps: steps, Accountant: kind}
	if err := e.checkPublic(); err != nil {
		return ExampleDP{}, err
	}
	if !math.IsInf(eps, 1) {
		c, err := privacy.NoiseMultiplierFor(e.AccountantKind(), eps, delta, q, steps)
		if err != nil {
			return ExampleDP{}, fmt.Errorf("fl: local DP-SGD at ε=%g, δ=%g, q=%g over %d steps: %w", eps, delta, q, steps, err)
		}
		e.NoiseMultiplier = c
	}
	return e, e.Validate()
}

// checkPublic checks everything but the noise multiplier.
func (e ExampleDP) checkPublic() error {
	wrap := func(field string, err error) error {
		return fmt.Errorf("%w: local DP-SGD %s: %w", ErrConfig, field, err)
	}
	if err := privacy.CheckEpsilon(e.Epsilon); err != nil {
		return wrap("epsilon", err)
	}
	if err := privacy.CheckDelta(e.Delta); err != nil {
		return wrap("delta", err)
	}
	if err := privacy.CheckSampleRate(e.SampleRate); err != nil {
		return wrap("sample rate", err)
	}
	if err := privacy.CheckClipNorm(e.ClipNorm); err != nil {
		return wrap("clip norm", err)
	}
	if err := privacy.CheckRounds(e.Steps); err != nil {
		return wrap("steps", err)
	}
	if err := e.AccountantKind().Check(); err != nil {
		return wrap("accountant", err)
	}
	return nil
}

// Validate checks the setting: valid (ε, δ, q, C, steps, accountant), c = 0
// exactly when ε = +Inf, a lattice for (C, c), and that Steps steps at
// (q, c) stay within ε. Errors wrap ErrConfig or privacy.ErrBudgetExhausted.
func (e ExampleDP) Validate() error {
	if err := e.checkPublic(); err != nil {
		return err
	}
	if math.IsInf(e.Epsilon, 1) {
		if e.NoiseMultiplier != 0 {
			return fmt.Errorf("%w: local DP-SGD noise multiplier %v with ε = inf (no noise)", ErrConfig, e.NoiseMultiplier)
		}
		return nil
	}
	if err := privacy.CheckNoiseMultiplier(e.NoiseMultiplier); err != nil || e.NoiseMultiplier == 0 {
		return fmt.Errorf("%w: local DP-SGD noise multiplier %v: must be > 0 with a finite ε", ErrConfig, e.NoiseMultiplier)
	}
	if _, err := privacy.NewLattice(e.ClipNorm, e.NoiseMultiplier); err != nil {
		return fmt.Errorf("%w: local DP-SGD: %w", ErrConfig, err)
	}
	eps, err := privacy.EpsilonFor(e.AccountantKind(), []privacy.Event{{SampleRate: e.SampleRate, NoiseMultiplier: e.NoiseMultiplier, Rounds: e.Steps}}, e.Delta)
	if err != nil {
		return fmt.Errorf("%w: local DP-SGD: %w", ErrConfig, err)
	}
	if !(eps <= e.Epsilon) {
		return fmt.Errorf("%w: local DP-SGD: %d steps at q=%g, c=%g spend ε=%.6g > budget %g",
			privacy.ErrBudgetExhausted, e.Steps, e.SampleRate, e.NoiseMultiplier, eps, e.Epsilon)
	}
	return nil
}

// LocalAccountant is one client's own privacy accountant for its local
// DP-SGD steps: the list of runs of steps at (q, c), composed by
// privacy.EpsilonFor with the client's accountant kind. It is
// JSON-serialisable, so a client can keep it across sessions.
type LocalAccountant struct {
	Kind   privacy.AccountantKind `json:"accountant"`
	Events []privacy.Event        `json:"events"`
}

// Compose adds steps steps at rate q and noise multiplier c (merged with
// the last run when (q, c) are the same).
func (a *LocalAccountant) Compose(q, c float64, steps int) {
	if steps <= 0 {
		return
	}
	if n := len(a.Events); n > 0 && a.Events[n-1].SampleRate == q && a.Events[n-1].NoiseMultiplier == c {
		a.Events[n-1].Rounds += steps
		return
	}
	a.Events = append(a.Events, privacy.Event{SampleRate: q, NoiseMultiplier: c, Rounds: steps})
}

// Steps returns the number of steps composed.
func (a *LocalAccountant) Steps() int {
	n := 0
	for _, e := range a.Events {
		n += e.Rounds
	}
	return n
}

// Epsilon returns ε at delta of the composed steps (0 before any step;
// +Inf if a step had no noise).
func (a *LocalAccountant) Epsilon(delta float64) (float64, error) {
	kind := a.Kind
	if kind == "" {
		kind = privacy.DefaultAccountant
	}
	for _, e := range a.Events {
		if e.Rounds > 0 && e.NoiseMultiplier == 0 {
			return math.Inf(1), nil
		}
	}
	return privacy.EpsilonFor(kind, a.Events, delta)
}

// LocalDPSGD is one client's local DP-SGD: the study's setting and the
// client's own accountant. A client keeps it for the whole study (and may
// store it: it is JSON-serialisable); the steps it has taken are its
// history, so a fresh LocalDPSGD for a client that already trained would
// forget spent budget.
type LocalDPSGD struct {
	Setting    ExampleDP       `json:"setting"`
	Accountant LocalAccountant `json:"local_accountant"`

	lat *privacy.Lattice // nil without noise
}

// NewLocalDPSGD returns a client's local DP-SGD with nothing spent.
func NewLocalDPSGD(s ExampleDP) (*LocalDPSGD, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	l := &LocalDPSGD{Setting: s, Accountant: LocalAccountant{Kind: s.AccountantKind()}}
	return l, l.init()
}

func (l *LocalDPSGD) init() error {
	if l.Setting.NoiseMultiplier == 0 || l.lat != nil {
		return nil
	}
	lat, err := privacy.NewLattice(l.Setting.ClipNorm, l.Setting.NoiseMultiplier)
	if err != nil {
		return fmt.Errorf("%w: local DP-SGD: %w", ErrConfig, err)
	}
	l.lat = lat
	return nil
}

// UnmarshalJSON restores a stored LocalDPSGD and checks it: a valid
// setting and an accountant that holds only steps at the setting's (q, c).
func (l *LocalDPSGD) UnmarshalJSON(b []byte) error {
	type alias LocalDPSGD
	var v alias
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t := LocalDPSGD(v)
	if err := t.Setting.Validate(); err != nil {
		return err
	}
	for _, e := range t.Accountant.Events {
		if e.SampleRate != t.Setting.SampleRate || e.NoiseMultiplier != t.Setting.NoiseMultiplier || e.Rounds < 0 {
			return fmt.Errorf("%w: stored local accountant holds steps at q=%v, c=%v, the setting is q=%v, c=%v",
				ErrConfig, e.SampleRate, e.NoiseMultiplier, t.Setting.SampleRate, t.Setting.NoiseMultiplier)
		}
	}
	if t.Accountant.Kind != t.Setting.AccountantKind() {
		return fmt.Errorf("%w: stored local accountant is %q, the setting %q", ErrConfig, t.Accountant.Kind, t.Setting.AccountantKind())
	}
	if err := t.init(); err != nil {
		return err
	}
	*l = t
	return nil
}

// Spent returns the example-level ε the client has spent at the setting's δ
// (0 before any step, +Inf for a setting without noise once it trained).
func (l *LocalDPSGD) Spent() float64 {
	eps, err := l.Accountant.Epsilon(l.Setting.Delta)
	if err != nil {
		return math.NaN()
	}
	return eps
}

// Remaining returns how many more local steps fit the client's budget.
func (l *LocalDPSGD) Remaining() int {
	return max(0, l.Setting.Steps-l.Accountant.Steps())
}

// ErrLocalBudget is wrapped (with privacy.ErrBudgetExhausted) by the
// refusal of a client to train past its own example-level budget.
var ErrLocalBudget = errors.New("fl: the client's own example-level budget")

// Fits reports whether steps more local steps stay within the client's own
// budget: nil, or an error wrapping privacy.ErrBudgetExhausted and
// ErrLocalBudget. Without noise (ε = +Inf) every step fits.
func (l *LocalDPSGD) Fits(steps int) error {
	if l.Setting.NoiseMultiplier == 0 {
		return nil
	}
	a := LocalAccountant{Kind: l.Accountant.Kind, Events: append([]privacy.Event(nil), l.Accountant.Events...)}
	a.Compose(l.Setting.SampleRate, l.Setting.NoiseMultiplier, steps)
	eps, err := a.Epsilon(l.Setting.Delta)
	// !(eps <= budget): a NaN refuses.
	if err != nil || !(eps <= l.Setting.Epsilon) {
		return fmt.Errorf("%w: %w: %d more steps would take ε to %.6g > %g (%d of %d steps taken)",
			privacy.ErrBudgetExhausted, ErrLocalBudget, steps, eps, l.Setting.Epsilon, a.Steps()-steps, l.Setting.Steps)
	}
	return nil
}

// Train runs steps local DP-SGD steps on the client's windows (x: n×H,
// y: n), updating params in place from a fresh Adam state with learning
// rate lr, and calls progress(step, steps) after each step when progress is
// not nil. Batches are drawn from batches and noise from noise (both
// privacy.NewSecureRand in a live client). It refuses, changing nothing,
// if the steps do not fit the budget (Fits); the steps are composed into
// the accountant before the first is taken, so an interrupted run is
// accounted in full. A client without windows has nothing to protect and
// nothing to learn: params stay as they are and nothing is spent.
func (l *LocalDPSGD) Train(t *nn.Trainer, params, x, y []float64, steps int, lr float64, batches, noise *rand.Rand, progress func(step, steps int)) error {
	if steps < 0 {
		panic(fmt.Sprintf("fl: LocalDPSGD.Train with %d steps", steps))
	}
	n := len(y)
	if n == 0 || steps == 0 {
		return nil
	}
	if len(x)%n != 0 {
		panic("fl: LocalDPSGD.Train: x does not hold n windows")
	}
	h := len(x) / n
	if err := l.Fits(steps); err != nil {
		return err
	}
	if err := l.init(); err != nil {
		return err
	}
	s := l.Setting
	l.Accountant.Compose(s.SampleRate, s.NoiseMultiplier, steps)

	dim := len(params)
	adam := nn.NewAdam(dim, nn.AdamOptions{LearningRate: lr})
	grad := make([]float64, dim)
	var isum, ibuf []int64
	if l.lat != nil {
		isum, ibuf = make([]int64, dim), make([]int64, dim)
	}
	bx := make([]float64, 0, len(x))
	by := make([]float64, 0, n)
	scale := 1 / (s.SampleRate * float64(n)) // the expected batch size, fixed
	for step := 1; step <= steps; step++ {
		bx, by = bx[:0], by[:0]
		for _, i := range PoissonSample(n, s.SampleRate, batches) {
			bx = append(bx, x[i*h:(i+1)*h]...)
			by = append(by, y[i])
		}
		l.gradient(t, params, bx, by, scale, noise, grad, isum, ibuf)
		adam.Step(params, grad)
		if progress != nil {
			progress(step, steps)
		}
	}
	return nil
}

// gradient writes into grad the step's gradient estimate from the batch
// (bx, by): the sum of the per-example gradients clipped to C, on the
// lattice plus discrete Gaussian noise when the setting has noise, times
// scale = 1/(q·n). isum and ibuf are int64 workspace of len(grad) (nil
// without noise).
func (l *LocalDPSGD) gradient(t *nn.Trainer, params, bx, by []float64, scale float64, noise *rand.Rand, grad []float64, isum, ibuf []int64) {
	clip := l.Setting.ClipNorm
	if l.lat == nil {
		clear(grad)
		t.ExampleGradients(params, bx, by, func(_ int, g []float64, _ float64) {
			nn.ClipExample(g, clip)
			for k, v := range g {
				grad[k] += v
			}
		})
		for k := range grad {
			grad[k] *= scale
		}
		return
	}
	clear(isum)
	t.ExampleGradients(params, bx, by, func(_ int, g []float64, _ float64) {
		nn.ClipExample(g, clip)
		l.lat.Round(ibuf, g) // squared norm within ⌊(C/γ)²⌋, checked exactly
		for k, z := range ibuf {
			isum[k] += z
		}
	})
	l.lat.AddNoise(isum, noise)
	// Only the noised integers are used from here on (post-processing).
	unit := l.lat.Gamma * scale
	for k, z := range isum {
		grad[k] = float64(z) * unit
	}
}

// ClientRand returns the generator of stream s (StreamExampleBatches or
// StreamExampleNoise) for client number client in round round (1-based) of
// a research run seeded with seed: independent per client and round, so a
// simulation's result does not depend on which goroutine trains whom.
func ClientRand(seed uint64, s Stream, client, round int) *rand.Rand {
	return NewRand(RunSeed(RunSeed(seed, client), round), s)
}
