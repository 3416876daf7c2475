package model

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// The pretrained initial model is public and the same for every run: Init
// ignores the rng, gives a copy (callers may train it in place), and is
// what Pretrain computes from PretrainCorpus.
func TestInitPretrained(t *testing.T) {
	m := nn.NewMLP(10, 16, 1)
	a, b := make([]float64, m.NumParams()), make([]float64, m.NumParams())
	LogChange.Init(m, a, rand.New(rand.NewPCG(1, 2)))
	LogChange.Init(m, b, rand.New(rand.NewPCG(3, 4)))
	if !slices.Equal(a, b) {
		t.Fatal("the pretrained initial model depends on the rng")
	}
	a[0] = 1e9 // the caller's copy
	LogChange.Init(m, b, rand.New(rand.NewPCG(5, 6)))
	if b[0] == 1e9 {
		t.Fatal("Init hands out the cached weights themselves")
	}
	r := make([]float64, m.NumParams())
	LogChange.InitRandom(m, r, rand.New(rand.NewPCG(1, 2)))
	if slices.Equal(b, r) {
		t.Fatal("Init did not pretrain")
	}
}

// Pretraining is deterministic: the same outbreaks give the same weights,
// bit for bit (the coordinator of a live study and `fedcast simulate`
// must start from the same model).
func TestPretrainDeterministic(t *testing.T) {
	m := nn.NewMLP(10, 4, 1)
	corpus := PretrainCorpus(2)
	for i := range corpus {
		corpus[i].Areas = 10
	}
	a, b := make([]float64, m.NumParams()), make([]float64, m.NumParams())
	if err := Pretrain(m, corpus, a); err != nil {
		t.Fatal(err)
	}
	if err := Pretrain(m, corpus, b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Fatal("two pretraining runs differ")
	}
	if err := Pretrain(nn.NewMLP(10, 2), corpus, make([]float64, nn.NewMLP(10, 2).NumParams())); err == nil {
		t.Fatal("pretraining a two-output network must fail")
	}
}

// What pretraining buys: on synthetic outbreaks it never saw (other seeds
// and settings than the corpus) with a steady trend, steady growth and a
// steep decline, the pretrained model alone, before any federated round,
// forecasts far better than no change. (At a turn it cannot know of, such
// as the default wave's peak, it does not: federated training and damping
// are for that.)
func TestPretrainedBeatsPersistence(t *testing.T) {
	m := nn.NewMLP(10, 16, 1)
	w := make([]float64, m.NumParams())
	LogChange.Init(m, w, newRand())
	for _, o := range []synth.Options{
		{NoIntervention: true, R0: 1.15, Areas: 100, Seed: 11},
		{R0: 1.8, InterventionDay: 22, InterventionEffect: 0.6, InterventionRamp: 6, Areas: 100, Seed: 11},
	} {
		d, _, err := synth.Generate(o)
		if err != nil {
			t.Fatal(err)
		}
		areas, err := series.MakeWindows(d, series.WindowOptions{
			From: time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2020, 12, 1, 0, 0, 0, 0, time.UTC),
		})
		if err != nil {
			t.Fatal(err)
		}
		x, y := series.Stack(areas)
		pred, base := make([]float64, len(y)), make([]float64, len(y))
		LogChange.Predict(m, w, x, pred)
		Persistence(x, base)
		mp, mb := metrics.Compute(y, pred).MAE, metrics.Compute(y, base).MAE
		t.Logf("R0 %v: MAE pretrained %.3f, no change %.3f (%d windows)", o.R0, mp, mb, len(y))
		if !(mp < 0.6*mb) || math.IsNaN(mp) {
			t.Errorf("R0 %v: pretrained MAE %.3f is not 40 %% below no change (%.3f)", o.R0, mp, mb)
		}
	}
}

// The pretrained models of the default design (13-16-1) and of the
// second round's (10-16-1) are pinned: the same weights, bit for bit,
// native (scalar or SIMD kernels) and under GOOS=js GOARCH=wasm. A change
// of shared/synth, shared/nn or the corpus that moves them must be
// deliberate (running studies keep theirs: it is in the ledger's genesis).
func TestPretrainedPinned(t *testing.T) {
	for _, tc := range []struct {
		sizes []int
		hash  uint64
	}{
		{[]int{10, 16, 1}, 8954022877471066546},
		{[]int{Default.History, 16, 1}, 5501009800081496062},
	} {
		w, err := Pretrained(nn.NewMLP(tc.sizes...))
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64()
		for _, v := range w {
			fmt.Fprint(h, math.Float64bits(v))
		}
		if got := h.Sum64(); got != tc.hash {
			t.Errorf("%v: pretrained weights changed: hash %d", tc.sizes, got)
		}
	}
}
