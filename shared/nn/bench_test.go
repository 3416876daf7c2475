package nn

import (
	"math/rand/v2"
	"testing"
)

// Figures on the shared 2-core AMD EPYC (Zen 4) build machine, Go 1.26.8,
// 10-128-64-32-1, 13 windows of count-sized inputs, 0 allocs/op everywhere.
// The machine was loaded by other jobs (load average 2–5), so ranges are the
// best and typical of several runs:
//
//	                      native          wasm (node 20)   wasm/native
//	ClientRound flat      3.6–5.0 ms      10.7–15.8 ms     ≈ 3
//	ClientRound gonum     4.9–5.9 ms      25–32 ms         ≈ 5
//	Gradient flat         96–146 µs       310–345 µs       ≈ 3
//	Gradient gonum        82–117 µs       720–1000 µs      ≈ 8
//	Predict (flat)        54–70 µs        186–216 µs       ≈ 3.5
//
// PyTorch (1 thread) takes 10.8 ms per client round. gonum's assembly GEMM
// computes a dense gradient about 15 % faster natively than the sparse flat
// loops, but the flat round is still faster (the torch-exact Adam step skips
// never-updated parameters) and 2–2.5× faster in wasm, and one code path keeps
// results bit-identical across platforms, so only the flat kernels ship; the
// gonum version is the test oracle. A variant working on transposed weights
// (no per-step transpose, gathered dot products in backward) was no faster
// natively and 35 % slower in wasm. Per round, about a quarter of the time is
// the Adam update (a square root and two divisions per live parameter, kept
// to match torch's rounding), the rest ≈ 6.5 M multiply-adds at close to one
// per cycle.
//
// With GOEXPERIMENT=simd (AVX2 kernels, kernels_simd_amd64.go), same machine,
// minimum wall time of 300 short runs each, scalar and SIMD builds
// alternated (the go test medians below were taken at load average 7–8, so
// they are inflated about 2× and only their ratios mean something):
//
//	                      scalar      AVX2       ratio   (go test -count=5 medians: scalar / AVX2)
//	ClientRound flat      3.15 ms     1.54 ms    2.0×    (8.21 ms / 5.08 ms = 1.6×)
//	Gradient flat         75 µs       41 µs      1.8×    (248 µs / 137 µs = 1.8×)
//	Predict (13 windows)  49 µs       18 µs      2.7×    (108 µs / 65 µs = 1.7×)
//
// The round was still above 1 ms: about a fifth was the Adam update (divider
// bound: VSQRTPD and two VDIVPD per four parameters), a third the blocked
// multiply-adds, and the rest per-row overhead on short rows (10 inputs, 13
// samples), compaction of non-zero activations and the per-step transpose.
//
// With AVX-512 (kernels_avx512_amd64.go: dense register-blocked layer
// products, made exact by the sequential sums, and Adam 8 wide), on the
// same kind of machine under heavy load (load average 6–23), minimum of 5
// alternating runs of -benchtime 200x; BenchmarkKernels runs the three
// kernel sets side by side:
//
//	                      AVX2 (before)   AVX-512 (after)   ratio
//	ClientRound flat      8.71 ms         4.77 ms           1.83×
//	Gradient flat         108 µs          54 µs             2.0×
//	Predict (13 windows)  32.3 µs         26.0 µs           1.24×
//
// CPU time (perf stat task-clock, 500 rounds, four alternating pairs) is
// the steadier measure there: 1.55× less with AVX-512, i.e. about 1.0 ms per
// client round on a quiet core. What is left: the
// per-step transpose (≈ 18 %), Adam (≈ 19 %) and the products themselves.
//
// The AVX-512 Trainer's feature-major forward pass (train_avx512_amd64.go)
// removed the per-step transpose: 500 rounds took 0.97–0.98 s of CPU
// against 1.15–1.16 s before (1.18×, alternated pairs), i.e. about 1.95 ms
// of CPU per round on that Intel VM, idle or loaded; 1.15–1.25× for 9–16
// windows. Adam (divider-bound) is about a quarter of a round, the products
// three fifths.
// docs/benchmarks.md has the profile and the FMA and float32 prototypes.
//
// The products in assembly (gemm_avx512_amd64.s, BenchmarkGemm, with ReLU
// and the inactive-unit mask applied before the store) and the register
// transpose took the round from 1.96–2.02 ms to 1.375–1.393 ms on that VM
// (1.44×, three alternated pairs at load 1.8–1.9), Gradient from 44–46 µs
// to 25–26 µs; the products of one step from 34.8 µs to 22.2 µs, about
// 85 % of what two 512-bit ports allow without fused multiply-add. Adam,
// at the divider's rate, is now 35–45 % of a round.

// benchData returns the spec's workload: a 10-128-64-32-1 network with
// PyTorch-default initial weights and n windows of raw case counts.
func benchData(n int) (*MLP, []float64, []float64, []float64) {
	rng := rand.New(rand.NewPCG(7, 7))
	m := NewMLP(10, 128, 64, 32, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	x := make([]float64, n*10)
	y := make([]float64, n)
	for i := range x {
		x[i] = 50 + 100*rng.Float64()
	}
	for i := range y {
		y[i] = 50 + 100*rng.Float64()
	}
	return m, p, x, y
}

// BenchmarkClientRound is one client's local training in one round: 30
// full-batch Adam steps on 13 windows (spec §4).
func BenchmarkClientRound(b *testing.B) {
	m, p0, x, y := benchData(13)
	p := make([]float64, len(p0))
	b.Run("flat", func(b *testing.B) {
		tr := NewTrainer(m)
		tr.Train(append(p[:0], p0...), x, y, 1, AdamOptions{})
		b.ReportAllocs()
		for b.Loop() {
			copy(p, p0)
			tr.Train(p, x, y, 30, AdamOptions{})
		}
	})
	b.Run("gonum", func(b *testing.B) {
		r := newGonumNet(m, 13)
		b.ReportAllocs()
		for b.Loop() {
			copy(p, p0)
			r.train(p, x, y, 30, AdamOptions{})
		}
	})
}

// BenchmarkGradient is one loss-and-gradient evaluation on 13 windows.
func BenchmarkGradient(b *testing.B) {
	m, p, x, y := benchData(13)
	g := make([]float64, len(p))
	b.Run("flat", func(b *testing.B) {
		tr := NewTrainer(m)
		tr.Gradient(p, x, y, g)
		b.ReportAllocs()
		for b.Loop() {
			tr.Gradient(p, x, y, g)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		r := newGonumNet(m, 13)
		b.ReportAllocs()
		for b.Loop() {
			r.gradient(p, x, y, g)
		}
	})
}

// BenchmarkPredict is inference on 13 windows.
func BenchmarkPredict(b *testing.B) {
	m, p, x, _ := benchData(13)
	dst := make([]float64, 13)
	b.ReportAllocs()
	for b.Loop() {
		m.Predict(p, x, dst)
	}
}
