//go:build goexperiment.simd && amd64

package nn

import (
	"fmt"
	"simd/archsimd"
)

// The Trainer's float32 kernels on amd64 with GOEXPERIMENT=simd. On AVX-512
// CPUs the three products of a step run in the assembly product gemm
// (gemm_avx512_amd64.s, 16 float32 lanes), and Adam and the bias sums on
// archsimd Float32x16; on AVX2-only CPUs (or with useAVX512 switched off by
// a test) the same structure runs on archsimd Float32x8 (gemm_avx2_amd64.go);
// without AVX2 (or with useSIMD off) the Trainer runs the scalar float32
// kernels of kernels32.go. Every lane computes the scalar kernel's own sequence of
// rounded single-precision operations (VMULPS then VADDPS, never a fused
// multiply-add; VSQRTPS and VDIVPS are correctly rounded), so all paths give
// the same bits (kernels_simd_test.go, gemm_avx512_test.go).

func forwardLayer32(z, a, wt, b []float32, fi int, vals []float32, idx []int32, relu bool) {
	if useSIMD {
		mode := biasCol
		if relu {
			mode |= gemmReLU
		}
		fo := len(b)
		gemm(z, fo, a, fi, 1, wt, fo, b, mode, len(a)/fi, fi, fo)
		return
	}
	forwardLayer32Scalar(z, a, wt, b, fi, vals, idx)
	if relu {
		reluScalar(z)
	}
}

func backLayer32(g, d, w, a []float32, fi int, vals []float32, idx []int32) {
	if useSIMD {
		fo := len(w) / fi
		gemmMasked(g, fi, d, fo, 1, w, fi, nil, a, biasNone|gemmMask, len(d)/fo, fo, fi)
		return
	}
	backLayer32Scalar(g, d, w, a, fi, vals, idx)
}

func weightGrad32(gW, gb, d, prev []float32, fi int, vals []float32, idx []int32) {
	if useSIMD && useAVX512 {
		weightGrad32AVX512(gW, gb, d, prev, fi)
		return
	}
	if useSIMD {
		weightGrad32AVX2(gW, gb, d, prev, fi)
		return
	}
	weightGrad32Scalar(gW, gb, d, prev, fi, vals, idx)
}

// The Adam kernels of both vector widths are generated from one template.
//go:generate go run gen_adam_simd.go

func adamUpdate32(p, g, m, v []float32, c adamConsts32) {
	if useSIMD && useAVX512 {
		adamUpdate32AVX512(p, g, m, v, c)
		return
	}
	if useSIMD {
		adamUpdate32AVX2(p, g, m, v, c)
		return
	}
	adamUpdate32Scalar(p, g, m, v, c)
}

// ld16 loads s[o:o+16].
func ld16(s []float32, o int) archsimd.Float32x16 {
	return archsimd.LoadFloat32x16((*[16]float32)(s[o : o+16]))
}

// weightGrad32AVX512 is weightGrad32Scalar computed densely (every
// sample's term, zero deltas included, which changes no bit). The bias
// gradient sums the deltas 16 units per vector; the weight gradient is the
// product gW = dᵀ·prev in assembly (gemm, reading d down its columns),
// where lane (j, k) adds δ_sj·a_sk for s = 0, 1, … to +0 one rounded term
// at a time, exactly as the scalar kernel does.
func weightGrad32AVX512(gW, gb, d, prev []float32, fi int) {
	fo := len(gb)
	n := len(d) / fo
	d = d[:n*fo]
	prev = prev[:n*fi]
	gW = gW[:fo*fi]
	j := 0
	for ; j+16 <= fo; j += 16 {
		var sum archsimd.Float32x16
		for s := range n {
			sum = sum.Add(ld16(d, s*fo+j))
		}
		sum.Store((*[16]float32)(gb[j : j+16]))
	}
	weightGrad32Rest(gW, gb, d, prev, fi, j)
}

// The Trainer's vector path (AVX-512 or AVX2) runs the forward pass feature-major
// ("transposed": one row of np values per unit, np = the batch rounded up to
// a multiple of 16, column s = sample s):
//
//	zᵀ_l = W_l · aᵀ_{l−1} (+ b_l)
//
// reads W_l as it lies in the float32 parameters, so the per-step transpose
// of every weight matrix is gone. Back-propagation and the weight gradient
// then run sample-major (Trainer.backward: units across the lanes, no
// padding, W read as it lies), after the activations are copied
// sample-major. Every element is still the sequential sum of kernels32.go in
// the same order, so the bits equal the scalar kernels'. Columns past the
// batch (padding) hold values of no sample: they never mix into real
// columns and are never copied out.

// fmWork is the feature-major workspace of a Trainer.
type fmWork struct {
	cap  int         // columns the buffers below can hold
	np   int         // columns of the current batch (its size rounded up to 16)
	xT   []float32   // inputs, s_0 × np
	actT [][]float32 // actT[l]: s_l × np activations after ReLU (outputs for l = L)
}

// fmMaxBatch is the largest batch trained feature-major (the third pass
// measured the float64 path 1.15–1.3× faster for 12–40 samples, about even
// from 124 to 250 and slower beyond; see docs/benchmarks.md).
const fmMaxBatch = 256

// fmReserve returns the workspace laid out for n samples, or nil when the
// feature-major path is not used (no AVX2, or n outside 1…fmMaxBatch).
func (t *Trainer) fmReserve(n int) *fmWork {
	if !useSIMD || n == 0 || n > fmMaxBatch {
		return nil
	}
	np := (n + 15) &^ 15
	w := t.fm
	if w == nil {
		L := len(t.m.sizes) - 1
		w = &fmWork{actT: make([][]float32, L+1)}
		t.fm = w
	}
	if np > w.cap {
		w.xT = make([]float32, t.m.sizes[0]*np)
		for l := 1; l < len(t.m.sizes); l++ {
			w.actT[l] = make([]float32, t.m.sizes[l]*np)
		}
		w.cap = np
	}
	w.np = np
	return w
}

// fmLoad writes the loaded batch t.x32 (n × s_0) feature-major into w.xT
// with zero padding.
func (t *Trainer) fmLoad(w *fmWork, n int) {
	in, np := t.m.sizes[0], w.np
	xT := w.xT[:in*np]
	clear(xT)
	for s := range n {
		for k, v := range t.x32[s*in:][:in] {
			xT[k*np+s] = v
		}
	}
}

// fmForward is Trainer.forward on the feature-major buffers (fmLoad must
// have run): same bits for the loss and every real column.
func (t *Trainer) fmForward(w *fmWork, n int) float64 {
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
		gemm(cur, np, t.p32[m.wOff[l-1]:m.bOff[l-1]], fi, 1, prev, np, t.p32[m.bOff[l-1]:][:fo], mode, fo, fi, np)
		prev = cur
	}
	out := m.Out()
	return sqErr(t.y32[:n*out], func(i int) float32 { return prev[(i%out)*np+i/out] })
}

// fmBackward is Trainer.backward after fmForward: it copies the
// activations sample-major into t.act and back-propagates there. Same bits
// as the sample-major path.
func (t *Trainer) fmBackward(w *fmWork, n int) {
	m := t.m
	for l := 1; l < len(m.sizes); l++ {
		transposeCols(t.act[l][:n*m.sizes[l]], w.actT[l][:m.sizes[l]*w.np], m.sizes[l], n, w.np)
	}
	t.backward(n)
}

// transposeCols writes the first n columns of the rows × np matrix src into
// dst as n × rows (np ≥ n is src's row stride). On AVX-512, with np a
// multiple of 16 (the layout of fmWork), blocks of 16 rows are transposed
// in registers by transposeCols32AVX512 (16 columns at a time, only real
// columns stored); the other rows are copied in Go, four samples per pass.
func transposeCols(dst, src []float32, rows, n, np int) {
	dst = dst[:n*rows]
	src = src[:rows*np]
	if n == 0 {
		return
	}
	if np < n {
		panic(fmt.Sprintf("nn: transposeCols of %d columns with a row stride of %d", n, np))
	}
	k0 := 0
	if useAVX512 && np%16 == 0 {
		k0 = rows &^ 15
		if k0 > 0 {
			transposeCols32AVX512(&dst[0], &src[0], k0, rows, n, np)
		}
	}
	if k0 == rows {
		return
	}
	// Four samples per pass over the rows: each source row is read at four
	// neighbouring columns, and the four destination rows are written in
	// order.
	s := 0
	for ; s+4 <= n; s += 4 {
		d0 := dst[s*rows:][:rows]
		d1 := dst[(s+1)*rows:][:rows]
		d2 := dst[(s+2)*rows:][:rows]
		d3 := dst[(s+3)*rows:][:rows]
		for k := k0; k < rows; k++ {
			r := src[k*np+s:][:4]
			d0[k], d1[k], d2[k], d3[k] = r[0], r[1], r[2], r[3]
		}
	}
	for ; s < n; s++ {
		d := dst[s*rows:][:rows]
		for k := k0; k < rows; k++ {
			d[k] = src[k*np+s]
		}
	}
}

// transposeCols32AVX512 is the block transpose of transposeCols for the
// first units rows (a multiple of 16), with dst's row stride ldd
// (transpose_avx512_amd64.s). It checks nothing.
//
//go:noescape
func transposeCols32AVX512(dst, src *float32, units, ldd, n, np int)
