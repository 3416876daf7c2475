package nn

// The kernels below are the float64 arithmetic of MLP.Predict (the Trainer
// computes in float32: kernels32.go). They are plain
// Go loops over flat slices, written so that
//   - every sum of products is sequential: it starts at +0 and adds one
//     rounded product at a time, in index order (a bias is added after its
//     sum). A product that is ±0 then never changes a sum (x + ±0 = x for
//     x ≠ 0, and +0 + −0 = +0), so these kernels skip zero activations and
//     zero deltas (ReLU zeroes about half of them) while the vector kernels
//     (kernels_*_amd64.go) may compute every product densely, and both give
//     the same bits whenever the activations are finite;
//   - four rows are combined per pass over the destination, which reuses each
//     destination load/store four times (still added one after the other);
//   - every product is rounded before it is added (the explicit float64
//     conversions forbid fused multiply-add), so results are bit-identical on
//     every GOARCH, natively and in WebAssembly.
//
// addRows and forwardGather evaluate exactly the same sums, so a forward
// pass through either (Trainer or MLP.Predict) gives identical bits.

// compactScalar stores the non-zero entries of a in vals and their indices
// in idx and returns how many there are. NaN counts as non-zero. It serves
// the float64 kernels (MLP.Predict) and the float32 Trainer alike.
func compactScalar[F float32 | float64](a, vals []F, idx []int32) int {
	vals = vals[:len(a)]
	idx = idx[:len(a)]
	n := 0
	for i, v := range a {
		if v != 0 {
			vals[n] = v
			idx[n] = int32(i)
			n++
		}
	}
	return n
}

// addRowsScalar adds vals[k]·m[idx[k]·stride:][:len(dst)] to dst one row
// after the other (k in order), each product rounded to F before it is
// added (the explicit conversions forbid fused multiply-add):
//
//	dst[j] = (((dst[j] + v0·r0[j]) + v1·r1[j]) + v2·r2[j]) + v3·r3[j] …
//
// It serves the float64 kernels and the float32 Trainer alike; four rows
// per pass over dst, still added one after the other.
func addRowsScalar[F float32 | float64](dst, m []F, stride int, vals []F, idx []int32) {
	n := len(dst)
	k := 0
	for ; k+4 <= len(vals); k += 4 {
		v0, v1, v2, v3 := vals[k], vals[k+1], vals[k+2], vals[k+3]
		r0 := m[int(idx[k])*stride:][:n]
		r1 := m[int(idx[k+1])*stride:][:n]
		r2 := m[int(idx[k+2])*stride:][:n]
		r3 := m[int(idx[k+3])*stride:][:n]
		for j := range dst {
			s := dst[j] + F(v0*r0[j])
			s += F(v1 * r1[j])
			s += F(v2 * r2[j])
			dst[j] = s + F(v3*r3[j])
		}
	}
	for ; k < len(vals); k++ {
		v0 := vals[k]
		r0 := m[int(idx[k])*stride:][:n]
		for j := range dst {
			dst[j] += F(v0 * r0[j])
		}
	}
}

// forwardGather writes W·a + b into z, W being len(z)×fi row-major and a
// given by its non-zero entries (vals, idx): each z[j] is the sequential
// sum of the products from +0, then + b[j]. It is the transposed twin of
// addRows (which runs over Wᵀ) and rounds identically.
func forwardGather(z, w, b []float64, fi int, vals []float64, idx []int32) {
	nv := len(vals)
	idx = idx[:nv]
	b = b[:len(z)]
	for j := range z {
		row := w[j*fi:][:fi]
		s := 0.0
		for k, v := range vals {
			s += float64(v * row[idx[k]])
		}
		z[j] = s + b[j]
	}
}

// addBiasScalar adds b to every row of the n×len(b) matrix z.
func addBiasScalar(z, b []float64) {
	fo := len(b)
	for s := 0; s+fo <= len(z); s += fo {
		row := z[s:][:fo]
		for j, v := range b {
			row[j] += v
		}
	}
}

// reluScalar replaces every z ≤ 0 by 0 in place; NaN stays NaN, as in
// torch.relu.
func reluScalar[F float32 | float64](z []F) {
	for j, v := range z {
		if v <= 0 {
			z[j] = 0
		}
	}
}

// transposeScalar writes the fo×fi row-major matrix w into wt as fi×fo.
func transposeScalar[F float32 | float64](wt, w []F, fo, fi int) {
	wt = wt[:fo*fi]
	for j := range fo {
		row := w[j*fi:][:fi]
		for k, v := range row {
			wt[k*fo+j] = v
		}
	}
}
