//go:build goexperiment.simd && amd64

package nn

import "simd/archsimd"

// The Trainer's AVX-512 path keeps activations and deltas feature-major
// ("transposed": one row of np values per unit, np = the batch rounded up to
// a multiple of 8, column s = sample s) instead of sample-major. Then
//
//	forward           zᵀ_l = W_l · aᵀ_{l−1} (+ b_l)
//	back-propagation  gᵀ   = W_lᵀ · δᵀ_l
//
// both read W_l as it lies in params, so the per-step transpose of every
// weight matrix (11 776 values, about a sixth of the sample-major round) is
// gone; the weight gradient δᵀ_l · a_{l−1} needs the previous layer's
// activations sample-major, a transpose of n × s_{l−1} values (≈ 3 k per
// step for the paper's network and batch). Lanes run across samples, so a
// batch that is not a multiple of 8 pays for its padding: the round is
// 1.1–1.25× faster than sample-major for 10, 11, 13 or 14 samples and about
// as fast for 9, 12 or 16 (docs/benchmarks.md). Every element is
// still the sequential sum of kernels.go in the same order, each product
// rounded before it is added (no fused multiply-add), so the bits equal the
// scalar kernels' (kernels_simd_test.go). Columns past the batch (padding)
// hold values of no sample: they never mix into real columns and are
// excluded from the loss and the gradients.

// fmWork is the feature-major workspace of a Trainer.
type fmWork struct {
	cap  int         // columns the buffers below can hold
	np   int         // columns of the current batch (its size rounded up to 8)
	xT   []float64   // inputs, s_0 × np
	actT [][]float64 // actT[l]: s_l × np activations after ReLU (outputs for l = L)
	delT [][]float64 // delT[l]: s_l × np ∂MSE/∂z_l
	aS   []float64   // a sample-major copy of one layer's activations, n × s_l
}

// fmReserve returns the workspace laid out for n samples, or nil when the
// AVX-512 path is not in use.
func (t *Trainer) fmReserve(n int) *fmWork {
	if !useSIMD || !useAVX512 || n == 0 {
		return nil
	}
	np := (n + 7) &^ 7
	w := t.fm
	if w == nil {
		L := len(t.m.sizes) - 1
		w = &fmWork{actT: make([][]float64, L+1), delT: make([][]float64, L+1)}
		t.fm = w
	}
	if np > w.cap {
		w.xT = make([]float64, t.m.sizes[0]*np)
		for l := 1; l < len(t.m.sizes); l++ {
			w.actT[l] = make([]float64, t.m.sizes[l]*np)
			w.delT[l] = make([]float64, t.m.sizes[l]*np)
		}
		w.aS = make([]float64, np*t.m.width)
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
		mulRows(cur, np, params[m.wOff[l-1]:m.bOff[l-1]], fi, prev, np, params[m.bOff[l-1]:][:fo], fo, fi, np)
		if l < L {
			relu(cur)
		}
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

// fmBackward is Trainer.backward after fmForward: it writes ∂MSE/∂params
// into dst with the bits of the sample-major path.
func (t *Trainer) fmBackward(w *fmWork, params, x, y, dst []float64, n int) {
	m := t.m
	L := len(m.sizes) - 1
	np, out := w.np, m.Out()
	norm := 2 / float64(len(y))
	outT := w.actT[L][:out*np]
	dOut := w.delT[L][:out*np]
	clear(dOut)
	for i, yi := range y[:n*out] {
		o, s := i%out, i/out
		dOut[o*np+s] = norm * (outT[o*np+s] - yi)
	}
	for l := L; l >= 1; l-- {
		fi, fo := m.sizes[l-1], m.sizes[l]
		var prevS []float64
		if l == 1 {
			prevS = x[:n*fi]
		} else {
			prevS = w.aS[:n*fi]
			transposeCols(prevS, w.actT[l-1][:fi*np], fi, n, np)
		}
		d := w.delT[l][:fo*np]
		gb := dst[m.bOff[l-1]:][:fo]
		biasGrad(gb, d, n, np)
		// ∂/∂W_jk = Σ_s δ_sj·a_sk: A = δᵀ (fo × n, row stride np), B = a.
		mulRows(dst[m.wOff[l-1]:m.bOff[l-1]], fi, d, np, prevS, fi, nil, fo, n, fi)
		if l == 1 {
			break
		}
		// δᵀ_{l−1} = (W_lᵀ δᵀ_l) ⊙ 1[aᵀ_{l−1} > 0]; A(k, j) = W[j][k].
		dp := w.delT[l-1][:fi*np]
		mulCols(dp, np, params[m.wOff[l-1]:m.bOff[l-1]], fi, d, np, fi, fo, np)
		maskInactive(dp, w.actT[l-1][:fi*np])
	}
}

// transposeCols writes the first n columns of the rows × np matrix src into
// dst as n × rows.
func transposeCols(dst, src []float64, rows, n, np int) {
	dst = dst[:n*rows]
	src = src[:rows*np]
	for s := range n {
		row := dst[s*rows:][:rows]
		for k := range row {
			row[k] = src[k*np+s]
		}
	}
}

// mulRows writes out[i·ldo + c] = Σ_{k<kd} a[i·lda + k]·b[k·ldb + c]
// (+ bias[i]) for i < rows and c < cols: A's rows are contiguous. Each
// element is the sequential sum from +0 in order k = 0, 1, …, every
// product rounded before it is added, then + bias[i]: the sums of
// kernels.go. Four rows and 16 columns are done per pass (each load of b
// serves four rows); the other columns go 8 at a time (masked at the end),
// the last rows mod 4 rows one at a time.
func mulRows(out []float64, ldo int, a []float64, lda int, b []float64, ldb int, bias []float64, rows, kd, cols int) {
	i := 0
	for ; i+4 <= rows; i += 4 {
		a0 := a[i*lda:][:kd]
		a1 := a[(i+1)*lda:][:kd]
		a2 := a[(i+2)*lda:][:kd]
		a3 := a[(i+3)*lda:][:kd]
		c := 0
		for ; c+16 <= cols; c += 16 {
			var p0, p1, q0, q1, r0, r1, t0, t1 archsimd.Float64x8
			bk := b[c:]
			for k := range a0 {
				x := (*[16]float64)(bk)
				if k+1 < kd {
					bk = bk[ldb:]
				}
				x0 := archsimd.LoadFloat64x8((*[8]float64)(x[0:8]))
				x1 := archsimd.LoadFloat64x8((*[8]float64)(x[8:16]))
				v := archsimd.BroadcastFloat64x8(a0[k])
				p0 = p0.Add(v.Mul(x0))
				p1 = p1.Add(v.Mul(x1))
				v = archsimd.BroadcastFloat64x8(a1[k])
				q0 = q0.Add(v.Mul(x0))
				q1 = q1.Add(v.Mul(x1))
				v = archsimd.BroadcastFloat64x8(a2[k])
				r0 = r0.Add(v.Mul(x0))
				r1 = r1.Add(v.Mul(x1))
				v = archsimd.BroadcastFloat64x8(a3[k])
				t0 = t0.Add(v.Mul(x0))
				t1 = t1.Add(v.Mul(x1))
			}
			if bias != nil {
				v := archsimd.BroadcastFloat64x8(bias[i])
				p0, p1 = p0.Add(v), p1.Add(v)
				v = archsimd.BroadcastFloat64x8(bias[i+1])
				q0, q1 = q0.Add(v), q1.Add(v)
				v = archsimd.BroadcastFloat64x8(bias[i+2])
				r0, r1 = r0.Add(v), r1.Add(v)
				v = archsimd.BroadcastFloat64x8(bias[i+3])
				t0, t1 = t0.Add(v), t1.Add(v)
			}
			st16(out, i*ldo+c, p0, p1)
			st16(out, (i+1)*ldo+c, q0, q1)
			st16(out, (i+2)*ldo+c, r0, r1)
			st16(out, (i+3)*ldo+c, t0, t1)
		}
		if c < cols {
			mulTail4(out, ldo, a, lda, 1, b, ldb, bias, i, kd, c, cols)
		}
	}
	mulTail(out, ldo, a, lda, 1, b, ldb, bias, i, rows, kd, 0, cols)
}

// mulCols is mulRows for A(i, k) = a[k·lda + i]: A's columns are
// contiguous (A is the transpose of a row-major matrix), so the four values
// a pass broadcasts lie side by side. No bias.
func mulCols(out []float64, ldo int, a []float64, lda int, b []float64, ldb int, rows, kd, cols int) {
	i := 0
	for ; i+4 <= rows; i += 4 {
		c := 0
		for ; c+16 <= cols; c += 16 {
			var p0, p1, q0, q1, r0, r1, t0, t1 archsimd.Float64x8
			bk, ak := b[c:], a[i:]
			for k := range kd {
				x := (*[16]float64)(bk)
				a4 := (*[4]float64)(ak)
				if k+1 < kd {
					bk, ak = bk[ldb:], ak[lda:]
				}
				x0 := archsimd.LoadFloat64x8((*[8]float64)(x[0:8]))
				x1 := archsimd.LoadFloat64x8((*[8]float64)(x[8:16]))
				v := archsimd.BroadcastFloat64x8(a4[0])
				p0 = p0.Add(v.Mul(x0))
				p1 = p1.Add(v.Mul(x1))
				v = archsimd.BroadcastFloat64x8(a4[1])
				q0 = q0.Add(v.Mul(x0))
				q1 = q1.Add(v.Mul(x1))
				v = archsimd.BroadcastFloat64x8(a4[2])
				r0 = r0.Add(v.Mul(x0))
				r1 = r1.Add(v.Mul(x1))
				v = archsimd.BroadcastFloat64x8(a4[3])
				t0 = t0.Add(v.Mul(x0))
				t1 = t1.Add(v.Mul(x1))
			}
			st16(out, i*ldo+c, p0, p1)
			st16(out, (i+1)*ldo+c, q0, q1)
			st16(out, (i+2)*ldo+c, r0, r1)
			st16(out, (i+3)*ldo+c, t0, t1)
		}
		if c < cols {
			mulTail4(out, ldo, a, 1, lda, b, ldb, nil, i, kd, c, cols)
		}
	}
	mulTail(out, ldo, a, 1, lda, b, ldb, nil, i, rows, kd, 0, cols)
}

// mulTail4 computes the elements of rows i…i+3 and columns c0 ≤ c < cols
// of mulRows / mulCols with A(i, k) = a[i·ars + k·acs], 8 (masked: fewer)
// columns at a time, in the same order.
func mulTail4(out []float64, ldo int, a []float64, ars, acs int, b []float64, ldb int, bias []float64, i, kd, c0, cols int) {
	i0, i1, i2, i3 := i*ars, (i+1)*ars, (i+2)*ars, (i+3)*ars
	for c := c0; c < cols; c += 8 {
		w := min(8, cols-c)
		var p0, q0, r0, t0 archsimd.Float64x8
		for k := range kd {
			x0 := archsimd.LoadFloat64x8SlicePart(b[k*ldb+c:][:w])
			ak := k * acs
			p0 = p0.Add(archsimd.BroadcastFloat64x8(a[i0+ak]).Mul(x0))
			q0 = q0.Add(archsimd.BroadcastFloat64x8(a[i1+ak]).Mul(x0))
			r0 = r0.Add(archsimd.BroadcastFloat64x8(a[i2+ak]).Mul(x0))
			t0 = t0.Add(archsimd.BroadcastFloat64x8(a[i3+ak]).Mul(x0))
		}
		if bias != nil {
			p0 = p0.Add(archsimd.BroadcastFloat64x8(bias[i]))
			q0 = q0.Add(archsimd.BroadcastFloat64x8(bias[i+1]))
			r0 = r0.Add(archsimd.BroadcastFloat64x8(bias[i+2]))
			t0 = t0.Add(archsimd.BroadcastFloat64x8(bias[i+3]))
		}
		p0.StoreSlicePart(out[i*ldo+c:][:w])
		q0.StoreSlicePart(out[(i+1)*ldo+c:][:w])
		r0.StoreSlicePart(out[(i+2)*ldo+c:][:w])
		t0.StoreSlicePart(out[(i+3)*ldo+c:][:w])
	}
}

// mulTail computes the elements of rows i0 ≤ i < i1 and columns
// c0 ≤ c < cols of mulRows / mulCols with A(i, k) = a[i·ars + k·acs], one
// row and 8 (masked: fewer) columns at a time, in the same order.
func mulTail(out []float64, ldo int, a []float64, ars, acs int, b []float64, ldb int, bias []float64, i0, i1, kd, c0, cols int) {
	for i := i0; i < i1; i++ {
		for c := c0; c < cols; c += 8 {
			w := min(8, cols-c)
			var p0 archsimd.Float64x8
			for k := range kd {
				x0 := archsimd.LoadFloat64x8SlicePart(b[k*ldb+c:][:w])
				p0 = p0.Add(archsimd.BroadcastFloat64x8(a[i*ars+k*acs]).Mul(x0))
			}
			if bias != nil {
				p0 = p0.Add(archsimd.BroadcastFloat64x8(bias[i]))
			}
			p0.StoreSlicePart(out[i*ldo+c:][:w])
		}
	}
}

// biasGrad writes gb[j] = Σ_{s<n} d[j·np + s], each a sequential sum from
// +0 in sample order; four rows at a time so that four independent chains
// of additions overlap.
func biasGrad(gb, d []float64, n, np int) {
	j := 0
	for ; j+4 <= len(gb); j += 4 {
		d0, d1, d2, d3 := d[j*np:][:n], d[(j+1)*np:][:n], d[(j+2)*np:][:n], d[(j+3)*np:][:n]
		var s0, s1, s2, s3 float64
		for s := range n {
			s0 += d0[s]
			s1 += d1[s]
			s2 += d2[s]
			s3 += d3[s]
		}
		gb[j], gb[j+1], gb[j+2], gb[j+3] = s0, s1, s2, s3
	}
	for ; j < len(gb); j++ {
		sum := 0.0
		for _, v := range d[j*np:][:n] {
			sum += v
		}
		gb[j] = sum
	}
}
