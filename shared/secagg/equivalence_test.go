package secagg_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/secagg"
)

// twoServers runs one round of the two-server path on updates us: each
// LHA encodes and shares, the helper opens and sums, each server adds its
// noise (the leader's from leaderNoise, the helper's from helperNoise or
// none), and the leader combines and decodes into global. It returns the
// combined integer sum.
func twoServers(t *testing.T, e *secagg.Encoder, m int, us [][]float64, global []float64, leaderNoise, helperNoise *rand.Rand) []int64 {
	t.Helper()
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	study := [32]byte{7}
	d := len(global)
	byID := map[secagg.ReportID]*secagg.Report{}
	var fwd []secagg.Sealed
	for i, u := range us {
		k := make([]int64, d)
		e.Encode(k, u)
		r, err := secagg.NewReport(key.PublicKey(), study, 1, uint32(i), k)
		if err != nil {
			t.Fatal(err)
		}
		byID[r.ID] = r
		fwd = append(fwd, secagg.Sealed{ID: r.ID, SealedSeed: r.SealedSeed})
	}
	hs, kept, _ := secagg.HelperSum(key, study, 1, len(us), d, fwd)
	if helperNoise != nil {
		hs.AddNoise(e.Noise(), helperNoise)
	} else {
		hs.AddNoiseVector(make([]int64, d))
	}
	ls, err := secagg.LeaderSum(byID, kept, d)
	if err != nil {
		t.Fatal(err)
	}
	ls.AddNoise(e.Noise(), leaderNoise)
	z := make([]int64, d)
	secagg.Combine(z, ls.Share(), hs.Share(), secagg.Ring64)
	secagg.Decode(global, z, e.Gamma(), m)
	return z
}

// With the helper's noise at 0 and the leader's noise from today's seed,
// the two-server round equals the single-coordinator round (fl.Aggregator
// taking the LHA-side encoding, AddLattice) bit for bit; with the helper's
// noise on, the sum is today's plus exactly the helper's noise.
func TestEquivalenceWithSingleCoordinator(t *testing.T) {
	const d, n, m, seed = 241, 9, 6, 2026
	cfg := fl.Config{Clients: n, ExpectedClients: m, Rounds: 1, ClipNorm: 0.5, NoiseMultiplier: 1.1, DP: true,
		LocalEpochs: 1, LearningRate: 0.001}
	e, err := secagg.NewEncoder(cfg.ClipNorm, cfg.NoiseMultiplier)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var us [][]float64
	for i := range n {
		u := make([]float64, d)
		for j := range u {
			u[j] = rng.NormFloat64() * 0.01 * float64(i+1)
		}
		us = append(us, u)
	}
	w0 := make([]float64, d)
	for j := range w0 {
		w0[j] = rng.NormFloat64()
	}

	agg := fl.NewAggregator(cfg, d)
	for _, u := range us {
		k := make([]int64, d)
		e.Encode(k, u)
		if err := agg.AddLattice(k); err != nil {
			t.Fatal(err)
		}
	}
	today := slices.Clone(w0)
	agg.Finish(today, fl.NewRand(seed, fl.StreamNoise))

	got := slices.Clone(w0)
	z0 := twoServers(t, e, m, us, got, fl.NewRand(seed, fl.StreamNoise), nil)
	for j := range got {
		if math.Float64bits(got[j]) != math.Float64bits(today[j]) {
			t.Fatalf("weight %d: two servers %v, single coordinator %v", j, got[j], today[j])
		}
	}

	helperSeed := rand.New(rand.NewPCG(3, 3))
	nh := make([]int64, d)
	e.Noise().AddTo(nh, rand.New(rand.NewPCG(3, 3)))
	both := slices.Clone(w0)
	z := twoServers(t, e, m, us, both, fl.NewRand(seed, fl.StreamNoise), helperSeed)
	for j := range z {
		if z[j] != z0[j]+nh[j] {
			t.Fatalf("coordinate %d: %d, want today's %d plus the helper's noise %d", j, z[j], z0[j], nh[j])
		}
	}
	if slices.Equal(nh, make([]int64, d)) {
		t.Fatal("the helper's noise is zero: the test does not exercise it")
	}
}

func TestAddLatticeRefusesBeyondTheBound(t *testing.T) {
	cfg := fl.Config{Clients: 2, ExpectedClients: 2, Rounds: 1, ClipNorm: 0.5, NoiseMultiplier: 1, DP: true,
		LocalEpochs: 1, LearningRate: 0.001}
	agg := fl.NewAggregator(cfg, 2)
	b := agg.Lattice().MaxCoord
	for _, k := range [][]int64{{b + 1, 0}, {b, b}, {1}} {
		if err := agg.AddLattice(k); err == nil {
			t.Errorf("AddLattice(%v) accepted", k)
		}
	}
	if err := agg.AddLattice([]int64{b, 0}); err != nil {
		t.Errorf("AddLattice at the bound: %v", err)
	}
	if agg.Received() != 1 {
		t.Errorf("received %d, want 1", agg.Received())
	}
}
