//go:build goexperiment.simd && amd64

package nn

import (
	"math"
	"simd/archsimd"
	"sync"
)

// AVX2 versions of MLP.Predict's float64 kernels, built only with
// GOEXPERIMENT=simd on amd64 and used only when the CPU has AVX2 (useSIMD);
// the scalar kernels in kernels.go are the reference and the fallback. (The
// Trainer's float32 kernels: train_avx512_amd64.go.)
//
// Every kernel vectorises across independent outputs: lane i of a vector
// computes exactly the scalar kernel's expression for output element i,
// operation for operation and in the same order — products rounded by their
// own VMULPD, sums by separate VADDPD (no fused multiply-add; the compiler
// only fuses the explicit MulAdd method, never used here), each product
// added to the running sum in the scalar kernel's order. So the results are
// bit-identical to the scalar kernels, which kernels_simd_test.go checks on
// random shapes and values.

// useSIMD selects the vector kernels (AVX2, and AVX-512 when useAVX512 is
// also set). Tests switch it off to compare against the scalar kernels.
var useSIMD = archsimd.X86.AVX2()

func addRows(dst, m []float64, stride int, vals []float64, idx []int32) {
	if useSIMD {
		addRowsVec(dst, m, stride, vals, idx)
		return
	}
	addRowsScalar(dst, m, stride, vals, idx)
}

func compact(a, vals []float64, idx []int32) int {
	if useSIMD {
		return compactBranchless(a, vals, idx)
	}
	return compactScalar(a, vals, idx)
}

func relu(z []float64) {
	if useSIMD {
		reluAVX2(z)
		return
	}
	reluScalar(z)
}

// addRowsAVX2 is addRowsScalar with dst cut into blocks of 16, 8 or 4
// elements held in registers while every group of four rows is added:
//
//	dst[j:j+4] = (((dst[j:j+4] + v0·r0) + v1·r1) + v2·r2) + v3·r3
//
// lane by lane, groups in the order of vals, as addRowsScalar does element by
// element. The last len(dst) mod 4 elements go through addRowsScalar itself.
func addRowsAVX2(dst, m []float64, stride int, vals []float64, idx []int32) {
	n := len(dst)
	idx = idx[:len(vals)]
	j := 0
	for ; j+16 <= n; j += 16 {
		addRows16((*[16]float64)(dst[j:j+16]), m[j:], stride, vals, idx)
	}
	if j+8 <= n {
		addRows8((*[8]float64)(dst[j:j+8]), m[j:], stride, vals, idx)
		j += 8
	}
	if j+4 <= n {
		addRows4((*[4]float64)(dst[j:j+4]), m[j:], stride, vals, idx)
		j += 4
	}
	if j < n {
		addRowsScalar(dst[j:], m[j:], stride, vals, idx)
	}
}

// addRows16 is addRowsAVX2 for one block of 16 elements: row k of the block
// is m[idx[k]·stride:][:16].
func addRows16(dst *[16]float64, m []float64, stride int, vals []float64, idx []int32) {
	d0 := archsimd.LoadFloat64x4((*[4]float64)(dst[0:4]))
	d1 := archsimd.LoadFloat64x4((*[4]float64)(dst[4:8]))
	d2 := archsimd.LoadFloat64x4((*[4]float64)(dst[8:12]))
	d3 := archsimd.LoadFloat64x4((*[4]float64)(dst[12:16]))
	nv := len(vals)
	idx = idx[:nv]
	k := 0
	for ; k+4 <= nv; k += 4 {
		r0 := row16(m, int(idx[k])*stride)
		r1 := row16(m, int(idx[k+1])*stride)
		r2 := row16(m, int(idx[k+2])*stride)
		r3 := row16(m, int(idx[k+3])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		b2 := archsimd.BroadcastFloat64x4(vals[k+2])
		b3 := archsimd.BroadcastFloat64x4(vals[k+3])
		d0 = d0.Add(b0.Mul(at(r0, 0))).Add(b1.Mul(at(r1, 0))).Add(b2.Mul(at(r2, 0))).Add(b3.Mul(at(r3, 0)))
		d1 = d1.Add(b0.Mul(at(r0, 4))).Add(b1.Mul(at(r1, 4))).Add(b2.Mul(at(r2, 4))).Add(b3.Mul(at(r3, 4)))
		d2 = d2.Add(b0.Mul(at(r0, 8))).Add(b1.Mul(at(r1, 8))).Add(b2.Mul(at(r2, 8))).Add(b3.Mul(at(r3, 8)))
		d3 = d3.Add(b0.Mul(at(r0, 12))).Add(b1.Mul(at(r1, 12))).Add(b2.Mul(at(r2, 12))).Add(b3.Mul(at(r3, 12)))
	}
	switch nv - k {
	case 3:
		r0 := row16(m, int(idx[k])*stride)
		r1 := row16(m, int(idx[k+1])*stride)
		r2 := row16(m, int(idx[k+2])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		b2 := archsimd.BroadcastFloat64x4(vals[k+2])
		d0 = d0.Add(b0.Mul(at(r0, 0))).Add(b1.Mul(at(r1, 0))).Add(b2.Mul(at(r2, 0)))
		d1 = d1.Add(b0.Mul(at(r0, 4))).Add(b1.Mul(at(r1, 4))).Add(b2.Mul(at(r2, 4)))
		d2 = d2.Add(b0.Mul(at(r0, 8))).Add(b1.Mul(at(r1, 8))).Add(b2.Mul(at(r2, 8)))
		d3 = d3.Add(b0.Mul(at(r0, 12))).Add(b1.Mul(at(r1, 12))).Add(b2.Mul(at(r2, 12)))
	case 2:
		r0 := row16(m, int(idx[k])*stride)
		r1 := row16(m, int(idx[k+1])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		d0 = d0.Add(b0.Mul(at(r0, 0))).Add(b1.Mul(at(r1, 0)))
		d1 = d1.Add(b0.Mul(at(r0, 4))).Add(b1.Mul(at(r1, 4)))
		d2 = d2.Add(b0.Mul(at(r0, 8))).Add(b1.Mul(at(r1, 8)))
		d3 = d3.Add(b0.Mul(at(r0, 12))).Add(b1.Mul(at(r1, 12)))
	case 1:
		r0 := row16(m, int(idx[k])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		d0 = d0.Add(b0.Mul(at(r0, 0)))
		d1 = d1.Add(b0.Mul(at(r0, 4)))
		d2 = d2.Add(b0.Mul(at(r0, 8)))
		d3 = d3.Add(b0.Mul(at(r0, 12)))
	}
	d0.Store((*[4]float64)(dst[0:4]))
	d1.Store((*[4]float64)(dst[4:8]))
	d2.Store((*[4]float64)(dst[8:12]))
	d3.Store((*[4]float64)(dst[12:16]))
}

// addRows8 is addRows16 for a block of 8 elements.
func addRows8(dst *[8]float64, m []float64, stride int, vals []float64, idx []int32) {
	d0 := archsimd.LoadFloat64x4((*[4]float64)(dst[0:4]))
	d1 := archsimd.LoadFloat64x4((*[4]float64)(dst[4:8]))
	nv := len(vals)
	idx = idx[:nv]
	k := 0
	for ; k+4 <= nv; k += 4 {
		r0 := row8(m, int(idx[k])*stride)
		r1 := row8(m, int(idx[k+1])*stride)
		r2 := row8(m, int(idx[k+2])*stride)
		r3 := row8(m, int(idx[k+3])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		b2 := archsimd.BroadcastFloat64x4(vals[k+2])
		b3 := archsimd.BroadcastFloat64x4(vals[k+3])
		d0 = d0.Add(b0.Mul(at8(r0, 0))).Add(b1.Mul(at8(r1, 0))).Add(b2.Mul(at8(r2, 0))).Add(b3.Mul(at8(r3, 0)))
		d1 = d1.Add(b0.Mul(at8(r0, 4))).Add(b1.Mul(at8(r1, 4))).Add(b2.Mul(at8(r2, 4))).Add(b3.Mul(at8(r3, 4)))
	}
	switch nv - k {
	case 3:
		r0 := row8(m, int(idx[k])*stride)
		r1 := row8(m, int(idx[k+1])*stride)
		r2 := row8(m, int(idx[k+2])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		b2 := archsimd.BroadcastFloat64x4(vals[k+2])
		d0 = d0.Add(b0.Mul(at8(r0, 0))).Add(b1.Mul(at8(r1, 0))).Add(b2.Mul(at8(r2, 0)))
		d1 = d1.Add(b0.Mul(at8(r0, 4))).Add(b1.Mul(at8(r1, 4))).Add(b2.Mul(at8(r2, 4)))
	case 2:
		r0 := row8(m, int(idx[k])*stride)
		r1 := row8(m, int(idx[k+1])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		d0 = d0.Add(b0.Mul(at8(r0, 0))).Add(b1.Mul(at8(r1, 0)))
		d1 = d1.Add(b0.Mul(at8(r0, 4))).Add(b1.Mul(at8(r1, 4)))
	case 1:
		r0 := row8(m, int(idx[k])*stride)
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		d0 = d0.Add(b0.Mul(at8(r0, 0)))
		d1 = d1.Add(b0.Mul(at8(r0, 4)))
	}
	d0.Store((*[4]float64)(dst[0:4]))
	d1.Store((*[4]float64)(dst[4:8]))
}

// addRows4 is addRows16 for a block of 4 elements.
func addRows4(dst *[4]float64, m []float64, stride int, vals []float64, idx []int32) {
	d0 := archsimd.LoadFloat64x4(dst)
	nv := len(vals)
	idx = idx[:nv]
	k := 0
	for ; k+4 <= nv; k += 4 {
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		b2 := archsimd.BroadcastFloat64x4(vals[k+2])
		b3 := archsimd.BroadcastFloat64x4(vals[k+3])
		d0 = d0.Add(b0.Mul(load4(m, int(idx[k])*stride))).Add(b1.Mul(load4(m, int(idx[k+1])*stride))).
			Add(b2.Mul(load4(m, int(idx[k+2])*stride))).Add(b3.Mul(load4(m, int(idx[k+3])*stride)))
	}
	switch nv - k {
	case 3:
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		b2 := archsimd.BroadcastFloat64x4(vals[k+2])
		d0 = d0.Add(b0.Mul(load4(m, int(idx[k])*stride))).Add(b1.Mul(load4(m, int(idx[k+1])*stride))).
			Add(b2.Mul(load4(m, int(idx[k+2])*stride)))
	case 2:
		b0 := archsimd.BroadcastFloat64x4(vals[k])
		b1 := archsimd.BroadcastFloat64x4(vals[k+1])
		d0 = d0.Add(b0.Mul(load4(m, int(idx[k])*stride))).Add(b1.Mul(load4(m, int(idx[k+1])*stride)))
	case 1:
		d0 = d0.Add(archsimd.BroadcastFloat64x4(vals[k]).Mul(load4(m, int(idx[k])*stride)))
	}
	d0.Store(dst)
}

// row16 and row8 return m[o:o+16] and m[o:o+8] as arrays (one bounds check).
func row16(m []float64, o int) *[16]float64 { return (*[16]float64)(m[o : o+16]) }
func row8(m []float64, o int) *[8]float64   { return (*[8]float64)(m[o : o+8]) }

// at and at8 load elements i…i+3 of a row.
func at(r *[16]float64, i int) archsimd.Float64x4 {
	return archsimd.LoadFloat64x4((*[4]float64)(r[i : i+4]))
}
func at8(r *[8]float64, i int) archsimd.Float64x4 {
	return archsimd.LoadFloat64x4((*[4]float64)(r[i : i+4]))
}

// load4 loads s[j:j+4].
func load4(s []float64, j int) archsimd.Float64x4 {
	return archsimd.LoadFloat64x4((*[4]float64)(s[j : j+4]))
}

// nonZero returns 1 if v is not ±0 (NaN included) and 0 otherwise, without
// a branch: ReLU makes v = 0 a coin flip the branch predictor cannot learn.
func nonZero(v float64) int {
	b := math.Float64bits(v) << 1 // drop the sign
	return int((b | -b) >> 63)
}

// compactBranchless is compactScalar writing every entry and advancing the
// output position only past the non-zero ones.
func compactBranchless(a, vals []float64, idx []int32) int {
	vals = vals[:len(a)]
	idx = idx[:len(a)]
	n := 0
	for i, v := range a {
		vals[n] = v
		idx[n] = int32(i)
		n += nonZero(v)
	}
	return n
}

// reluAVX2 is reluScalar: lanes with z ≤ 0 (an ordered comparison, false
// for NaN) become +0.
func reluAVX2(z []float64) {
	n4 := len(z) &^ 3
	var zero archsimd.Float64x4
	for j := 0; j < n4; j += 4 {
		v := load4(z, j)
		// Masked keeps the lanes where z > 0 or z is NaN, i.e. not z ≤ 0.
		v.Masked(v.Greater(zero).Or(v.IsNaN())).Store((*[4]float64)(z[j : j+4]))
	}
	reluScalar(z[n4:])
}

// transposeAVX2 is transposeScalar by 4×4 blocks (shuffles only, so it is
// exact), with the ragged edges done element by element.
func transposeAVX2(wt, w []float64, fo, fi int) {
	wt = wt[:fo*fi]
	w = w[:fo*fi]
	fo4, fi4 := fo&^3, fi&^3
	for j := 0; j < fo4; j += 4 {
		for k := 0; k < fi4; k += 4 {
			a := load4(w, j*fi+k)     // W[j][k:k+4]
			b := load4(w, (j+1)*fi+k) // W[j+1][k:k+4]
			c := load4(w, (j+2)*fi+k)
			d := load4(w, (j+3)*fi+k)
			ab0 := a.SelectFromPairGrouped(0, 2, b) // a0 b0 a2 b2
			ab1 := a.SelectFromPairGrouped(1, 3, b) // a1 b1 a3 b3
			cd0 := c.SelectFromPairGrouped(0, 2, d) // c0 d0 c2 d2
			cd1 := c.SelectFromPairGrouped(1, 3, d) // c1 d1 c3 d3
			o := k*fo + j
			ab0.Select128FromPair(0, 2, cd0).Store((*[4]float64)(wt[o : o+4]))           // column k
			ab1.Select128FromPair(0, 2, cd1).Store((*[4]float64)(wt[o+fo : o+fo+4]))     // k+1
			ab0.Select128FromPair(1, 3, cd0).Store((*[4]float64)(wt[o+2*fo : o+2*fo+4])) // k+2
			ab1.Select128FromPair(1, 3, cd1).Store((*[4]float64)(wt[o+3*fo : o+3*fo+4])) // k+3
		}
		for jj := j; jj < j+4; jj++ {
			for k := fi4; k < fi; k++ {
				wt[k*fo+jj] = w[jj*fi+k]
			}
		}
	}
	for j := fo4; j < fo; j++ {
		row := w[j*fi:][:fi]
		for k, v := range row {
			wt[k*fo+j] = v
		}
	}
}

// predictMinBatch is the batch size from which MLP.Predict transposes the
// weights to use the vector kernels (transposing costs about as much as the
// scalar forward pass of two or three samples).
const predictMinBatch = 4

// predictChunk is the number of samples MLP.Predict pushes through the
// network at once on the AVX-512 path (bounds its workspace).
const predictChunk = 64

// predictScratch is MLP.Predict's workspace for the vector paths, pooled so
// that Predict stays allocation-free in steady state and safe for concurrent
// use.
type predictScratch struct {
	wt   []float64 // transposed weights, at params' offsets
	act  []float64 // two activation slabs (predictChunk rows, or one row)
	vals []float64
	idx  []int32
}

var predictPool = sync.Pool{New: func() any { return new(predictScratch) }}

// forwardLayer64 writes z = a·Wᵀ + b in float64 for the n samples of a
// (n×fi): wt is Wᵀ (fi×fo), z is n×fo. Per sample it adds the rows of wt of
// the non-zero inputs (addRows), then the bias: the sums of forwardGather.
func forwardLayer64(z, a, wt, b []float64, fi int, vals []float64, idx []int32) {
	fo := len(b)
	n := len(a) / fi
	clear(z[:n*fo])
	for s := range n {
		zs := z[s*fo:][:fo]
		nz := compact(a[s*fi:][:fi], vals, idx)
		addRows(zs, wt, fo, vals[:nz], idx[:nz])
	}
	addBiasScalar(z[:n*fo], b)
}

// predictFast is MLP.Predict through the vector float64 kernels (on
// AVX-512 the dense product gemm64, else forwardLayer64, over transposed
// weights, then relu), which give the same bits as forwardGather.
func predictFast(m *MLP, params, x, dst []float64, n int) bool {
	if !useSIMD || n < predictMinBatch {
		return false
	}
	sc := predictPool.Get().(*predictScratch)
	defer predictPool.Put(sc)
	if len(sc.wt) < m.n {
		sc.wt = make([]float64, m.n)
	}
	if len(sc.act) < 2*predictChunk*m.width {
		sc.act = make([]float64, 2*predictChunk*m.width)
		sc.vals = make([]float64, m.width)
		sc.idx = make([]int32, m.width)
	}
	L := len(m.sizes) - 1
	for l := 1; l <= L; l++ {
		transposeAVX2(sc.wt[m.wOff[l-1]:m.bOff[l-1]], params[m.wOff[l-1]:m.bOff[l-1]], m.sizes[l], m.sizes[l-1])
	}
	in, out := m.In(), m.Out()
	chunk := predictChunk
	cur, next := sc.act[:chunk*m.width], sc.act[chunk*m.width:2*chunk*m.width]
	for s0 := 0; s0 < n; s0 += chunk {
		c := min(chunk, n-s0)
		prev := x[s0*in : (s0+c)*in]
		for l := 1; l <= L; l++ {
			fi, fo := m.sizes[l-1], m.sizes[l]
			z := next[:c*fo]
			if useAVX512 {
				gemm64(z, fo, prev, fi, 1, sc.wt[m.wOff[l-1]:m.bOff[l-1]], fo, params[m.bOff[l-1]:][:fo], biasCol, c, fi, fo)
			} else {
				forwardLayer64(z, prev, sc.wt[m.wOff[l-1]:m.bOff[l-1]], params[m.bOff[l-1]:][:fo], fi, sc.vals, sc.idx)
			}
			if l < L {
				relu(z)
			}
			prev = z
			cur, next = next, cur
		}
		copy(dst[s0*out:(s0+c)*out], prev[:c*out])
	}
	return true
}
