//go:build goexperiment.simd && amd64

package nn

import "fmt"

// The Trainer's AVX-512 path runs the forward pass feature-major
// ("transposed": one row of np values per unit, np = the batch rounded up to
// a multiple of 8, column s = sample s):
//
//	zᵀ_l = W_l · aᵀ_{l−1} (+ b_l)
//
// reads W_l as it lies in params, so the per-step transpose of every weight
// matrix (11 776 values, about a sixth of the sample-major round) is gone.
// Back-propagation and the weight gradient then run sample-major as before
// (Trainer.backward: units across the lanes, no padding, W read as it
// lies), after the activations are copied sample-major (n × s_l values per
// layer, ≈ 3 k per step for the paper's network and batch). Lanes of the
// forward pass run across samples, so a batch that is not a multiple of 8
// pays for its padding there: docs/benchmarks.md has the gain per batch
// size. Every element is still the sequential sum of kernels.go in the same
// order, each product rounded before it is added (no fused multiply-add), so
// the bits equal the scalar kernels' (kernels_simd_test.go). Columns past
// the batch (padding) hold values of no sample: they never mix into real
// columns and are never copied out.

// fmWork is the feature-major workspace of a Trainer.
type fmWork struct {
	cap  int         // columns the buffers below can hold
	np   int         // columns of the current batch (its size rounded up to 8)
	xT   []float64   // inputs, s_0 × np
	actT [][]float64 // actT[l]: s_l × np activations after ReLU (outputs for l = L)
}

// fmMaxBatch is the largest batch trained feature-major. Measured per
// client round (30 steps) against the sample-major path, both on the
// assembly products (two alternations, load 0.3–0.9): 1.15–1.3× faster for
// 12–40 samples, 1.05–1.17× for 64, 1.0–1.07× for 124, 1.04–1.08× for 250,
// 0.96–0.99× for 500 (the weight transpose it saves is then spread over
// many samples). With the archsimd products of the second pass the break-even
// lay between 24 and 124 samples.
const fmMaxBatch = 256

// fmReserve returns the workspace laid out for n samples, or nil when the
// feature-major path is not used (no AVX-512, or n outside 1…fmMaxBatch).
func (t *Trainer) fmReserve(n int) *fmWork {
	if !useSIMD || !useAVX512 || n == 0 || n > fmMaxBatch {
		return nil
	}
	np := (n + 7) &^ 7
	w := t.fm
	if w == nil {
		L := len(t.m.sizes) - 1
		w = &fmWork{actT: make([][]float64, L+1)}
		t.fm = w
	}
	if np > w.cap {
		w.xT = make([]float64, t.m.sizes[0]*np)
		for l := 1; l < len(t.m.sizes); l++ {
			w.actT[l] = make([]float64, t.m.sizes[l]*np)
		}
		w.cap = np
	}
	w.np = np
	return w
}

// fmLoad writes x (n × s_0) feature-major into w.xT with zero padding.
func (t *Trainer) fmLoad(w *fmWork, x []float64, n int) {
	in, np := t.m.sizes[0], w.np
	xT := w.xT[:in*np]
	clear(xT)
	for s := range n {
		for k, v := range x[s*in:][:in] {
			xT[k*np+s] = v
		}
	}
}

// fmForward is Trainer.forward on the feature-major buffers (fmLoad must
// have run for x): same bits for the loss and every real column.
func (t *Trainer) fmForward(w *fmWork, params, y []float64, n int) float64 {
	m := t.m
	L := len(m.sizes) - 1
	np := w.np
	prev := w.xT
	for l := 1; l <= L; l++ {
		fi, fo := m.sizes[l-1], m.sizes[l]
		cur := w.actT[l][:fo*np]
		mode := biasRow
		if l < L {
			mode |= gemmReLU // ReLU in registers before the store
		}
		gemm(cur, np, params[m.wOff[l-1]:m.bOff[l-1]], fi, 1, prev, np, params[m.bOff[l-1]:][:fo], mode, fo, fi, np)
		prev = cur
	}
	out := m.Out()
	sum := 0.0
	for i, yi := range y[:n*out] {
		d := prev[(i%out)*np+i/out] - yi
		sum += float64(d * d)
	}
	return sum / float64(len(y))
}

// fmBackward is Trainer.backward after fmForward: it copies the
// activations sample-major into t.act and back-propagates there, where the
// products need no padding (units, not samples, run across the lanes) and
// read W as it lies in params. Same bits as the sample-major path.
func (t *Trainer) fmBackward(w *fmWork, params, x, y, dst []float64, n int) {
	m := t.m
	for l := 1; l < len(m.sizes); l++ {
		transposeCols(t.act[l][:n*m.sizes[l]], w.actT[l][:m.sizes[l]*w.np], m.sizes[l], n, w.np)
	}
	t.backward(params, x, y, dst, n)
}

// transposeCols writes the first n columns of the rows × np matrix src into
// dst as n × rows; np must be a multiple of 8 not below n (the layout of
// fmWork). Blocks of eight rows are transposed in registers by
// transposeColsAVX512 (eight columns at a time, only real columns stored);
// the last rows mod 8 rows are copied one value at a time.
func transposeCols(dst, src []float64, rows, n, np int) {
	dst = dst[:n*rows]
	src = src[:rows*np]
	if n == 0 {
		return
	}
	if np%8 != 0 || np < n {
		panic(fmt.Sprintf("nn: transposeCols of %d columns with a row stride of %d", n, np))
	}
	k := rows &^ 7
	if k > 0 {
		transposeColsAVX512(&dst[0], &src[0], k, rows, n, np)
	}
	for ; k < rows; k++ {
		for s, v := range src[k*np:][:n] {
			dst[s*rows+k] = v
		}
	}
}

// transposeColsAVX512 is the block transpose of transposeCols for the first
// units rows (a multiple of 8), with dst's row stride ldd
// (transpose_avx512_amd64.s). It checks nothing.
//
//go:noescape
func transposeColsAVX512(dst, src *float64, units, ldd, n, np int)

// mulRows writes out[i·ldo + c] = Σ_{k<kd} a[i·lda + k]·b[k·ldb + c]
// (+ bias[i]) for i < rows and c < cols: A's rows are contiguous. Each
// element is the sequential sum from +0 in order k = 0, 1, …, every
// product rounded before it is added, then + bias[i]: the sums of
// kernels.go, computed by the assembly product gemm (four rows and 16
// columns per pass, each load of b serving four rows, masked column tails).
// fmForward calls gemm itself, to apply ReLU before the store.
func mulRows(out []float64, ldo int, a []float64, lda int, b []float64, ldb int, bias []float64, rows, kd, cols int) {
	mode := biasNone
	if bias != nil {
		mode = biasRow
	}
	gemm(out, ldo, a, lda, 1, b, ldb, bias, mode, rows, kd, cols)
}
