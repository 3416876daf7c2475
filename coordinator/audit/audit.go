// Package audit measures privacy empirically: it runs the real DP round
// engine of fedcast (fl.Server and fl.Aggregator, the lattice aggregation and
// the exact discrete Gaussian sampler that `fedcast serve` uses) on a study
// with canary clients and turns one run's outcome into a lower bound on ε
// that holds with 95 % confidence, following Steinke, Nasr and Jagielski,
// "Privacy auditing with one (1) training run" (NeurIPS 2023). It is what
// `fedcast audit` runs; docs/privacy.md ("Empirical audit") explains the
// design and gives the figures.
//
// The audited study has N enrolled clients, m expected per round (q = m/N),
// T rounds, clip bound S = 0.5 and the noise multiplier c that the accountant
// needs for the target ε. K of the N client slots are canaries: each has a
// fixed random direction of norm S in a d-dimensional model and is
// enrolled with probability ½, independently (an enrolled canary is sampled
// like every client, with probability q per round, and then sends its
// direction as its update). The other N − K clients send zero updates: the
// guarantee holds for every dataset, and zero updates are the one that
// leaves the canaries' signal alone, so the audit is as sensitive as it can
// be (real updates would only add interference). After the run each canary
// is scored by the inner product of its direction with the sum of the
// released model changes, w_T − w_0.
package audit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
)

// The model dimension d of the audit is the smallest power of two ≥ K
// (at least 16). The canaries' directions are K distinct rows of a d×d
// Hadamard matrix with a random sign on every coordinate, chosen at
// random, scaled to norm S: dense, random-looking, and exactly orthogonal,
// so no canary's score picks up the other canaries' updates (random
// Gaussian directions in 1,024 dimensions would add interference of the
// same size as the noise). Rounding to the lattice keeps them orthogonal:
// every coordinate has the same magnitude, which rounds to the same
// integer. The scores are one fast Walsh–Hadamard transform of w_T − w_0.
func dimFor(K int) int {
	d := 16
	for d < K {
		d *= 2
	}
	return d
}

// ClipNorm is S of the audited study (the paper's).
const ClipNorm = 0.5

// Confidence is the confidence level of EpsilonLower.
const Confidence = 0.95

// guessFractions are the numbers of guesses, fixed in advance: for each f
// the auditor guesses "enrolled" for the ⌈f·K⌉ highest scores and "not
// enrolled" for as many lowest; the bound is the largest over the choices,
// each tested at (1 − Confidence)/len(guessFractions) (Bonferroni).
var guessFractions = []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.2}

// Method describes the estimator in the JSON output.
const Method = "steinke-nasr-jagielski-2023 one run: canaries (orthogonal directions) enrolled w.p. 1/2, score = inner product of direction and w_T - w_0, " +
	"top/bottom k guesses for k/K in {0.005,0.01,0.02,0.05,0.1,0.2}, Bonferroni over the 6 choices"

// Streams of an audit seed (see fl.NewRand); the round engine's own
// sampling and noise streams are fl.StreamSampling and fl.StreamNoise.
const (
	streamCanaries   fl.Stream = 101
	streamMembership fl.Stream = 102
)

// Options configure Run. Zero values take the defaults noted.
type Options struct {
	// Epsilon is the target ε the noise is calibrated for. Required.
	Epsilon float64
	// Delta is δ (default 1e-5).
	Delta float64
	// Clients is N (default 20,000), Expected is m (default N/4: q = 0.25),
	// Rounds is T (default 75), Canaries is K (default 5,000; K ≤ N).
	Clients, Expected, Rounds, Canaries int
	// Seed, if not nil, makes the run reproducible: the canaries, the
	// enrolment coins, the sampling and the noise come from fl.NewRand
	// streams of it (the noise sampler is the same, seeded). nil: fresh
	// randomness, the noise from privacy.NewSecureRand as in a live study.
	Seed *uint64
	// NoiseScale multiplies the noise actually added (default 1). FOR
	// TESTING ONLY: a value below 1 emulates a broken mechanism that adds
	// less noise than the accountant assumes.
	NoiseScale float64
	// Dim overrides the model dimension (a power of two ≥ Canaries;
	// default the smallest such, at least 16).
	Dim int
}

// Result is the audit's outcome; its JSON form is the contract of
// `fedcast audit --json`.
type Result struct {
	// Epsilon is the accountant's ε for the audited run (q, c, T at δ).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// NoiseMultiplier is c, calibrated by privacy.NoiseMultiplier.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// NoiseScale is the factor applied to the noise (1 unless testing).
	NoiseScale float64 `json:"noise_scale"`
	// EpsilonLower is the lower bound on ε at Confidence.
	EpsilonLower float64 `json:"epsilon_lower"`
	Confidence   float64 `json:"confidence"`
	Canaries     int     `json:"canaries"`
	Method       string  `json:"method"`

	// Guesses and Correct are those of the choice of k that gave
	// EpsilonLower (not part of the JSON contract).
	Guesses, Correct int `json:"-"`
}

// ErrOptions wraps every invalid option.
var ErrOptions = errors.New("audit: invalid options")

func (o *Options) defaults() error {
	if o.Delta == 0 {
		o.Delta = 1e-5
	}
	if o.Clients == 0 {
		o.Clients = 20000
	}
	if o.Expected == 0 {
		o.Expected = o.Clients / 4
	}
	if o.Rounds == 0 {
		o.Rounds = 75
	}
	if o.Canaries == 0 {
		o.Canaries = 5000
	}
	if o.NoiseScale == 0 {
		o.NoiseScale = 1
	}
	if o.Dim == 0 && o.Canaries > 0 {
		o.Dim = dimFor(o.Canaries)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, a...))
	}
	switch {
	case math.IsInf(o.Epsilon, 1):
		return bad("epsilon is +Inf: there is nothing to audit without DP")
	case privacy.CheckEpsilon(o.Epsilon) != nil:
		return bad("epsilon %v, must be a finite number > 0", o.Epsilon)
	case privacy.CheckDelta(o.Delta) != nil:
		return bad("delta %v, must be in (0, 1)", o.Delta)
	case o.Clients < 2:
		return bad("clients (N) %d, must be at least 2", o.Clients)
	case o.Delta*float64(o.Clients) >= 1:
		// As for a study file: δ ≥ 1/N admits a mechanism that publishes
		// one client's data outright, so its ε means nothing.
		return bad("delta %v, must be below 1/N = %v (N = %d clients): a larger δ admits releasing a client's data outright; lower --delta or raise --clients", o.Delta, 1/float64(o.Clients), o.Clients)
	case o.Expected < 1 || o.Expected > o.Clients:
		return bad("expected clients per round (m) %d, must be in [1, N=%d]", o.Expected, o.Clients)
	case privacy.CheckRounds(o.Rounds) != nil:
		return bad("rounds (T) %d, must be in [1, %d]", o.Rounds, privacy.MaxRounds)
	case o.Canaries < 10 || o.Canaries > o.Clients:
		return bad("canaries (K) %d, must be in [10, N=%d]", o.Canaries, o.Clients)
	case !(o.NoiseScale > 0) || math.IsInf(o.NoiseScale, 0):
		return bad("noise scale %v, must be a finite number > 0", o.NoiseScale)
	case o.Dim < o.Canaries || o.Dim > 1<<20 || o.Dim&(o.Dim-1) != 0:
		return bad("dimension %d, must be a power of two in [K=%d, 2^20]", o.Dim, o.Canaries)
	}
	return nil
}

// Run performs one audit.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	cfg, aggCfg, eps, err := configs(o)
	if err != nil {
		return nil, err
	}
	srv, err := fl.NewServer(cfg, make([]float64, o.Dim), o.Epsilon, o.Delta)
	if err != nil {
		return nil, err
	}
	agg := fl.NewAggregator(aggCfg, o.Dim)

	var canaryRng, coin, sampling, noise *rand.Rand
	if o.Seed != nil {
		canaryRng = fl.NewRand(*o.Seed, streamCanaries)
		coin = fl.NewRand(*o.Seed, streamMembership)
		sampling = fl.NewRand(*o.Seed, fl.StreamSampling)
		noise = fl.NewRand(*o.Seed, fl.StreamNoise)
	} else {
		canaryRng, coin, sampling, noise = privacy.NewSecureRand(), privacy.NewSecureRand(), privacy.NewSecureRand(), privacy.NewSecureRand()
	}
	cs := newCanaries(o.Canaries, o.Dim, canaryRng, coin)

	// The study: clients 0…K−1 are the canary slots, the rest send zeros
	// (adding a zero update leaves the aggregator's integer sum unchanged,
	// so they are not added).
	w0 := slices.Clone(srv.Global)
	u := make([]float64, o.Dim)
	for srv.Round < cfg.Rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, i := range srv.Sample(sampling) {
			if i < cs.K && cs.enrolled[i] {
				cs.write(u, i)
				if err := agg.Add(u); err != nil {
					return nil, err
				}
			}
		}
		if _, err := srv.Commit(agg, noise); err != nil {
			return nil, err
		}
	}

	res := &Result{Epsilon: eps, Delta: o.Delta, NoiseMultiplier: cfg.NoiseMultiplier, NoiseScale: o.NoiseScale,
		Confidence: Confidence, Canaries: cs.K, Method: Method}
	if o.NoiseScale != 1 {
		res.Method = fmt.Sprintf("TESTING ONLY: noise multiplied by %g, the mechanism is deliberately broken; %s", o.NoiseScale, Method)
	}
	cs.guess(res, cs.ranking(srv.Global, w0), o.Delta)
	return res, nil
}

// configs calibrates the study's noise multiplier c to o's budget and
// returns the server's configuration (which accounts for c), the
// aggregator's (which adds the noise actually used: c·F, F = 1 unless
// testing) and the ε that c gives.
func configs(o Options) (cfg, aggCfg fl.Config, eps float64, err error) {
	q := float64(o.Expected) / float64(o.Clients)
	c, err := privacy.NoiseMultiplier(o.Epsilon, o.Delta, q, o.Rounds)
	if err != nil {
		return cfg, aggCfg, 0, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	eps, _ = privacy.Epsilon(q, c, o.Rounds, o.Delta)
	cfg = fl.Config{Clients: o.Clients, ExpectedClients: o.Expected, Rounds: o.Rounds, ClipNorm: ClipNorm,
		NoiseMultiplier: c, DP: true, LocalEpochs: 1, LearningRate: 1e-3}
	aggCfg = cfg
	aggCfg.NoiseMultiplier = c * o.NoiseScale
	for _, k := range []fl.Config{cfg, aggCfg} {
		if err := k.Validate(); err != nil {
			return cfg, aggCfg, 0, fmt.Errorf("%w: %w", ErrOptions, err)
		}
	}
	return cfg, aggCfg, eps, nil
}

// canaries are K updates: rows[i] of the d×d Hadamard matrix H (H[r][j] =
// (−1)^popcount(r&j)) times a random sign per coordinate, scaled to norm
// S; each enrolled w.p. ½.
type canaries struct {
	K        int
	rows     []int
	signs    []float64
	enrolled []bool
	a        float64 // S/√d
}

func newCanaries(K, d int, canaryRng, coin *rand.Rand) *canaries {
	cs := &canaries{K: K, rows: canaryRng.Perm(d)[:K], signs: make([]float64, d), enrolled: make([]bool, K),
		a: ClipNorm / math.Sqrt(float64(d))}
	for j := range cs.signs {
		cs.signs[j] = float64(1 - 2*canaryRng.IntN(2))
	}
	for i := range cs.enrolled {
		cs.enrolled[i] = coin.IntN(2) == 1
	}
	return cs
}

// write sets dst to canary i.
func (cs *canaries) write(dst []float64, i int) {
	for j := range dst {
		if bits.OnesCount(uint(cs.rows[i]&j))&1 == 1 {
			dst[j] = -cs.a * cs.signs[j]
		} else {
			dst[j] = cs.a * cs.signs[j]
		}
	}
}

// ranking returns the canaries by score, highest first (ties by index):
// the score of canary i is ⟨canary_i, w_T − w_0⟩ = a·(H·(signs ⊙ (w_T −
// w_0)))[rows[i]]. It overwrites wT.
func (cs *canaries) ranking(wT, w0 []float64) []int {
	h := wT
	for j := range h {
		h[j] = (h[j] - w0[j]) * cs.signs[j]
	}
	fwht(h)
	scores := make([]float64, cs.K)
	for i, r := range cs.rows {
		scores[i] = cs.a * h[r]
	}
	order := make([]int, cs.K)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return a - b
	})
	return order
}

// guess guesses the top k of order enrolled and the bottom k not, for
// each of guessFractions, and records in res the guess with the highest
// lower bound on ε.
func (cs *canaries) guess(res *Result, order []int, delta float64) {
	K := cs.K
	level := (1 - Confidence) / float64(len(guessFractions))
	for _, f := range guessFractions {
		k := int(math.Ceil(f * float64(K)))
		if 2*k > K {
			continue
		}
		correct := 0
		for _, i := range order[:k] {
			if cs.enrolled[i] {
				correct++
			}
		}
		for _, i := range order[K-k:] {
			if !cs.enrolled[i] {
				correct++
			}
		}
		lb := EpsilonLowerBound(K, 2*k, correct, delta, level)
		if lb > res.EpsilonLower || res.Guesses == 0 {
			res.EpsilonLower, res.Guesses, res.Correct = lb, 2*k, correct
		}
	}
}

// fwht replaces x (length a power of two) by Hx, H[r][j] = (−1)^popcount(r&j).
func fwht(x []float64) {
	for h := 1; h < len(x); h *= 2 {
		for i := 0; i < len(x); i += 2 * h {
			for j := i; j < i+h; j++ {
				x[j], x[j+h] = x[j]+x[j+h], x[j]-x[j+h]
			}
		}
	}
}

// PValue is the probability, for an (ε, δ)-DP mechanism audited with K
// canaries each included independently with probability ½, that an auditor
// making r guesses gets at least v right (Steinke, Nasr, Jagielski 2023,
// Theorem 3 with its δ term):
//
//	P[W ≥ v] ≤ β + 2Kδ·α,  β = P[Bin(r, p) ≥ v],
//	α = max_{1≤i≤v} P[v−i ≤ Bin(r, p) < v]/i,  p = e^ε/(1+e^ε).
func PValue(K, r, v int, eps, delta float64) float64 {
	if v <= 0 {
		return 1
	}
	p := 1 / (1 + math.Exp(-eps))
	pmf := binomialPMF(r, p)
	beta := 0.0
	for j := v; j <= r; j++ {
		beta += pmf[j]
	}
	alpha, sum := 0.0, 0.0
	for i := 1; i <= v; i++ {
		sum += pmf[v-i]
		alpha = max(alpha, sum/float64(i))
	}
	return min(1, beta+2*float64(K)*delta*alpha)
}

// EpsilonLowerBound returns the largest ε (to 1e-6, in [0, 50]) at which
// PValue(K, r, v, ε, δ) ≤ level: every smaller ε is rejected at that level
// by v correct guesses out of r. 0 if even ε = 0 is not rejected.
func EpsilonLowerBound(K, r, v int, delta, level float64) float64 {
	if PValue(K, r, v, 0, delta) > level {
		return 0
	}
	lo, hi := 0.0, 50.0
	if PValue(K, r, v, hi, delta) <= level {
		return hi
	}
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if PValue(K, r, v, mid, delta) <= level {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// binomialPMF returns P[Bin(r, p) = j] for j = 0…r, from log-gamma.
func binomialPMF(r int, p float64) []float64 {
	out := make([]float64, r+1)
	lr, _ := math.Lgamma(float64(r) + 1)
	lp, lq := math.Log(p), math.Log1p(-p)
	for j := 0; j <= r; j++ {
		a, _ := math.Lgamma(float64(j) + 1)
		b, _ := math.Lgamma(float64(r-j) + 1)
		out[j] = math.Exp(lr - a - b + float64(j)*lp + float64(r-j)*lq)
	}
	return out
}
