package fl

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// z6 is the two-sided standard normal quantile for a false-rejection rate
// of 1e-6 per check: P(|Z| > 4.8916) = 1e-6.
const z6 = 4.8916

func dpConfig() Config {
	return Config{Clients: 40, ExpectedClients: 10, Rounds: 5, ClipNorm: 0.5, NoiseMultiplier: 1.3,
		DP: true, LocalEpochs: 3, LearningRate: 1e-3}
}

func TestConfigValidate(t *testing.T) {
	ok := dpConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	nonDP := ok
	nonDP.DP, nonDP.NoiseMultiplier = false, 0
	if err := nonDP.Validate(); err != nil {
		t.Fatalf("valid non-DP config rejected: %v", err)
	}
	bad := []func(c *Config){
		func(c *Config) { c.Clients = 0 },
		func(c *Config) { c.ExpectedClients = 0 },
		func(c *Config) { c.ExpectedClients = 41 },
		func(c *Config) { c.Rounds = 0 },
		func(c *Config) { c.LocalEpochs = 0 },
		func(c *Config) { c.LearningRate = math.NaN() },
		func(c *Config) { c.LearningRate = math.Inf(1) },
		func(c *Config) { c.ClipNorm = 0 },
		func(c *Config) { c.ClipNorm = math.NaN() },
		func(c *Config) { c.NoiseMultiplier = 0 },
		func(c *Config) { c.NoiseMultiplier = -1 },
		func(c *Config) { c.DP = false }, // noise multiplier without DP
	}
	for i, mutate := range bad {
		c := ok
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("case %d: %+v: got %v, want ErrConfig", i, c, err)
		}
	}
	if got, want := ok.Sigma(), 1.3*0.5/10; got != want {
		t.Errorf("Sigma = %v, want c·S/m = %v", got, want)
	}
}

// TestPoissonSample checks the inclusion frequency of every client against
// q with a binomial tolerance (false-rejection rate 1e-6 per client, 50
// clients, so at most 5e-5 for the test).
func TestPoissonSample(t *testing.T) {
	const n, q, reps = 50, 0.25, 20000
	rng := NewRand(1, StreamSampling)
	counts := make([]int, n)
	total := 0
	for r := 0; r < reps; r++ {
		s := PoissonSample(n, q, rng)
		if !slices.IsSorted(s) {
			t.Fatalf("sample not sorted: %v", s)
		}
		for _, i := range s {
			counts[i]++
		}
		total += len(s)
	}
	sd := math.Sqrt(reps * q * (1 - q))
	for i, c := range counts {
		if math.Abs(float64(c)-reps*q) > z6*sd {
			t.Errorf("client %d sampled %d times in %d rounds, want %v ± %.0f", i, c, reps, reps*q, z6*sd)
		}
	}
	// Sizes vary: Poisson sampling is not a fixed-size draw.
	sizes := map[int]bool{}
	for r := 0; r < 50; r++ {
		sizes[len(PoissonSample(n, q, rng))] = true
	}
	if len(sizes) < 3 {
		t.Errorf("only %d distinct sample sizes in 50 rounds: not Poisson sampling", len(sizes))
	}
	// Same stream, same sample.
	a := PoissonSample(n, q, NewRand(9, StreamSampling))
	b := PoissonSample(n, q, NewRand(9, StreamSampling))
	if !slices.Equal(a, b) {
		t.Error("same seed gave different samples")
	}
}

func TestFixedSample(t *testing.T) {
	rng := NewRand(2, StreamSampling)
	for r := 0; r < 100; r++ {
		s := FixedSample(30, 7, rng)
		if len(s) != 7 || !slices.IsSorted(s) || len(slices.Compact(slices.Clone(s))) != 7 {
			t.Fatalf("bad fixed sample %v", s)
		}
	}
}

func TestStreamsIndependent(t *testing.T) {
	a := NewRand(5, StreamNoise).Uint64()
	b := NewRand(5, StreamSampling).Uint64()
	c := NewRand(6, StreamNoise).Uint64()
	if a == b || a == c || RunSeed(5, 0) == RunSeed(5, 1) {
		t.Error("streams or run seeds collide")
	}
}

func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func TestAggregatorReclipsAndValidates(t *testing.T) {
	cfg := dpConfig()
	const dim = 64
	a := NewAggregator(cfg, dim)
	rng := rand.New(rand.NewPCG(3, 3))
	big := make([]float64, dim)
	for i := range big {
		big[i] = 100 * rng.NormFloat64()
	}
	orig := slices.Clone(big)
	if err := a.Add(big); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(big, orig) {
		t.Error("Add modified the caller's update")
	}
	// The contribution is on the lattice: its exact squared norm in steps
	// is within ⌊(S/γ)²⌋ and, after re-clipping to S and rounding, within
	// a rounding hair of it.
	var n2 uint64
	for _, z := range a.isum {
		n2 += uint64(z * z)
	}
	lat := a.Lattice()
	if n2 > lat.NormBound2 {
		t.Errorf("server did not re-clip: contribution norm² %d steps² > ⌊(S/γ)²⌋ = %d", n2, lat.NormBound2)
	}
	if n := math.Sqrt(float64(n2)) * lat.Gamma; n < cfg.ClipNorm*(1-1e-3) {
		t.Errorf("clipped too much: %v", n)
	}
	before := slices.Clone(a.isum)
	nan := make([]float64, dim)
	nan[7] = math.NaN()
	inf := make([]float64, dim)
	inf[0] = math.Inf(-1)
	for _, c := range []struct {
		u    []float64
		want error
	}{{make([]float64, dim-1), ErrUpdateLength}, {make([]float64, dim+1), ErrUpdateLength}, {nil, ErrUpdateLength}, {nan, ErrNotFinite}, {inf, ErrNotFinite}} {
		if err := a.Add(c.u); !errors.Is(err, c.want) {
			t.Errorf("Add(len %d) = %v, want %v", len(c.u), err, c.want)
		}
	}
	if !slices.Equal(a.isum, before) || a.Received() != 1 {
		t.Error("a rejected update changed the aggregate")
	}
}

// TestFinishDividesByExpectedM: with noise switched off by a huge-S trick
// impossible in DP mode, we instead check the mean part exactly: the
// difference between two Finishes with the same noise stream is the mean.
func TestFinishDividesByExpectedM(t *testing.T) {
	cfg := dpConfig()
	const dim = 8
	u := make([]float64, dim)
	u[0] = 0.3 // norm below S: not clipped
	run := func(updates int) []float64 {
		a := NewAggregator(cfg, dim)
		for i := 0; i < updates; i++ {
			if err := a.Add(u); err != nil {
				t.Fatal(err)
			}
		}
		g := make([]float64, dim)
		a.Finish(g, NewRand(1, StreamNoise))
		return g
	}
	with3, with0 := run(3), run(0)
	// 0.3 on the lattice is γ·round(0.3/γ); the sum of three is exact.
	gamma := NewAggregator(cfg, dim).Lattice().Gamma
	if got, want := with3[0]-with0[0], 3*gamma*math.Round(0.3/gamma)/float64(cfg.ExpectedClients); math.Abs(got-want) > 1e-12 {
		t.Errorf("3 updates of 0.3 moved w by %v, want 3·0.3/m = %v (divide by expected m, not received)", got, want)
	}
	if with0[1] == 0 {
		t.Error("a round with no updates added no noise")
	}
	// Non-DP: plain mean of what was received.
	nd := cfg
	nd.DP, nd.NoiseMultiplier = false, 0
	a := NewAggregator(nd, dim)
	v := make([]float64, dim)
	v[0] = 10 // not clipped in non-DP mode
	a.Add(u)
	a.Add(v)
	g := make([]float64, dim)
	a.Finish(g, nil)
	if g[0] != (0.3+10)/2 || g[1] != 0 {
		t.Errorf("non-DP mean: %v", g)
	}
}

// TestNoiseScale checks the noise added by Finish against σ = c·S/m: the
// sample variance of n = 200,000 coordinates against σ² with a normal
// approximation to the chi-square, and the mean against 0, each with a
// false-rejection rate of 1e-6.
func TestNoiseScale(t *testing.T) {
	for _, cfg := range []Config{
		dpConfig(),
		{Clients: 400, ExpectedClients: 100, Rounds: 75, ClipNorm: 0.5, NoiseMultiplier: 4.8828125, DP: true, LocalEpochs: 1, LearningRate: 1e-3},
	} {
		const n = 200000
		a := NewAggregator(cfg, n)
		g := make([]float64, n)
		a.Finish(g, NewRand(11, StreamNoise))
		sigma := cfg.Sigma()
		var s, ss float64
		for _, v := range g {
			s += v
			ss += v * v
		}
		mean := s / n
		variance := ss/n - mean*mean
		if math.Abs(mean) > z6*sigma/math.Sqrt(n) {
			t.Errorf("noise mean %v, want 0 ± %v", mean, z6*sigma/math.Sqrt(n))
		}
		if rel := variance/(sigma*sigma) - 1; math.Abs(rel) > z6*math.Sqrt(2.0/n) {
			t.Errorf("noise variance %v, want σ² = %v (relative error %v > %v)", variance, sigma*sigma, rel, z6*math.Sqrt(2.0/n))
		}
	}
}

func TestLocalUpdateClips(t *testing.T) {
	m := nn.NewMLP(3, 8, 1)
	global := make([]float64, m.NumParams())
	m.Init(global, rand.New(rand.NewPCG(1, 2)))
	x := []float64{1, 2, 3, 4, 5, 6}
	y := []float64{100, 200} // far off: a big update
	cfg := Config{Clients: 1, ExpectedClients: 1, Rounds: 1, ClipNorm: 0.01, NoiseMultiplier: 1, DP: true, LocalEpochs: 20, LearningRate: 0.01}
	dst := make([]float64, len(global))
	raw := LocalUpdate(nn.NewTrainer(m), global, x, y, cfg, dst)
	if raw <= cfg.ClipNorm {
		t.Fatalf("test needs an update above S; got norm %v", raw)
	}
	if n := norm(dst); n > cfg.ClipNorm {
		t.Errorf("client update norm %v > S", n)
	}
	nd := cfg
	nd.DP, nd.NoiseMultiplier = false, 0
	raw2 := LocalUpdate(nn.NewTrainer(m), global, x, y, nd, dst)
	if math.Abs(norm(dst)-raw2) > 1e-12*raw2 || math.Abs(raw2-raw) > 1e-12*raw {
		t.Errorf("non-DP update should be unclipped: norm %v, reported %v, DP pre-clip %v", norm(dst), raw2, raw)
	}
	if LocalUpdate(nn.NewTrainer(m), global, nil, nil, cfg, dst); norm(dst) != 0 {
		t.Error("a client with no windows must send a zero update")
	}
}

func TestServerBudgetGate(t *testing.T) {
	cfg := Config{Clients: 400, ExpectedClients: 100, Rounds: 75, ClipNorm: 0.5, NoiseMultiplier: 4.8828125, DP: true, LocalEpochs: 1, LearningRate: 1e-3}
	full, _ := privacy.Epsilon(cfg.SampleRate(), cfg.NoiseMultiplier, cfg.Rounds, 1e-5)
	if _, err := NewServer(cfg, make([]float64, 4), full*0.999, 1e-5); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("a study whose T rounds exceed the budget started: %v", err)
	}
	cfg.Rounds = 3
	s, err := NewServer(cfg, make([]float64, 4), 2, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	agg := NewAggregator(cfg, 4)
	noise := NewRand(1, StreamNoise)
	var last Event
	for r := 1; r <= 3; r++ {
		before := slices.Clone(s.Global)
		p, err := s.Propose(agg, noise)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Global, before) || s.Round != r-1 {
			t.Fatal("Propose changed the state")
		}
		s.Apply(p)
		last = p.Event
		if last.Round != r {
			t.Errorf("event round %d, want %d", last.Round, r)
		}
	}
	want, _ := privacy.Epsilon(cfg.SampleRate(), cfg.NoiseMultiplier, 3, 1e-5)
	if math.Abs(last.Epsilon-want) > 1e-12*want || math.Abs(s.EpsilonSpent()-want) > 1e-12*want {
		t.Errorf("ε after 3 rounds: event %v, server %v, accountant %v", last.Epsilon, s.EpsilonSpent(), want)
	}
	if _, err := s.Propose(agg, noise); !errors.Is(err, ErrStudyComplete) {
		t.Errorf("a 4th round of 3: %v", err)
	}
	// A budget that one more round would exceed stops the study.
	s.Config.Rounds = 10
	s.EpsilonBudget = want * 1.0001
	if err := s.NextRoundFits(); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("over-budget round allowed: %v", err)
	}
}

func TestServerJSONRoundTrip(t *testing.T) {
	for _, dp := range []bool{true, false} {
		cfg := dpConfig()
		budget := 10.0
		if !dp {
			cfg.DP, cfg.NoiseMultiplier, budget = false, 0, math.Inf(1)
		}
		s, err := NewServer(cfg, []float64{1, 2, 3}, budget, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		agg := NewAggregator(cfg, 3)
		agg.Add([]float64{0.1, 0.2, 0.3})
		ev, err := s.Commit(agg, NewRand(1, StreamNoise))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Server
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back.Round != 1 || !slices.Equal(back.Global, s.Global) || back.EpsilonBudget != budget || back.EpsilonSpent() != s.EpsilonSpent() {
			t.Errorf("dp=%v: round trip lost state: %s", dp, b)
		}
		eb, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var ev2 Event
		if err := json.Unmarshal(eb, &ev2); err != nil || ev2 != ev {
			t.Errorf("event round trip: %s → %+v (%v)", eb, ev2, err)
		}
		// A DP event names its lattice step and sampler; a non-DP one
		// carries neither.
		lat, _ := privacy.NewLattice(cfg.ClipNorm, cfg.NoiseMultiplier)
		if dp && (ev.Gamma != lat.Gamma || ev.Sampler != privacy.SamplerName) || !dp && (ev.Gamma != 0 || ev.Sampler != "" || strings.Contains(string(eb), "gamma")) {
			t.Errorf("dp=%v: event mechanism fields: %s", dp, eb)
		}
	}
	// An event written before the lattice mechanism still reads.
	var old Event
	if err := json.Unmarshal([]byte(`{"round":3,"sampling_rate":0.25,"noise_multiplier":4.5,"delta":1e-5,"epsilon":0.4}`), &old); err != nil ||
		old.Round != 3 || old.Epsilon != 0.4 || old.Gamma != 0 || old.Sampler != "" {
		t.Errorf("old event: %+v, %v", old, err)
	}
}

func toyClients(n int, rng *rand.Rand) []ClientData {
	cs := make([]ClientData, n)
	for i := range cs {
		level := 10 + 50*rng.Float64()
		var x, y []float64
		for w := 0; w < 6; w++ {
			for h := 0; h < 4; h++ {
				x = append(x, level*(1+0.05*float64(w+h)))
			}
			y = append(y, level*(1+0.05*float64(w+6)))
		}
		cs[i] = ClientData{X: x, Y: y}
	}
	return cs
}

func TestLocalUpdateProgress(t *testing.T) {
	m := nn.NewMLP(3, 8, 1)
	global := make([]float64, m.NumParams())
	m.Init(global, rand.New(rand.NewPCG(1, 2)))
	x, y := []float64{1, 2, 3, 4, 5, 6}, []float64{10, 20}
	cfg := Config{Clients: 1, ExpectedClients: 1, Rounds: 1, ClipNorm: 0.5, NoiseMultiplier: 1, DP: true, LocalEpochs: 7, LearningRate: 0.01}
	a, b := make([]float64, len(global)), make([]float64, len(global))
	LocalUpdate(nn.NewTrainer(m), global, x, y, cfg, a)
	var steps []int
	LocalUpdateProgress(nn.NewTrainer(m), global, x, y, cfg, b, func(step, total int) {
		if total != 7 {
			t.Errorf("total %d, want E = 7", total)
		}
		steps = append(steps, step)
	})
	if !slices.Equal(a, b) {
		t.Error("progress reporting changed the update")
	}
	if !slices.Equal(steps, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("progress steps %v", steps)
	}
}

// TestBudgetGateNaN: a NaN budget (or a NaN ε) never lets a round through.
func TestBudgetGateNaN(t *testing.T) {
	cfg := dpConfig()
	if _, err := NewServer(cfg, []float64{1, 2, 3}, math.NaN(), 1e-5); err == nil {
		t.Error("NewServer accepted a NaN budget")
	}
	s, err := NewServer(cfg, []float64{1, 2, 3}, 10, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	s.EpsilonBudget = math.NaN()
	if err := s.NextRoundFits(); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("NextRoundFits with a NaN budget: %v, want ErrBudgetExhausted", err)
	}
	if _, err := s.Propose(NewAggregator(cfg, 3), NewRand(1, StreamNoise)); err == nil {
		t.Error("Propose with a NaN budget succeeded")
	}
	// A NaN δ makes ε NaN: refused as well.
	s.EpsilonBudget, s.Delta = 10, math.NaN()
	if err := s.NextRoundFits(); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("NextRoundFits with a NaN δ: %v, want ErrBudgetExhausted", err)
	}
}

// TestServerJSONValidated: stored state that could not have come from a
// run of the study is refused when read back, and the target is unchanged.
func TestServerJSONValidated(t *testing.T) {
	cfg := dpConfig()
	s, err := NewServer(cfg, []float64{1, 2, 3}, 10, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(NewAggregator(cfg, 3), NewRand(1, StreamNoise)); err != nil {
		t.Fatal(err)
	}
	good, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var probe Server
	if err := json.Unmarshal(good, &probe); err != nil {
		t.Fatalf("honest state refused: %v", err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	cases := []struct {
		name string
		b    []byte
	}{
		{"round over T", edit(func(m map[string]any) { m["round"] = cfg.Rounds + 1 })},
		{"negative round", edit(func(m map[string]any) { m["round"] = -1 })},
		{"round the accountant does not hold", edit(func(m map[string]any) { m["round"] = 2 })},
		{"empty model", edit(func(m map[string]any) { m["global"] = []float64{} })},
		{"NaN budget", edit(func(m map[string]any) { m["epsilon_budget"] = "nan" })},
		{"zero budget", edit(func(m map[string]any) { m["epsilon_budget"] = 0 })},
		{"infinite budget in DP mode", edit(func(m map[string]any) { m["epsilon_budget"] = "inf" })},
		{"budget below ε spent", edit(func(m map[string]any) { m["epsilon_budget"] = 1e-9 })},
		{"δ = 1", edit(func(m map[string]any) { m["delta"] = 1 })},
		{"no accountant", edit(func(m map[string]any) { delete(m, "accountant") })},
		{"accountant of no rounds", edit(func(m map[string]any) {
			a := m["accountant"].(map[string]any)
			rdp := a["rdp"].([]any)
			for i := range rdp {
				rdp[i] = 0
			}
		})},
		{"bad config", edit(func(m map[string]any) { m["config"].(map[string]any)["clients"] = 0 })},
	}
	for _, c := range cases {
		back := Server{Round: 77}
		if err := json.Unmarshal(c.b, &back); err == nil {
			t.Errorf("%s: accepted %s", c.name, c.b)
		} else if back.Round != 77 {
			t.Errorf("%s: refused state was partly stored", c.name)
		}
	}
}
