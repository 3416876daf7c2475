//go:build goexperiment.simd && amd64

package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"simd/archsimd"
)

// The vector kernels must reproduce the scalar kernels bit for bit: the
// float32 training kernels (AVX-512, kernels32.go's scalar reference; the
// golden hash in TestGolden and the wasm clients depend on it) and the
// float64 kernels of MLP.Predict (AVX2 and AVX-512). These tests run both on
// random data of many shapes — odd widths so every vector tail is
// exercised, batches of 1…40, many exact zeros and signed zeros as ReLU
// produces them, magnitudes over twelve decades — and compare every result
// on the bit patterns, so even −0 versus +0 counts as a failure.

func needAVX2(t testing.TB) {
	if !archsimd.X86.AVX2() {
		t.Skip("CPU has no AVX2: the SIMD kernels are never used")
	}
}

// withSIMD runs f with useSIMD set to on and restores it.
func withSIMD(on bool, f func()) {
	old := useSIMD
	useSIMD = on
	defer func() { useSIMD = old }()
	f()
}

// wild returns a value that is 0 with probability pZero (a third of those
// −0), else a normal variate scaled by 10^U(−6, 6).
func wild(rng *rand.Rand, pZero float64) float64 {
	if rng.Float64() < pZero {
		if rng.IntN(3) == 0 {
			return math.Copysign(0, -1)
		}
		return 0
	}
	return rng.NormFloat64() * math.Pow(10, 12*rng.Float64()-6)
}

func wildSlice(rng *rand.Rand, n int, pZero float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = wild(rng, pZero)
	}
	return s
}

func wildSlice32(rng *rand.Rand, n int, pZero float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(wild(rng, pZero))
	}
	return s
}

// sameBits32 is sameBits for float32 values.
func sameBits32(t *testing.T, what string, a, b []float32) bool {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: lengths %d and %d", what, len(a), len(b))
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Errorf("%s: element %d is %v (%#x) with SIMD, %v (%#x) scalar",
				what, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
			return false
		}
	}
	return true
}

// sameBits reports the first index where a and b differ in any bit.
func sameBits(t *testing.T, what string, a, b []float64) bool {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: lengths %d and %d", what, len(a), len(b))
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Errorf("%s: element %d is %v (%#x) with SIMD, %v (%#x) scalar",
				what, i, a[i], math.Float64bits(a[i]), b[i], math.Float64bits(b[i]))
			return false
		}
	}
	return true
}

func TestAddRowsSIMDMatchesScalar(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 15, 16, 17, 20, 24, 31, 32, 33, 40, 63, 64, 65, 128}
	for _, n := range lengths {
		for nv := range 42 {
			stride := n + rng.IntN(3)
			rows := 1 + rng.IntN(50)
			m := wildSlice(rng, rows*stride+n, 0.2)
			vals := wildSlice(rng, nv, 0.1)
			idx := make([]int32, nv)
			for k := range idx {
				idx[k] = int32(rng.IntN(rows + 1))
			}
			dst := wildSlice(rng, n, 0.3)
			want := append([]float64(nil), dst...)
			addRowsScalar(want, m, stride, vals, idx)
			got := append([]float64(nil), dst...)
			addRowsAVX2(got, m, stride, vals, idx)
			if !sameBits(t, "addRows", got, want) {
				t.Fatalf("len(dst) = %d, stride %d, %d rows", n, stride, nv)
			}
			if archsimd.X86.AVX512() {
				got = append(got[:0], dst...)
				addRowsAVX512(got, m, stride, vals, idx)
				if !sameBits(t, "addRows AVX-512", got, want) {
					t.Fatalf("len(dst) = %d, stride %d, %d rows", n, stride, nv)
				}
			}
		}
	}
}

func TestElementwiseSIMDMatchesScalar(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 70 {
		z := wildSlice(rng, n, 0.3)
		if n > 2 {
			z[n/2] = math.NaN()
			z[n-1] = math.Inf(-1)
		}
		want := append([]float64(nil), z...)
		reluScalar(want)
		got := append([]float64(nil), z...)
		reluAVX2(got)
		sameBits(t, "relu", got, want)

		vals1, vals2 := make([]float64, n), make([]float64, n)
		idx1, idx2 := make([]int32, n), make([]int32, n)
		n1 := compactScalar(z, vals1, idx1)
		n2 := compactBranchless(z, vals2, idx2)
		if n1 != n2 {
			t.Fatalf("compact of %d values: %d non-zero branchless, %d scalar", n, n2, n1)
		}
		sameBits(t, "compact", vals2[:n2], vals1[:n1])
		for k := range n1 {
			if idx1[k] != idx2[k] {
				t.Fatalf("compact index %d: %d branchless, %d scalar", k, idx2[k], idx1[k])
			}
		}
	}
}

func TestTransposeSIMDMatchesScalar(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for fo := 1; fo <= 13; fo++ {
		for fi := 1; fi <= 13; fi++ {
			w := wildSlice(rng, fo*fi, 0.2)
			want := make([]float64, fo*fi)
			got := make([]float64, fo*fi)
			transposeScalar(want, w, fo, fi)
			transposeAVX2(got, w, fo, fi)
			if !sameBits(t, "transpose", got, want) {
				t.Fatalf("%d×%d", fo, fi)
			}
		}
	}
	w := wildSlice(rng, 128*10, 0)
	want, got := make([]float64, len(w)), make([]float64, len(w))
	transposeScalar(want, w, 128, 10)
	transposeAVX2(got, w, 128, 10)
	sameBits(t, "transpose 128×10", got, want)
}

// TestWeightGrad32MatchesScalar: the AVX-512 and AVX2 float32 weight and
// bias gradients (dense) against the sparse scalar reference.
func TestWeightGrad32MatchesScalar(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 1; n <= 40; n++ {
		fo := 1 + rng.IntN(37)
		fi := 1 + rng.IntN(37)
		if n%10 == 0 {
			fo, fi = 64, 128
		}
		d := wildSlice32(rng, n*fo, 0.5)
		prev := wildSlice32(rng, n*fi, 0.5)
		gW := wildSlice32(rng, fo*fi, 0.2)
		gb := wildSlice32(rng, fo, 0.2)
		vals := make([]float32, n)
		idx := make([]int32, n)
		wantW, wantB := append([]float32(nil), gW...), append([]float32(nil), gb...)
		weightGrad32Scalar(wantW, wantB, d, prev, fi, vals, idx)
		gotW, gotB := append([]float32(nil), gW...), append([]float32(nil), gb...)
		weightGrad32AVX512(gotW, gotB, d, prev, fi)
		if !sameBits32(t, "weight gradient", gotW, wantW) || !sameBits32(t, "bias gradient", gotB, wantB) {
			t.Fatalf("n = %d, %d×%d", n, fo, fi)
		}
		gotW, gotB = append(gotW[:0], gW...), append(gotB[:0], gb...)
		withKernels("avx2", func() { weightGrad32AVX2(gotW, gotB, d, prev, fi) })
		if !sameBits32(t, "weight gradient AVX2", gotW, wantW) || !sameBits32(t, "bias gradient AVX2", gotB, wantB) {
			t.Fatalf("n = %d, %d×%d", n, fo, fi)
		}
	}
}

// TestAdam32MatchesScalar: the AVX-512 and AVX2 float32 Adam updates against the
// scalar one, with both lerp branches, skipped lanes (g = m = v = 0) and
// non-finite gradients.
func TestAdam32MatchesScalar(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, o := range []AdamOptions{{}, {LearningRate: 0.1, Beta1: 0.3, Beta2: 0.5, Epsilon: 1e-3}} {
		o = o.withDefaults()
		for n := range 80 {
			// A third of the parameters have g = m = v = 0 (skipped), some
			// only g = 0; v ≥ 0 as Adam keeps it.
			p := wildSlice32(rng, n, 0.1)
			g := wildSlice32(rng, n, 0.5)
			m := wildSlice32(rng, n, 0.5)
			v := wildSlice32(rng, n, 0.5)
			for i := range v {
				v[i] = float32(math.Abs(float64(v[i])))
				switch rng.IntN(9) {
				case 0, 1, 2:
					g[i], m[i], v[i] = 0, float32(math.Copysign(0, -1)), 0
				case 3:
					g[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
				case 4:
					g[i] = float32(math.NaN())
				case 5:
					g[i] = math.SmallestNonzeroFloat32
				}
			}
			step := 1 + rng.IntN(40)
			c := adamConstsFor(o, step)
			pw, mw, vw := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
			adamUpdate32Scalar(pw, g, mw, vw, c)
			pg, mg, vg := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
			adamUpdate32AVX512(pg, g, mg, vg, c)
			if !sameBits32OrNaN(t, "Adam p", pg, pw) || !sameBits32OrNaN(t, "Adam m", mg, mw) || !sameBits32OrNaN(t, "Adam v", vg, vw) {
				t.Fatalf("n = %d, step %d, options %+v", n, step, o)
			}
			pg, mg, vg = append(pg[:0], p...), append(mg[:0], m...), append(vg[:0], v...)
			adamUpdate32AVX2(pg, g, mg, vg, c)
			if !sameBits32OrNaN(t, "Adam p AVX2", pg, pw) || !sameBits32OrNaN(t, "Adam m AVX2", mg, mw) || !sameBits32OrNaN(t, "Adam v AVX2", vg, vw) {
				t.Fatalf("n = %d, step %d, options %+v", n, step, o)
			}
		}
	}
}

// TestLayers32MatchSparse checks the dense AVX-512 and AVX2 layer products against
// the sparse scalar ones (zero terms skipped) on inputs half zeros, signed
// zeros included, on ragged shapes: the forward layer with its bias with
// and without ReLU, back-propagation with the ReLU derivative.
func TestLayers32MatchSparse(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 300 {
		n, fi, fo := 1+rng.IntN(20), 1+rng.IntN(40), 1+rng.IntN(40)
		if trial%50 == 0 {
			n, fi, fo = 13, 128, 64
		}
		a := wildSlice32(rng, n*fi, 0.5)
		wt := wildSlice32(rng, fi*fo, 0.1)
		b := wildSlice32(rng, fo, 0.3)
		vals, idx := make([]float32, max(fi, fo)), make([]int32, max(fi, fo))
		relu := trial%2 == 0
		want := wildSlice32(rng, n*fo, 0)
		got := append([]float32(nil), want...)
		withKernels("scalar", func() { forwardLayer32(want, a, wt, b, fi, vals, idx, relu) })
		for _, k := range []string{"avx2", "avx512"} {
			got := append([]float32(nil), got...)
			if !withKernels(k, func() { forwardLayer32(got, a, wt, b, fi, vals, idx, relu) }) {
				continue
			}
			if !sameBits32(t, k+" forward layer", got, want) {
				t.Fatalf("n %d, %d → %d, relu %v", n, fi, fo, relu)
			}
		}
		// Back-propagation: g = (d·W) ⊙ 1[act > 0] with W fo×fi (here wt
		// read as fi rows of fo).
		d := wildSlice32(rng, n*fi, 0.5)
		act := wildSlice32(rng, n*fo, 0.4)
		want = wildSlice32(rng, n*fo, 0)
		got = append([]float32(nil), want...)
		withKernels("scalar", func() { backLayer32(want, d, wt, act, fo, vals, idx) })
		for _, k := range []string{"avx2", "avx512"} {
			got := append([]float32(nil), got...)
			if !withKernels(k, func() { backLayer32(got, d, wt, act, fo, vals, idx) }) {
				continue
			}
			if !sameBits32(t, k+" back-propagated delta", got, want) {
				t.Fatalf("n %d, %d → %d", n, fi, fo)
			}
		}
	}
}

// TestTrainerSIMDMatchesScalar runs whole networks every way: Loss,
// Gradient, 7 Adam steps (float32: scalar, AVX2 = scalar, AVX-512) and
// Predict (float64: scalar, AVX2, AVX-512), on odd layer widths, batches of 1…40
// and inputs that are half zeros (so whole units are dead for some samples).
func TestTrainerSIMDMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 40; n++ {
		var sizes []int
		switch n % 4 {
		case 0:
			sizes = []int{10, 128, 64, 32, 1}
		case 1:
			sizes = []int{1 + rng.IntN(13), 1 + rng.IntN(40), 1}
		default:
			sizes = []int{1 + rng.IntN(13), 1 + rng.IntN(70), 1 + rng.IntN(40), 1 + rng.IntN(3)}
		}
		m := NewMLP(sizes...)
		p := make([]float64, m.NumParams())
		m.Init(p, rng)
		x := make([]float64, n*m.In())
		for i := range x {
			if rng.IntN(2) == 0 {
				x[i] = rng.NormFloat64() * 50
			}
		}
		y := make([]float64, n*m.Out())
		for i := range y {
			y[i] = rng.NormFloat64() * 10
		}
		type result struct {
			loss, trainLoss float64
			grad, trained   []float64
			pred            []float64
		}
		run := func() result {
			tr := NewTrainer(m)
			r := result{grad: make([]float64, len(p)), pred: make([]float64, len(y))}
			r.loss = tr.Gradient(p, x, y, r.grad)
			r.trained = append([]float64(nil), p...)
			r.trainLoss = tr.Train(r.trained, x, y, 7, AdamOptions{LearningRate: 0.01})
			m.Predict(r.trained, x, r.pred)
			return r
		}
		var scalar result
		withKernels("scalar", func() { scalar = run() })
		for _, k := range []string{"avx2", "avx512"} {
			var simd result
			if !withKernels(k, func() { simd = run() }) {
				continue
			}
			ok := sameBits(t, k+" loss", []float64{simd.loss, simd.trainLoss}, []float64{scalar.loss, scalar.trainLoss}) &&
				sameBits(t, k+" gradient", simd.grad, scalar.grad) &&
				sameBits(t, k+" trained parameters", simd.trained, scalar.trained) &&
				sameBits(t, k+" prediction", simd.pred, scalar.pred)
			if !ok {
				t.Fatalf("network %v, batch %d", sizes, n)
			}
		}
	}
}

// TestTrainerReuseAcrossBatches trains one Trainer on batches that grow
// and shrink (the simulator reuses a Trainer for clients with different
// numbers of windows): the AVX-512 and AVX2 paths keep their feature-major buffers at
// the largest batch seen and lays each batch out for its own size, and every
// result must equal that of a fresh scalar Trainer bit for bit.
func TestTrainerReuseAcrossBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	m := NewMLP(10, 128, 64, 32, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	trainers := map[string]*Trainer{}
	for _, n := range []int{40, 13, 1, 24, 8, 17, 40, 3} {
		x := make([]float64, n*10)
		for i := range x {
			x[i] = 50 + 100*rng.Float64()
		}
		y := make([]float64, n)
		for i := range y {
			y[i] = 50 + 100*rng.Float64()
		}
		var want, got []float64
		var wantLoss, gotLoss float64
		withKernels("scalar", func() {
			want = append([]float64(nil), p...)
			wantLoss = NewTrainer(m).Train(want, x, y, 3, AdamOptions{})
		})
		for _, k := range []string{"avx2", "avx512"} {
			if !withKernels(k, func() {
				if trainers[k] == nil {
					trainers[k] = NewTrainer(m)
				}
				got = append([]float64(nil), p...)
				gotLoss = trainers[k].Train(got, x, y, 3, AdamOptions{})
			}) {
				continue
			}
			if !sameBits(t, k+" loss", []float64{gotLoss}, []float64{wantLoss}) || !sameBits(t, k+" trained parameters", got, want) {
				t.Fatalf("%s: batch of %d after reuse", k, n)
			}
		}
	}
}

// withKernels runs f on the named kernels ("scalar", "avx2", "avx512") and
// restores the CPU's choice; ok is false when the CPU lacks them.
func withKernels(name string, f func()) (ok bool) {
	oldS, oldW := useSIMD, useAVX512
	defer func() { useSIMD, useAVX512 = oldS, oldW }()
	switch name {
	case "scalar":
		useSIMD, useAVX512 = false, false
	case "avx2":
		if !archsimd.X86.AVX2() {
			return false
		}
		useSIMD, useAVX512 = true, false
	case "avx512":
		if !archsimd.X86.AVX512() {
			return false
		}
		useSIMD, useAVX512 = true, true
	}
	f()
	return true
}

// BenchmarkKernels is the client round (30 Adam steps on 13 windows) on
// each kernel set the CPU has, for side-by-side ratios.
func BenchmarkKernels(b *testing.B) {
	m, p0, x, y := benchData(13)
	p := make([]float64, len(p0))
	for _, k := range []string{"scalar", "avx2", "avx512"} {
		b.Run("ClientRound/"+k, func(b *testing.B) {
			ok := withKernels(k, func() {
				tr := NewTrainer(m)
				tr.Train(append(p[:0], p0...), x, y, 1, AdamOptions{})
				b.ReportAllocs()
				for b.Loop() {
					copy(p, p0)
					tr.Train(p, x, y, 30, AdamOptions{})
				}
			})
			if !ok {
				b.Skip("CPU lacks " + k)
			}
		})
	}
}

// TestPredictLargeBatchMatchesScalar covers MLP.Predict on batches larger
// than the AVX-512 path's chunk of predictChunk samples.
func TestPredictLargeBatchMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	m := NewMLP(10, 128, 64, 32, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	for _, n := range []int{predictChunk - 1, predictChunk, predictChunk + 1, 2*predictChunk + 37} {
		x := wildSlice(rng, n*10, 0.3)
		want := make([]float64, n)
		withKernels("scalar", func() { m.Predict(p, x, want) })
		for _, k := range []string{"avx2", "avx512"} {
			got := make([]float64, n)
			if withKernels(k, func() { m.Predict(p, x, got) }) && !sameBits(t, k+" prediction", got, want) {
				t.Fatalf("batch of %d", n)
			}
		}
	}
}

// Kernels follows the switches: scalar with the vector kernels off, AVX2
// with only AVX-512 off.
func TestKernelsFollowSwitches(t *testing.T) {
	withSIMD(false, func() {
		if k := Kernels(); k != "scalar" {
			t.Errorf("vector kernels off: Kernels() = %q, want scalar", k)
		}
	})
	if !archsimd.X86.AVX2() {
		t.Skip("this CPU has no AVX2")
	}
	old := useAVX512
	useAVX512 = false
	defer func() { useAVX512 = old }()
	withSIMD(true, func() {
		if k := Kernels(); k != "AVX2" {
			t.Errorf("AVX-512 off: Kernels() = %q, want AVX2", k)
		}
	})
}
