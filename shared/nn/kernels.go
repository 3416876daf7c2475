package nn

// The kernels below are the whole arithmetic of the package. They are plain
// Go loops over flat slices, written so that
//   - zero activations are skipped (ReLU leaves about half of them zero, and
//     0·w adds nothing to a sum, so skipping changes no result bit);
//   - four rows are combined per pass over the destination, which reuses each
//     destination load/store four times (the compiler keeps the four scalars
//     in registers) and gives four independent products per element;
//   - every product is rounded before it is added (the explicit float64
//     conversions forbid fused multiply-add), so results are bit-identical on
//     every GOARCH, natively and in WebAssembly.
//
// addRows and dotRows evaluate exactly the same expression tree, so a forward
// pass through either (Trainer or MLP.Predict) gives identical bits.

// compactScalar stores the non-zero entries of a in vals and their indices
// in idx and returns how many there are. NaN counts as non-zero.
func compactScalar(a, vals []float64, idx []int32) int {
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

// addRowsScalar adds Σ_k vals[k]·m[idx[k]·stride : idx[k]·stride+len(dst)]
// to dst, four rows at a time in the order of vals:
//
//	dst[j] = dst[j] + (((v0·r0[j] + v1·r1[j]) + v2·r2[j]) + v3·r3[j])
//
// per group of four (then three, two or one) non-zero activations.
func addRowsScalar(dst, m []float64, stride int, vals []float64, idx []int32) {
	n := len(dst)
	k := 0
	for ; k+4 <= len(vals); k += 4 {
		v0, v1, v2, v3 := vals[k], vals[k+1], vals[k+2], vals[k+3]
		r0 := m[int(idx[k])*stride:][:n]
		r1 := m[int(idx[k+1])*stride:][:n]
		r2 := m[int(idx[k+2])*stride:][:n]
		r3 := m[int(idx[k+3])*stride:][:n]
		for j := range dst {
			dst[j] += float64(v0*r0[j]) + float64(v1*r1[j]) + float64(v2*r2[j]) + float64(v3*r3[j])
		}
	}
	switch len(vals) - k {
	case 3:
		v0, v1, v2 := vals[k], vals[k+1], vals[k+2]
		r0 := m[int(idx[k])*stride:][:n]
		r1 := m[int(idx[k+1])*stride:][:n]
		r2 := m[int(idx[k+2])*stride:][:n]
		for j := range dst {
			dst[j] += float64(v0*r0[j]) + float64(v1*r1[j]) + float64(v2*r2[j])
		}
	case 2:
		v0, v1 := vals[k], vals[k+1]
		r0 := m[int(idx[k])*stride:][:n]
		r1 := m[int(idx[k+1])*stride:][:n]
		for j := range dst {
			dst[j] += float64(v0*r0[j]) + float64(v1*r1[j])
		}
	case 1:
		v0 := vals[k]
		r0 := m[int(idx[k])*stride:][:n]
		for j := range dst {
			dst[j] += float64(v0 * r0[j])
		}
	}
}

// forwardGather adds W·a to z, W being len(z)×fi row-major and a given by its
// non-zero entries (vals, idx). It is the transposed twin of addRows (which
// runs over Wᵀ) and rounds identically.
func forwardGather(z, w []float64, fi int, vals []float64, idx []int32) {
	nv := len(vals)
	idx = idx[:nv]
	for j := range z {
		row := w[j*fi:][:fi]
		s := z[j]
		k := 0
		for ; k+4 <= nv; k += 4 {
			s += float64(vals[k]*row[idx[k]]) + float64(vals[k+1]*row[idx[k+1]]) +
				float64(vals[k+2]*row[idx[k+2]]) + float64(vals[k+3]*row[idx[k+3]])
		}
		switch nv - k {
		case 3:
			s += float64(vals[k]*row[idx[k]]) + float64(vals[k+1]*row[idx[k+1]]) + float64(vals[k+2]*row[idx[k+2]])
		case 2:
			s += float64(vals[k]*row[idx[k]]) + float64(vals[k+1]*row[idx[k+1]])
		case 1:
			s += float64(vals[k] * row[idx[k]])
		}
		z[j] = s
	}
}

// weightGradScalar adds the gradient of one layer's weights and biases to
// gW (fo×fi) and gb (fo) given the layer's deltas d (n×fo) and inputs prev
// (n×fi):
//
//	∂/∂b_j += Σ_s δ_sj (summed over s in order),
//	∂/∂W_j· += Σ_s δ_sj a_s· (addRows over the samples with δ_sj ≠ 0).
//
// vals and idx are scratch of length ≥ n.
func weightGradScalar(gW, gb, d, prev []float64, fi int, vals []float64, idx []int32) {
	fo := len(gb)
	n := len(d) / fo
	for j := range fo {
		k := 0
		sum := 0.0
		for s := range n {
			v := d[s*fo+j]
			sum += v
			if v != 0 {
				vals[k] = v
				idx[k] = int32(s)
				k++
			}
		}
		gb[j] += sum
		addRows(gW[j*fi:][:fi], prev, fi, vals[:k], idx[:k])
	}
}

// reluScalar replaces every z ≤ 0 by 0 in place; NaN stays NaN, as in
// torch.relu.
func reluScalar(z []float64) {
	for j, v := range z {
		if v <= 0 {
			z[j] = 0
		}
	}
}

// maskInactiveScalar sets g[k] = 0 wherever !(a[k] > 0): the ReLU derivative
// (0 at a = 0, as in PyTorch) applied to a back-propagated gradient.
func maskInactiveScalar(g, a []float64) {
	a = a[:len(g)]
	for k, v := range a {
		if !(v > 0) {
			g[k] = 0
		}
	}
}

// transposeScalar writes the fo×fi row-major matrix w into wt as fi×fo.
func transposeScalar(wt, w []float64, fo, fi int) {
	wt = wt[:fo*fi]
	for j := range fo {
		row := w[j*fi:][:fi]
		for k, v := range row {
			wt[k*fo+j] = v
		}
	}
}
