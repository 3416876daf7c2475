package fl

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// windows returns n windows of h inputs with targets; outlier ≠ 0 makes
// window 0's target huge, so its gradient is far above any clip bound.
func windows(n, h int, outlier float64, rng *rand.Rand) (x, y []float64) {
	for i := 0; i < n; i++ {
		for k := 0; k < h; k++ {
			x = append(x, rng.NormFloat64())
		}
		y = append(y, rng.NormFloat64())
	}
	if outlier != 0 {
		y[0] = outlier
	}
	return x, y
}

func mustExampleDP(t *testing.T, eps, delta, q, clip float64, steps int, kind privacy.AccountantKind) ExampleDP {
	t.Helper()
	e, err := NewExampleDP(eps, delta, q, clip, steps, kind)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestPoissonBatchSizesBinomial: the batch sizes of local DP-SGD follow
// Binomial(n, q). Train draws its batches with PoissonSample, one Float64
// per window per step and nothing else from the batch generator (checked
// below by replay), so the law of PoissonSample's sizes is the law of the
// batches. Pearson's χ² test over 11 bins (sizes 0…9 and ≥ 10; 10 degrees
// of freedom) at a false-rejection rate of 1e-3: critical value 29.588.
// The seed is fixed, so the test is deterministic; the rate is what a
// fresh seed would give.
func TestPoissonBatchSizesBinomial(t *testing.T) {
	const n, q, reps = 13, 0.4, 20000
	rng := NewRand(7, StreamExampleBatches)
	obs := make([]float64, 11)
	for range reps {
		obs[min(len(PoissonSample(n, q, rng)), 10)]++
	}
	exp := make([]float64, 11)
	for k := 0; k <= n; k++ {
		lg, _ := math.Lgamma(n + 1)
		lk, _ := math.Lgamma(float64(k) + 1)
		lr, _ := math.Lgamma(float64(n-k) + 1)
		p := math.Exp(lg - lk - lr + float64(k)*math.Log(q) + float64(n-k)*math.Log(1-q))
		exp[min(k, 10)] += reps * p
	}
	chi2 := 0.0
	for k := range obs {
		if exp[k] < 5 {
			t.Fatalf("bin %d expects %.1f < 5: the χ² approximation does not hold", k, exp[k])
		}
		chi2 += (obs[k] - exp[k]) * (obs[k] - exp[k]) / exp[k]
	}
	if chi2 > 29.588 {
		t.Errorf("χ² = %.2f > 29.588 (df 10, α = 1e-3): batch sizes %v, expected %v", chi2, obs, exp)
	}

	// Train consumes exactly n Float64 per step from the batch generator:
	// independent inclusion of every window, no shuffle, no fixed size.
	x, y := windows(n, 3, 0, rand.New(rand.NewPCG(1, 1)))
	l, err := NewLocalDPSGD(mustExampleDP(t, 4, 1e-5, q, 1, 50, privacy.AccountantRDP))
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewMLP(3, 4, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rand.New(rand.NewPCG(2, 2)))
	a, b := NewRand(3, StreamExampleBatches), NewRand(3, StreamExampleBatches)
	if err := l.Train(nn.NewTrainer(m), p, x, y, 7, 0.01, a, NewRand(3, StreamExampleNoise), nil); err != nil {
		t.Fatal(err)
	}
	for range 7 * n {
		b.Float64()
	}
	if a.Uint64() != b.Uint64() {
		t.Error("Train did not draw exactly one Float64 per window per step from the batch generator")
	}
}

// TestEmptyBatchIsAStep: a step whose Poisson batch is empty still adds
// noise and is accounted.
func TestEmptyBatchIsAStep(t *testing.T) {
	const steps = 5
	ex := mustExampleDP(t, 3, 1e-5, 0.01, 1, steps, privacy.AccountantRDP)
	x, y := windows(3, 2, 0, rand.New(rand.NewPCG(5, 5)))
	replay := NewRand(11, StreamExampleBatches)
	for range steps {
		if s := PoissonSample(3, ex.SampleRate, replay); len(s) != 0 {
			t.Fatalf("seed gives a non-empty batch %v; choose another seed", s)
		}
	}
	l, err := NewLocalDPSGD(ex)
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewMLP(2, 1)
	p := []float64{0.5, -0.25, 0.125}
	before := slices.Clone(p)
	if err := l.Train(nn.NewTrainer(m), p, x, y, steps, 0.01, NewRand(11, StreamExampleBatches), NewRand(11, StreamExampleNoise), nil); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(p, before) {
		t.Error("noise-only steps left the model unchanged")
	}
	if got := l.Accountant.Steps(); got != steps {
		t.Errorf("accounted %d steps, want %d (empty batches count)", got, steps)
	}
	want, _ := privacy.EpsilonFor(privacy.AccountantRDP, []privacy.Event{{SampleRate: 0.01, NoiseMultiplier: ex.NoiseMultiplier, Rounds: steps}}, 1e-5)
	if l.Spent() != want || want == 0 {
		t.Errorf("spent ε=%v, want %v", l.Spent(), want)
	}
}

// TestDPSGDExampleContributionBounded: with the same noise draws, adding
// one window (whatever its values) to a batch moves the step's noised
// gradient sum by at most C, the bound the noise is calibrated to.
func TestDPSGDExampleContributionBounded(t *testing.T) {
	const clip = 0.3
	x, y := windows(8, 4, 1e6, rand.New(rand.NewPCG(8, 8)))
	m := nn.NewMLP(4, 6, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rand.New(rand.NewPCG(9, 9)))
	tr := nn.NewTrainer(m)
	for _, eps := range []float64{1, math.Inf(1)} {
		l, err := NewLocalDPSGD(mustExampleDP(t, eps, 1e-5, 0.5, clip, 100, privacy.AccountantRDP))
		if err != nil {
			t.Fatal(err)
		}
		d := len(p)
		var isum, ibuf []int64
		if l.lat != nil {
			isum, ibuf = make([]int64, d), make([]int64, d)
		}
		with, without := make([]float64, d), make([]float64, d)
		for drop := range 8 {
			var xs []float64
			var ys []float64
			for i := range 8 {
				if i != drop {
					xs, ys = append(xs, x[i*4:(i+1)*4]...), append(ys, y[i])
				}
			}
			l.gradient(tr, p, x, y, 1, NewRand(uint64(drop), StreamExampleNoise), with, isum, ibuf)
			l.gradient(tr, p, xs, ys, 1, NewRand(uint64(drop), StreamExampleNoise), without, isum, ibuf)
			diff := make([]float64, d)
			for k := range diff {
				diff[k] = with[k] - without[k]
			}
			if nd := privacy.L2Norm(diff); nd > clip*(1+1e-12) {
				t.Errorf("ε=%v: window %d moves the step's sum by %v > C = %v", eps, drop, nd, clip)
			} else if drop == 0 && nd < 0.9*clip {
				t.Errorf("ε=%v: the outlier window moves the sum by %v, want ≈ C = %v (clipped, not dropped)", eps, nd, clip)
			}
		}
	}
}

// TestLocalAccountantEqualsCentral: the client's own accountant gives, for
// the same (q, c, steps), the ε the coordinator's accountant gives for as
// many rounds at (q, c): exactly privacy.EpsilonFor, and the Server's
// EpsilonSpent (RDP composed round by round) within 1e-9.
func TestLocalAccountantEqualsCentral(t *testing.T) {
	const steps, perRound = 24, 6
	for _, kind := range []privacy.AccountantKind{privacy.AccountantRDP, privacy.AccountantPLD} {
		ex := mustExampleDP(t, 2, 1e-5, 0.25, 1, steps, kind)
		l, err := NewLocalDPSGD(ex)
		if err != nil {
			t.Fatal(err)
		}
		x, y := windows(10, 2, 0, rand.New(rand.NewPCG(3, 3)))
		m := nn.NewMLP(2, 1)
		p := make([]float64, m.NumParams())
		tr := nn.NewTrainer(m)
		for r := 1; r <= steps/perRound; r++ {
			if err := l.Train(tr, p, x, y, perRound, 0.01, ClientRand(1, StreamExampleBatches, 0, r), ClientRand(1, StreamExampleNoise, 0, r), nil); err != nil {
				t.Fatal(err)
			}
		}
		central, err := privacy.EpsilonFor(kind, []privacy.Event{{SampleRate: 0.25, NoiseMultiplier: ex.NoiseMultiplier, Rounds: steps}}, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if l.Spent() != central {
			t.Errorf("%s: local ε %v, central %v", kind, l.Spent(), central)
		}
		cfg := Config{Clients: 4, ExpectedClients: 1, Rounds: steps, ClipNorm: 1, NoiseMultiplier: ex.NoiseMultiplier,
			DP: true, LocalEpochs: 1, LearningRate: 0.01, Accountant: kind}
		srv, err := NewServer(cfg, []float64{0}, 2, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		agg := NewAggregator(cfg, 1)
		for range steps {
			if _, err := srv.Commit(agg, NewRand(1, StreamNoise)); err != nil {
				t.Fatal(err)
			}
		}
		if s := srv.EpsilonSpent(); math.Abs(s-l.Spent()) > 1e-9*s {
			t.Errorf("%s: local ε %v, server ε %v", kind, l.Spent(), s)
		}
		if !(l.Spent() <= 2) || l.Spent() < 1.5 {
			t.Errorf("%s: spent %v of a budget of 2 after the planned steps", kind, l.Spent())
		}
	}
}

// TestLocalBudgetRefusal: the client trains up to its own budget and then
// refuses, changing nothing.
func TestLocalBudgetRefusal(t *testing.T) {
	ex := mustExampleDP(t, 1, 1e-5, 0.5, 1, 10, privacy.AccountantRDP)
	l, err := NewLocalDPSGD(ex)
	if err != nil {
		t.Fatal(err)
	}
	x, y := windows(6, 2, 0, rand.New(rand.NewPCG(4, 4)))
	m := nn.NewMLP(2, 1)
	p := make([]float64, m.NumParams())
	tr := nn.NewTrainer(m)
	rng := NewRand(1, StreamExampleBatches)
	for range 2 {
		if err := l.Train(tr, p, x, y, 5, 0.01, rng, rng, nil); err != nil {
			t.Fatal(err)
		}
	}
	if l.Remaining() != 0 {
		t.Errorf("Remaining() = %d after the planned steps", l.Remaining())
	}
	before := slices.Clone(p)
	err = l.Train(tr, p, x, y, 1, 0.01, rng, rng, nil)
	if !errors.Is(err, privacy.ErrBudgetExhausted) || !errors.Is(err, ErrLocalBudget) {
		t.Fatalf("training past the budget: %v, want ErrBudgetExhausted and ErrLocalBudget", err)
	}
	if !slices.Equal(p, before) || l.Accountant.Steps() != 10 {
		t.Error("a refused step changed the model or the accountant")
	}
	if s := l.Spent(); !(s <= 1) {
		t.Errorf("spent %v > budget 1", s)
	}

	// The same refusal through a client's round: it sends nothing.
	c, err := NewClient(MRMTL, 1, &ex)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Clients: 1, ExpectedClients: 1, Rounds: 3, LocalEpochs: 5, LearningRate: 0.01}
	g := make([]float64, m.NumParams())
	dst := make([]float64, len(g))
	for r := 1; r <= 3; r++ {
		_, err := c.Update(tr, g, x, y, cfg, dst, rng, rng, nil)
		if r <= 2 && err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if r == 3 && !errors.Is(err, privacy.ErrBudgetExhausted) {
			t.Fatalf("round 3 past the budget: %v", err)
		}
	}
}

func TestExampleDPValidate(t *testing.T) {
	ok := mustExampleDP(t, 2, 1e-5, 0.5, 1, 30, "")
	for i, mutate := range []func(e *ExampleDP){
		func(e *ExampleDP) { e.Delta = 0 },
		func(e *ExampleDP) { e.SampleRate = 0 },
		func(e *ExampleDP) { e.SampleRate = 1.5 },
		func(e *ExampleDP) { e.ClipNorm = -1 },
		func(e *ExampleDP) { e.Steps = 0 },
		func(e *ExampleDP) { e.NoiseMultiplier = 0 },
		func(e *ExampleDP) { e.NoiseMultiplier *= 0.5 }, // over budget
		func(e *ExampleDP) { e.Steps *= 2 },             // over budget
		func(e *ExampleDP) { e.Epsilon = math.Inf(1) },  // noise without a budget
		func(e *ExampleDP) { e.Accountant = "moments" },
	} {
		e := ok
		mutate(&e)
		if err := e.Validate(); err == nil {
			t.Errorf("case %d: %+v accepted", i, e)
		}
	}
	inf := mustExampleDP(t, math.Inf(1), 1e-5, 0.5, 1, 30, "")
	if inf.NoiseMultiplier != 0 {
		t.Errorf("ε = inf calibrated c = %v, want 0", inf.NoiseMultiplier)
	}
	for _, e := range []ExampleDP{ok, inf} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back ExampleDP
		if err := json.Unmarshal(b, &back); err != nil || back != e {
			t.Errorf("round trip of %s: %+v, %v", b, back, err)
		}
	}
}

// TestClientJSONRoundTrip: a client's state (personal model, local
// accountant) survives storage, and a tampered accountant is refused.
func TestClientJSONRoundTrip(t *testing.T) {
	ex := mustExampleDP(t, 2, 1e-5, 0.5, 1, 30, privacy.AccountantPLD)
	c, err := NewClient(MRMTL, 3, &ex)
	if err != nil {
		t.Fatal(err)
	}
	x, y := windows(5, 2, 0, rand.New(rand.NewPCG(6, 6)))
	m := nn.NewMLP(2, 1)
	g := []float64{0.1, 0.2, 0.3}
	dst := make([]float64, 3)
	cfg := Config{Clients: 1, ExpectedClients: 1, Rounds: 3, LocalEpochs: 10, LearningRate: 0.01}
	if _, err := c.Update(nn.NewTrainer(m), g, x, y, cfg, dst, NewRand(1, 1), NewRand(1, 2), nil); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Client
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Personal, c.Personal) || back.DPSGD.Spent() != c.DPSGD.Spent() || back.DPSGD.Accountant.Steps() != 10 {
		t.Errorf("round trip lost state: %s", b)
	}
	var tampered map[string]any
	json.Unmarshal(b, &tampered)
	tampered["dpsgd"].(map[string]any)["local_accountant"].(map[string]any)["events"].([]any)[0].(map[string]any)["c"] = 99.0
	tb, _ := json.Marshal(tampered)
	if err := json.Unmarshal(tb, &back); err == nil {
		t.Error("an accountant with steps at another noise multiplier was accepted")
	}
}
