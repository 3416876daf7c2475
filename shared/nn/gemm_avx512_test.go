//go:build goexperiment.simd && amd64

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"simd/archsimd"
)

// The float32 assembly product (gemm_avx512_amd64.s) must give the bits of the
// plain sequential sum below on every shape, stride and value, and touch
// nothing outside its block. Two NaNs count as equal whatever their
// payloads: which NaN operand an operation returns depends on the operand
// order, which the Go compiler chooses for the Go code (the assembly uses
// the order of the Go expressions, a·b and then sum + product, and today's
// compiler keeps it, but that is not a promise across kernels or Go
// versions; NaN only arises in a round that has already diverged).

// gemmRef is gemm as the scalar kernels compute it: from +0, one rounded
// product at a time in order k = 0, 1, …, then the bias.
func gemmRef(out []float32, ldo int, a []float32, ai, ak int, b []float32, ldb int, bias []float32, mode, rows, kd, cols int) {
	gemmRefMasked(out, ldo, a, ai, ak, b, ldb, bias, nil, mode, rows, kd, cols)
}

// gemmRefMasked is gemmRef with the epilogue flags, done by the scalar
// kernels' own passes.
func gemmRefMasked(out []float32, ldo int, a []float32, ai, ak int, b []float32, ldb int, bias, mask []float32, mode, rows, kd, cols int) {
	for i := range rows {
		row := out[i*ldo:][:cols]
		for c := range cols {
			var sum float32
			for k := range kd {
				sum += float32(a[i*ai+k*ak] * b[k*ldb+c])
			}
			switch mode & 3 {
			case biasRow:
				sum += bias[i]
			case biasCol:
				sum += bias[c]
			}
			row[c] = sum
		}
		if mode&gemmReLU != 0 {
			reluScalar(row)
		}
		if mode&gemmMask != 0 {
			for c, v := range mask[i*ldo:][:cols] {
				if !(v > 0) {
					row[c] = 0
				}
			}
		}
	}
}

// needAVX2 skips a test of the vector products on a CPU without AVX2
// (gemm runs the AVX2 archsimd kernel, or the assembly with AVX-512).
func needAVX2gemm(t testing.TB) {
	if !archsimd.X86.AVX2() {
		t.Skip("CPU has no AVX2: the vector products are never used")
	}
}

func needAVX512(t testing.TB) {
	if !archsimd.X86.AVX512() {
		t.Skip("CPU has no AVX-512: the assembly kernels are never used")
	}
}

// special values every product kernel must carry through exactly.
var specials = []float32{
	0, float32(math.Copysign(0, -1)),
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 2.5e-40, -1.7e-44, // subnormals
	math.MaxFloat32, -math.MaxFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	math.Float32frombits(0xffc0_0abc), // a NaN with another sign and payload: which operand wins shows
}

// valueKind says what fills a test matrix.
type valueKind int

const (
	finite   valueKind = iota // wild(): zeros, signed zeros, twelve decades
	tiny                      // subnormals, zeros and values near 1e-20 (products underflow)
	extremes                  // every special value, Inf and NaN included
)

func fillKind(rng *rand.Rand, n int, kind valueKind) []float32 {
	s := make([]float32, n)
	for i := range s {
		switch kind {
		case finite:
			s[i] = float32(wild(rng, 0.3))
		case tiny:
			switch rng.IntN(4) {
			case 0:
				s[i] = specials[rng.IntN(6)]
			case 1:
				s[i] = float32(rng.NormFloat64() * 1e-20)
			default:
				s[i] = math.Float32frombits(rng.Uint32N(1<<23)) * float32(1-2*rng.IntN(2)) // any subnormal
			}
		case extremes:
			if rng.IntN(3) == 0 {
				s[i] = specials[rng.IntN(len(specials))]
			} else {
				s[i] = float32(wild(rng, 0.3))
			}
		}
	}
	return s
}

type gemmCase struct {
	rows, kd, cols int
	ldoPad, ldbPad int // extra columns of out and b beyond cols
	ai, ak         int // 0, 0: a is rows × kd row-major with a row pad of ldbPad
	mode           int // bias mode and epilogue flags
	kind           valueKind
}

func (c gemmCase) String() string {
	return fmt.Sprintf("%d×%d·%d×%d pad(o%d,b%d) a(%d,%d) bias%d kind%d", c.rows, c.kd, c.kd, c.cols, c.ldoPad, c.ldbPad, c.ai, c.ak, c.mode, c.kind)
}

func checkGemm(t *testing.T, rng *rand.Rand, c gemmCase) {
	t.Helper()
	ldo, ldb := c.cols+c.ldoPad, c.cols+c.ldbPad
	ai, ak := c.ai, c.ak
	if ai == 0 && ak == 0 {
		ai, ak = c.kd+c.ldbPad, 1
	}
	na := 0
	if c.rows > 0 && c.kd > 0 {
		na = (c.rows-1)*ai + (c.kd-1)*ak + 1
	}
	a := fillKind(rng, na, c.kind)
	b := fillKind(rng, max(c.kd*ldb, 1), c.kind)
	var bias, mask []float32
	if c.mode&gemmMask != 0 {
		mask = fillKind(rng, max(c.rows*ldo, 1), c.kind)
	}
	switch c.mode & 3 {
	case biasRow:
		bias = fillKind(rng, c.rows, c.kind)
	case biasCol:
		bias = fillKind(rng, c.cols, c.kind)
	}
	// The output starts as a marker: the padding must keep it, and the
	// block must not depend on it.
	marker := math.Float32frombits(0x7f80beef) // a signalling NaN
	want := make([]float32, max(c.rows*ldo, 1))
	for i := range want {
		want[i] = marker
	}
	init := append([]float32(nil), want...)
	gemmRefMasked(want, ldo, a, ai, ak, b, ldb, bias, mask, c.mode, c.rows, c.kd, c.cols)
	for _, k := range []string{"avx2", "avx512"} {
		got := append([]float32(nil), init...)
		if withKernels(k, func() { gemmMasked(got, ldo, a, ai, ak, b, ldb, bias, mask, c.mode, c.rows, c.kd, c.cols) }) &&
			!sameBits32OrNaN(t, "gemm "+k, got, want) {
			t.Fatalf("case %v", c)
		}
	}
}

// TestGemmMatchesSequential is the table of awkward shapes: every row count
// 1…24 (4-row blocks and 1…3 rows left over), columns around the 16- and
// 32-wide blocks, depth 0 (the sum of nothing is +0, then the bias), row
// strides wider than the rows, a read by columns, each bias mode with and
// without ReLU and the inactive-unit mask, and values with signed zeros,
// subnormals, overflow, Inf and NaN.
func TestGemmMatchesSequential(t *testing.T) {
	needAVX2gemm(t)
	rng := rand.New(rand.NewPCG(31, 32))
	var cases []gemmCase
	for rows := 1; rows <= 24; rows++ {
		for _, cols := range []int{1, 3, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65, 70} {
			kd := []int{1, 2, 5, 10, 13}[rows%5]
			flags := []int{0, gemmReLU, gemmMask, gemmReLU | gemmMask}[(rows+cols)%4]
			cases = append(cases, gemmCase{rows: rows, kd: kd, cols: cols, mode: rows%3 | flags, kind: valueKind(cols % 3)})
		}
	}
	cases = append(cases,
		gemmCase{rows: 5, kd: 0, cols: 19, mode: biasNone},
		gemmCase{rows: 6, kd: 0, cols: 19, mode: biasRow},
		gemmCase{rows: 7, kd: 0, cols: 19, mode: biasCol},
		// the paper's layers: forward feature-major (W · aᵀ, 12 windows padded to 16)
		gemmCase{rows: 128, kd: 10, cols: 16, mode: biasRow},
		gemmCase{rows: 64, kd: 128, cols: 16, mode: biasRow},
		gemmCase{rows: 32, kd: 64, cols: 16, mode: biasRow},
		gemmCase{rows: 1, kd: 32, cols: 16, mode: biasRow},
		gemmCase{rows: 128, kd: 10, cols: 16, mode: biasRow | gemmReLU},
		gemmCase{rows: 64, kd: 128, cols: 16, mode: biasRow | gemmReLU, kind: extremes},
		gemmCase{rows: 12, kd: 64, cols: 128, mode: gemmMask},
		gemmCase{rows: 13, kd: 32, cols: 64, mode: gemmMask, kind: extremes},
		gemmCase{rows: 7, kd: 0, cols: 21, mode: biasCol | gemmReLU | gemmMask, kind: extremes},
		// back-propagation (d · W, 12 samples)
		gemmCase{rows: 12, kd: 64, cols: 128},
		gemmCase{rows: 12, kd: 32, cols: 64},
		gemmCase{rows: 13, kd: 1, cols: 32},
		// weight gradient (dᵀ · a: a read down its columns)
		gemmCase{rows: 128, kd: 12, cols: 10, ai: 1, ak: 128},
		gemmCase{rows: 64, kd: 12, cols: 128, ai: 1, ak: 64},
		gemmCase{rows: 1, kd: 13, cols: 32, ai: 1, ak: 1},
		gemmCase{rows: 33, kd: 24, cols: 37, ai: 1, ak: 35, ldoPad: 3, ldbPad: 5, kind: extremes},
		// sample-major forward with a column bias, ragged
		gemmCase{rows: 124, kd: 10, cols: 128, mode: biasCol},
		gemmCase{rows: 11, kd: 7, cols: 45, ldoPad: 2, ldbPad: 1, mode: biasCol, kind: tiny},
		// a stride of 0: every row (or every k) reads the same values
		gemmCase{rows: 9, kd: 6, cols: 18, ai: 0, ak: 1, kind: extremes},
		gemmCase{rows: 9, kd: 6, cols: 18, ai: 7, ak: 0, kind: extremes},
	)
	for _, c := range cases {
		checkGemm(t, rng, c)
	}
}

// TestGemmRandom covers random shapes and strides for all value kinds.
func TestGemmRandom(t *testing.T) {
	needAVX2gemm(t)
	rng := rand.New(rand.NewPCG(33, 34))
	for trial := range 1500 {
		c := gemmCase{
			rows: 1 + rng.IntN(30), kd: rng.IntN(40), cols: 1 + rng.IntN(50),
			ldoPad: rng.IntN(3), ldbPad: rng.IntN(3),
			mode: rng.IntN(3) | []int{0, gemmReLU, gemmMask, gemmReLU | gemmMask}[rng.IntN(4)], kind: valueKind(trial % 3),
		}
		if rng.IntN(2) == 0 {
			c.ai, c.ak = 1, c.rows+rng.IntN(3)
		}
		checkGemm(t, rng, c)
	}
}

// TestGemmNaNPropagation pins what the ordering promises for non-finite
// values, element by element against the sequential sum: Inf·0 is NaN,
// Inf − Inf is NaN, a NaN input stays NaN, an overflow is the same
// infinity, signed zeros come out with the same sign.
func TestGemmNaNPropagation(t *testing.T) {
	needAVX2gemm(t)
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, tc := range []struct {
		name string
		a, b []float32 // 1 × 3 times 3 × 1
	}{
		{"inf times zero", []float32{inf, 1, 2}, []float32{0, 3, 4}},
		{"inf minus inf", []float32{inf, inf, 1}, []float32{1, -1, 1}},
		{"nan input", []float32{1, nan, 2}, []float32{1, 1, 1}},
		{"overflow", []float32{math.MaxFloat32, math.MaxFloat32, -math.MaxFloat32}, []float32{2, 1, 1}},
		{"signed zeros", []float32{float32(math.Copysign(0, -1)), 0, float32(math.Copysign(0, -1))}, []float32{1, -1, -1}},
		{"underflow to a subnormal", []float32{1e-20, 3e-21, 0}, []float32{1e-19, -2e-19, 1}},
	} {
		want := []float32{0}
		gemmRef(want, 1, tc.a, 3, 1, tc.b, 1, nil, biasNone, 1, 3, 1)
		// The same product in every lane position and row block: 9 rows, 33 columns.
		rows, cols := 9, 33
		a := make([]float32, rows*3)
		b := make([]float32, 3*cols)
		for i := range rows {
			copy(a[i*3:], tc.a)
		}
		for k := range 3 {
			for c := range cols {
				b[k*cols+c] = tc.b[k]
			}
		}
		for _, k := range []string{"avx2", "avx512"} {
			got := make([]float32, rows*cols)
			withKernels(k, func() { gemm(got, cols, a, 3, 1, b, cols, nil, biasNone, rows, 3, cols) })
			for i, v := range got {
				if math.Float32bits(v) != math.Float32bits(want[0]) && !(v != v && want[0] != want[0]) {
					t.Fatalf("%s, %s: element %d is %v (%#x), sequential sum %v (%#x)", k, tc.name, i, v, math.Float32bits(v), want[0], math.Float32bits(want[0]))
				}
			}
		}
	}
}

func TestGemmPanicsOnShortSlices(t *testing.T) {
	needAVX512(t)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"out", func() {
			gemm(make([]float32, 15), 4, make([]float32, 8), 2, 1, make([]float32, 8), 4, nil, biasNone, 4, 2, 4)
		}},
		{"a", func() {
			gemm(make([]float32, 16), 4, make([]float32, 7), 2, 1, make([]float32, 8), 4, nil, biasNone, 4, 2, 4)
		}},
		{"b", func() {
			gemm(make([]float32, 16), 4, make([]float32, 8), 2, 1, make([]float32, 7), 4, nil, biasNone, 4, 2, 4)
		}},
		{"bias", func() {
			gemm(make([]float32, 16), 4, make([]float32, 8), 2, 1, make([]float32, 8), 4, make([]float32, 3), biasRow, 4, 2, 4)
		}},
		{"mode", func() { gemm(make([]float32, 16), 4, make([]float32, 8), 2, 1, make([]float32, 8), 4, nil, 7, 4, 2, 4) }},
		{"flags", func() {
			gemm(make([]float32, 16), 4, make([]float32, 8), 2, 1, make([]float32, 8), 4, nil, 16, 4, 2, 4)
		}},
		{"mask", func() {
			gemmMasked(make([]float32, 16), 4, make([]float32, 8), 2, 1, make([]float32, 8), 4, nil, make([]float32, 15), gemmMask, 4, 2, 4)
		}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: a short slice did not panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// TestTransposeColsMatchesCopy checks the copy of the feature-major
// activations to sample-major (the AVX-512 register transpose of 16-row
// blocks and the Go copy) for row counts around the 16-row blocks and
// every batch 1…40
// (np = n rounded up to 16, and one wider stride), NaNs and signed zeros
// included: the values must arrive bit for bit and nothing past n·rows may
// be written.
func TestTransposeColsMatchesCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, rows := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 64, 128, 129} {
		for n := 1; n <= 40; n++ {
			for _, np := range []int{(n + 15) &^ 15, (n+15)&^15 + 16} {
				src := fillKind(rng, rows*np, extremes)
				want := make([]float32, n*rows+5)
				for s := range n {
					for k := range rows {
						want[s*rows+k] = src[k*np+s]
					}
				}
				marker := math.Float32frombits(0x7f80beef)
				for i := n * rows; i < len(want); i++ {
					want[i] = marker
				}
				got := make([]float32, len(want))
				copy(got[n*rows:], want[n*rows:])
				for _, k := range []string{"scalar", "avx512"} {
					got := append([]float32(nil), got...)
					if withKernels(k, func() { transposeCols(got, src, rows, n, np) }) && !sameBits32(t, k+" transposeCols", got, want) {
						t.Fatalf("%s: %d rows, %d columns of %d", k, rows, n, np)
					}
				}
			}
		}
	}
}

// BenchmarkGemm times the assembly product on the paper's layer shapes
// (10-128-64-32-1, 12 windows padded to 16 columns in the forward pass):
// forward feature-major (W·aᵀ), back-propagation (d·W) and the weight
// gradient (dᵀ·a). docs/benchmarks.md compares them with the archsimd
// kernels they replaced.
func BenchmarkGemm(b *testing.B) {
	needAVX512(b)
	rng := rand.New(rand.NewPCG(37, 38))
	type shape struct {
		name                   string
		rows, kd, cols, ai, ak int
		mode                   int
	}
	var shapes []shape
	sizes := []int{10, 128, 64, 32, 1}
	for l := 1; l < len(sizes); l++ {
		fi, fo := sizes[l-1], sizes[l]
		shapes = append(shapes, shape{fmt.Sprintf("forward/L%d", l), fo, fi, 16, fi, 1, biasRow})
		if l > 1 {
			shapes = append(shapes, shape{fmt.Sprintf("backprop/L%d", l), 12, fo, fi, fo, 1, biasNone})
		}
		shapes = append(shapes, shape{fmt.Sprintf("wgrad/L%d", l), fo, 12, fi, 1, fo, biasNone})
	}
	for _, s := range shapes {
		a := fillKind(rng, (s.rows-1)*s.ai+(s.kd-1)*s.ak+1, finite)
		x := fillKind(rng, s.kd*s.cols, finite)
		bias := fillKind(rng, s.rows, finite)
		out := make([]float32, s.rows*s.cols)
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				gemm(out, s.cols, a, s.ai, s.ak, x, s.cols, bias, s.mode, s.rows, s.kd, s.cols)
			}
		})
	}
}

// sameBits32OrNaN is sameBits32 except that two NaNs match whatever their
// payloads (see the top of this file).
func sameBits32OrNaN(t *testing.T, what string, a, b []float32) bool {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: lengths %d and %d", what, len(a), len(b))
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			t.Errorf("%s: element %d is %v (%#x) in assembly, %v (%#x) sequential",
				what, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
			return false
		}
	}
	return true
}

// TestTrainerBeyondFeatureMajor trains a batch larger than fmMaxBatch (the
// sample-major vector path: transposed weights, products with a column
// bias, on AVX-512 and AVX2) and one just inside it, against the scalar kernels, bit for bit.
func TestTrainerBeyondFeatureMajor(t *testing.T) {
	needAVX2gemm(t)
	rng := rand.New(rand.NewPCG(39, 40))
	m := NewMLP(10, 37, 19, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	for _, n := range []int{fmMaxBatch, fmMaxBatch + 1, fmMaxBatch + 45} {
		x := make([]float64, n*10)
		for i := range x {
			if rng.IntN(3) > 0 {
				x[i] = 100 * rng.Float64()
			}
		}
		y := make([]float64, n)
		for i := range y {
			y[i] = 100 * rng.Float64()
		}
		var want, got []float64
		var wantLoss, gotLoss float64
		withKernels("scalar", func() {
			want = append([]float64(nil), p...)
			wantLoss = NewTrainer(m).Train(want, x, y, 3, AdamOptions{})
		})
		for _, k := range []string{"avx2", "avx512"} {
			if !withKernels(k, func() {
				got = append([]float64(nil), p...)
				gotLoss = NewTrainer(m).Train(got, x, y, 3, AdamOptions{})
			}) {
				continue
			}
			if !sameBits(t, k+" loss", []float64{gotLoss}, []float64{wantLoss}) || !sameBits(t, k+" trained parameters", got, want) {
				t.Fatalf("%s: batch of %d", k, n)
			}
		}
	}
}

// TestGemm64MatchesSequential checks MLP.Predict's float64 product
// (gemm64_avx512_amd64.s) against the plain sequential float64 sum on
// random shapes around its 4-row and 8/16-column blocks, each bias mode,
// row strides wider than the rows, with signed zeros, subnormals, ±Inf and
// NaN among the values (any NaN matches any NaN), and that nothing outside
// the block is written.
func TestGemm64MatchesSequential(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(41, 42))
	specials64 := []float64{0, math.Copysign(0, -1), 5e-324, -2.5e-310, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	fill := func(n int, extreme bool) []float64 {
		s := wildSlice(rng, n, 0.3)
		if extreme {
			for i := range s {
				if rng.IntN(4) == 0 {
					s[i] = specials64[rng.IntN(len(specials64))]
				}
			}
		}
		return s
	}
	for trial := range 800 {
		rows, kd, cols := 1+rng.IntN(13), rng.IntN(20), 1+rng.IntN(40)
		pad := rng.IntN(3)
		ldo, ldb, lda := cols+pad, cols+rng.IntN(3), kd+rng.IntN(3)
		mode := trial % 3
		extreme := trial%4 == 0
		a := fill(max(rows*lda, 1), extreme)
		b := fill(max(kd*ldb, 1), extreme)
		bias := fill(max(rows, cols), extreme)
		want := make([]float64, rows*ldo)
		for i := range want {
			want[i] = 42
		}
		got := append([]float64(nil), want...)
		for i := range rows {
			for c := range cols {
				sum := 0.0
				for k := range kd {
					sum += float64(a[i*lda+k] * b[k*ldb+c])
				}
				switch mode {
				case biasRow:
					sum += bias[i]
				case biasCol:
					sum += bias[c]
				}
				want[i*ldo+c] = sum
			}
		}
		gemm64(got, ldo, a, lda, 1, b, ldb, bias, mode, rows, kd, cols)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("trial %d (%d×%d·%d, mode %d): element %d is %v, sequential %v", trial, rows, kd, cols, mode, i, got[i], want[i])
			}
		}
	}
}
