package fl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// Errors returned by the engine. Updates from peers are data, so their
// defects are errors, not panics.
var (
	ErrUpdateLength  = errors.New("fl: update has the wrong length")
	ErrNotFinite     = errors.New("fl: update contains NaN or Inf")
	ErrStudyComplete = errors.New("fl: all rounds are done")
	ErrConfig        = errors.New("fl: invalid configuration")
)

// Config is the public setting of one study (spec §4–§5).
type Config struct {
	// Clients is N, the number of enrolled clients. Required, ≥ 1. It is
	// fixed when the study starts.
	Clients int `json:"clients"`
	// ExpectedClients is m, the expected number of clients per round.
	// Required, 1 ≤ m ≤ N. The sampling rate is q = m/N.
	ExpectedClients int `json:"expected_clients"`
	// Rounds is T, the number of rounds. Required, ≥ 1.
	Rounds int `json:"rounds"`
	// ClipNorm is S, the L2 bound on each client's update. Required (> 0)
	// in DP mode; ignored otherwise.
	ClipNorm float64 `json:"clip_norm"`
	// NoiseMultiplier is c: the noise standard deviation in units of the
	// sensitivity, σ = c·S/m. Required (> 0) in DP mode; 0 otherwise.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// DP selects client-level DP (clipping and noise). false is the paper's
	// ε = ∞ baseline.
	DP bool `json:"dp"`
	// LocalEpochs is E, the number of full-batch Adam steps a client takes
	// per round. Required, ≥ 1.
	LocalEpochs int `json:"local_epochs"`
	// LearningRate is Adam's step size. Required, > 0.
	LearningRate float64 `json:"learning_rate"`
	// Accountant names the privacy accountant that turns the rounds into
	// (ε, δ) for the budget gate and the ledger: privacy.AccountantRDP or
	// privacy.AccountantPLD. Empty means RDP (states saved before the field
	// existed load as RDP).
	Accountant privacy.AccountantKind `json:"accountant,omitempty"`
	// NoiseSchedule, if set, gives each round its own noise multiplier:
	// NoiseSchedule[t−1] is c_t of round t (privacy.Schedule; exactly T
	// values, DP mode only, fixed and public before the study starts).
	// NoiseMultiplier must then be the smallest of them, so that a reader
	// that knows only NoiseMultiplier over-estimates ε. Empty means every
	// round has NoiseMultiplier.
	NoiseSchedule []float64 `json:"noise_schedule,omitempty"`
	// Spectral, when set, are the layer sizes of a Lipschitz-bounded
	// network (the publishable design, issue 27): each client trains with
	// spectral normalisation (nn.Trainer.TrainSpectral, one power-iteration
	// step per layer and Adam step), and the server projects every model it
	// releases to spectral norm ≤ 1 per layer (nn.MLP.ProjectSpectral), so
	// the released model, its hash and every LHA's copy are the projected
	// model. The projection is post-processing of the noised model: the
	// client-level DP is unchanged. Empty: neither.
	Spectral []int `json:"spectral,omitempty"`
}

// AccountantKind returns the accountant of c (RDP when none is named).
func (c Config) AccountantKind() privacy.AccountantKind {
	if c.Accountant == "" {
		return privacy.DefaultAccountant
	}
	return c.Accountant
}

// Accounting returns the accountant of c (RDP when none is named); an
// unknown name is an error.
func (c Config) Accounting() (privacy.Accountant, error) {
	return privacy.LookupAccountant(c.Accountant)
}

// SampleRate returns q = m/N.
func (c Config) SampleRate() float64 {
	return float64(c.ExpectedClients) / float64(c.Clients)
}

// Sigma returns the standard deviation σ = c·S/m of the noise added to the
// mean update (0 in non-DP mode).
func (c Config) Sigma() float64 {
	if !c.DP {
		return 0
	}
	return c.NoiseMultiplier * c.ClipNorm / float64(c.ExpectedClients)
}

// Validate checks the configuration; errors wrap ErrConfig and name the
// field and its allowed range.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	switch {
	case c.Clients < 1:
		return bad("clients (N) is %d, must be at least 1", c.Clients)
	case c.ExpectedClients < 1 || c.ExpectedClients > c.Clients:
		return bad("expected clients per round (m) is %d, must be in [1, N=%d]", c.ExpectedClients, c.Clients)
	case c.Rounds < 1:
		return bad("rounds (T) is %d, must be at least 1", c.Rounds)
	case c.LocalEpochs < 1:
		return bad("local epochs (E) is %d, must be at least 1", c.LocalEpochs)
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return bad("learning rate is %v, must be a finite number > 0", c.LearningRate)
	case len(c.Spectral) == 1 || slices.ContainsFunc(c.Spectral, func(n int) bool { return n < 1 }):
		return bad("spectral layer sizes %v: need at least 2 sizes, each at least 1", c.Spectral)
	}
	if err := c.AccountantKind().Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.DP {
		if err := privacy.CheckClipNorm(c.ClipNorm); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if err := privacy.CheckNoiseMultiplier(c.NoiseMultiplier); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if c.NoiseMultiplier == 0 {
			return bad("noise multiplier is 0 in DP mode: that is no privacy at all")
		}
		if _, err := privacy.NewLattice(c.ClipNorm, c.NoiseMultiplier); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	} else if c.NoiseMultiplier != 0 {
		return bad("noise multiplier %v given with DP off", c.NoiseMultiplier)
	}
	return c.validateSchedule()
}

// Stream names an independent random stream derived from a run's seed.
type Stream uint64

// The streams of one run. Adding a stream never changes the others.
const (
	StreamInit     Stream = 1 // initial global model
	StreamSampling Stream = 2 // client sampling
	StreamNoise    Stream = 3 // DP noise (research runs only)
	StreamSplit    Stream = 4 // random train/test split
)

// NewRand returns the generator for stream s of a run seeded with seed.
// The same (seed, s) always gives the same sequence. Use it for research
// runs and the coordinator's --insecure-seed mode; live noise must come from
// privacy.NewSecureRand.
func NewRand(seed uint64, s Stream) *rand.Rand {
	return rand.New(rand.NewPCG(mix(seed), mix(uint64(s)^0x5851f42d4c957f2d)))
}

// RunSeed derives the seed of run number run (0, 1, …) of an experiment
// seeded with seed, so that runs are independent and any one of them can be
// reproduced alone.
func RunSeed(seed uint64, run int) uint64 {
	return mix(seed ^ mix(uint64(run)+0x9e3779b97f4a7c15))
}

// mix is the splitmix64 finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// PoissonSample returns, in increasing order, the indices of the clients
// among 0…n−1 included in a round when each is included independently with
// probability q. It draws exactly one Float64 per client, in index order, so
// the same generator state gives the same sample wherever it runs.
func PoissonSample(n int, q float64, rng *rand.Rand) []int {
	var out []int
	for i := 0; i < n; i++ {
		if rng.Float64() < q {
			out = append(out, i)
		}
	}
	return out
}

// FixedSample returns m distinct indices among 0…n−1 in increasing order,
// drawn uniformly without replacement (non-DP mode only: the accountant
// does not cover fixed-size sampling).
func FixedSample(n, m int, rng *rand.Rand) []int {
	if m > n {
		m = n
	}
	perm := rng.Perm(n)[:m]
	out := make([]int, m)
	copy(out, perm)
	sortInts(out)
	return out
}

func sortInts(a []int) {
	// insertion sort: m is small and this avoids importing sort for one use
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// LocalUpdate trains a copy of global on the client's windows (x: n×H
// row-major, y: n) for cfg.LocalEpochs full-batch Adam steps from a fresh
// optimiser state, and writes Δw = w_local − global into dst, clipped to
// cfg.ClipNorm in DP mode. It returns ‖Δw‖₂ before clipping. A client with
// no windows sends a zero update. dst must have len(global).
func LocalUpdate(t *nn.Trainer, global, x, y []float64, cfg Config, dst []float64) (norm float64) {
	return LocalUpdateProgress(t, global, x, y, cfg, dst, nil)
}

// LocalUpdateProgress is LocalUpdate that calls progress(step, E) after each
// local training step when progress is not nil (for progress bars). The
// update is identical to LocalUpdate's.
func LocalUpdateProgress(t *nn.Trainer, global, x, y []float64, cfg Config, dst []float64, progress func(step, steps int)) (norm float64) {
	if len(dst) != len(global) {
		panic("fl: LocalUpdate: dst and global lengths differ")
	}
	if len(y) == 0 {
		clear(dst)
		return 0
	}
	copy(dst, global)
	if len(cfg.Spectral) > 0 {
		t.TrainSpectral(dst, x, y, cfg.LocalEpochs, nn.AdamOptions{LearningRate: cfg.LearningRate}, 1)
		if progress != nil {
			progress(cfg.LocalEpochs, cfg.LocalEpochs)
		}
	} else {
		t.TrainProgress(dst, x, y, cfg.LocalEpochs, nn.AdamOptions{LearningRate: cfg.LearningRate}, progress)
	}
	for i, g := range global {
		dst[i] -= g
	}
	if cfg.DP {
		return privacy.ClipL2(dst, cfg.ClipNorm)
	}
	return privacy.L2Norm(dst)
}

// An Aggregator accumulates one round's updates as they arrive.
//
// In DP mode it works on the lattice γℤᵈ of privacy.Lattice: each update
// is re-clipped to S, rounded to an integer vector (in units of γ) whose
// squared norm is checked exactly against ⌊(S/γ)²⌋, and summed in int64,
// so the sum is exact and does not depend on the order of the updates.
// Finish adds exact discrete Gaussian noise to the integer sum and releases
// only a function of the noised integers (docs/privacy.md). In non-DP mode
// updates are summed in float64 as they are.
type Aggregator struct {
	cfg  Config
	lat  *privacy.Lattice // DP mode only
	isum []int64          // DP mode: the exact sum in units of γ
	ibuf []int64
	sum  []float64 // non-DP mode
	buf  []float64
	n    int
}

// ErrTooManyUpdates is returned by Aggregator.Add once a round holds as
// many updates as its int64 sum can take without overflow (at least 2³⁷;
// far more than any study's N).
var ErrTooManyUpdates = errors.New("fl: too many updates in one round")

// ErrNormBound is returned by Aggregator.AddLattice for an encoded update
// beyond the lattice's norm bound.
var ErrNormBound = errors.New("fl: encoded update beyond the norm bound")

// NewAggregator returns an empty aggregator for updates of length dim. It
// panics if cfg is in DP mode and its (S, c) admit no lattice (Config.Validate
// reports that as an error first).
func NewAggregator(cfg Config, dim int) *Aggregator {
	a := &Aggregator{cfg: cfg, buf: make([]float64, dim)}
	if cfg.DP {
		lat, err := privacy.NewLattice(cfg.ClipNorm, cfg.NoiseMultiplier)
		if err != nil {
			panic(fmt.Sprintf("fl: NewAggregator: %v", err))
		}
		a.lat, a.isum, a.ibuf = lat, make([]int64, dim), make([]int64, dim)
	} else {
		a.sum = make([]float64, dim)
	}
	return a
}

// Lattice returns the DP lattice (nil in non-DP mode).
func (a *Aggregator) Lattice() *privacy.Lattice { return a.lat }

// Add checks one client's update and adds it to the round's sum. In DP mode
// it re-clips the update to S whatever the client claims to have done and
// rounds it onto the lattice within the exact norm bound. A rejected update
// leaves the sum unchanged. update is not modified.
func (a *Aggregator) Add(update []float64) error {
	if err := CheckUpdate(update, len(a.buf)); err != nil {
		return err
	}
	if !a.cfg.DP {
		for i, v := range update {
			a.sum[i] += v
		}
		a.n++
		return nil
	}
	if int64(a.n) >= a.lat.MaxAdds {
		return fmt.Errorf("%w: %d already", ErrTooManyUpdates, a.n)
	}
	copy(a.buf, update)
	privacy.ClipL2(a.buf, a.cfg.ClipNorm)
	a.lat.Round(a.ibuf, a.buf)
	for i, z := range a.ibuf {
		a.isum[i] += z // |Σz| ≤ MaxAdds·MaxCoord ≤ 2⁶²: no overflow
	}
	a.n++
	return nil
}

// AddLattice adds an update the LHA has already encoded on the lattice
// (shared/secagg's Encoder: integers in units of γ, squared norm ≤ B²),
// the single-coordinator path of a study whose encoding happens at the
// LHA. It checks |k_i| ≤ MaxCoord and Σk_i² ≤ NormBound2 exactly and
// rejects (ErrNormBound) a vector outside; a rejected update leaves the
// sum unchanged. DP mode only (it panics otherwise).
func (a *Aggregator) AddLattice(k []int64) error {
	if !a.cfg.DP {
		panic("fl: AddLattice outside DP mode")
	}
	if len(k) != len(a.ibuf) {
		return fmt.Errorf("%w: got %d values, the model has %d", ErrUpdateLength, len(k), len(a.ibuf))
	}
	if int64(a.n) >= a.lat.MaxAdds {
		return fmt.Errorf("%w: %d already", ErrTooManyUpdates, a.n)
	}
	var acc uint64
	for i, z := range k {
		if z < -a.lat.MaxCoord || z > a.lat.MaxCoord {
			return fmt.Errorf("%w: lattice value %d is %d, beyond %d", ErrNormBound, i, z, a.lat.MaxCoord)
		}
		if acc += uint64(z * z); acc > a.lat.NormBound2 {
			return fmt.Errorf("%w: at value %d", ErrNormBound, i)
		}
	}
	for i, z := range k {
		a.isum[i] += z
	}
	a.n++
	return nil
}

// CheckUpdate applies the admission checks of Aggregator.Add to an update
// for a model of dim parameters: the right length (ErrUpdateLength) and
// only finite values (ErrNotFinite).
func CheckUpdate(update []float64, dim int) error {
	if len(update) != dim {
		return fmt.Errorf("%w: got %d values, the model has %d", ErrUpdateLength, len(update), dim)
	}
	for i, v := range update {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: value %d is %v", ErrNotFinite, i, v)
		}
	}
	return nil
}

// Received returns the number of updates added since the last Finish.
func (a *Aggregator) Received() int { return a.n }

// Finish applies the round to global in place and resets the aggregator.
// DP mode: the integer sum Z gets independent N_ℤ(0, σ_ℤ²) noise on every
// coordinate, σ_ℤ² = Lattice.Sigma2 ≥ (c·S/γ)², and global += γ·Z/m, whatever
// the number received (zero received still draws and adds the noise: the
// round counts). The noise is drawn by privacy.DiscreteGaussian from noise
// (privacy.NewSecureRand in a live study, fl.NewRand(seed, StreamNoise) in
// research mode); the draws consumed depend only on the generator, never on
// the updates. Non-DP mode: global += sum/received (unchanged if nothing was
// received).
func (a *Aggregator) Finish(global []float64, noise *rand.Rand) {
	if len(global) != len(a.buf) {
		panic("fl: Finish: global has the wrong length")
	}
	switch {
	case a.cfg.DP:
		a.lat.AddNoise(a.isum, noise)
		// From here on only the noised integers are used (post-processing).
		step := a.lat.Gamma / float64(a.cfg.ExpectedClients)
		for i, z := range a.isum {
			global[i] += float64(z) * step
		}
		clear(a.isum)
	case a.n > 0:
		n := float64(a.n)
		for i, s := range a.sum {
			global[i] += s / n
		}
		clear(a.sum)
	}
	a.n = 0
}

// Event is the privacy event of one committed round: what a client needs,
// with the public study parameters, to recompute the budget spent.
type Event struct {
	Round           int     `json:"round"` // 1-based
	SampleRate      float64 `json:"sampling_rate"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// Epsilon is ε after this round at Delta; +Inf in non-DP mode (encoded
	// in JSON as the string "inf").
	Epsilon float64 `json:"-"`
	Delta   float64 `json:"delta"`
	// Accountant is the accountant that computed Epsilon (empty in records
	// written before the field existed: RDP).
	Accountant privacy.AccountantKind `json:"accountant,omitempty"`
	// Gamma is the lattice step γ the round was aggregated on, and Sampler
	// the noise sampler (privacy.SamplerName); both empty in non-DP mode and
	// in events written before the lattice mechanism.
	Gamma   float64 `json:"gamma,omitempty"`
	Sampler string  `json:"sampler,omitempty"`
}

type eventAlias Event // no methods: avoids recursing into MarshalJSON

type eventJSON struct {
	eventAlias
	Epsilon JSONFloat `json:"epsilon"`
}

// MarshalJSON encodes Epsilon as a number, or "inf".
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{eventAlias(e), JSONFloat(e.Epsilon)})
}

// UnmarshalJSON is the inverse of MarshalJSON.
func (e *Event) UnmarshalJSON(b []byte) error {
	var v eventJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Event(v.eventAlias)
	e.Epsilon = float64(v.Epsilon)
	return nil
}

// JSONFloat is a float64 whose JSON form is a number, or the string "inf"
// for +Inf (JSON has no infinity). NaN and −Inf are refused.
type JSONFloat float64

// MarshalJSON implements json.Marshaler.
func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsNaN(v) || math.IsInf(v, -1):
		return nil, fmt.Errorf("fl: cannot encode %v in JSON", v)
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *JSONFloat) UnmarshalJSON(b []byte) error {
	if string(b) == `"inf"` || string(b) == `"Infinity"` {
		*f = JSONFloat(math.Inf(1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("fl: want a number or \"inf\": %w", err)
	}
	*f = JSONFloat(v)
	return nil
}
