package nn

import "math"

// The Trainer's arithmetic is IEEE single precision (float32) on every
// platform. The scalar kernels below are its reference and, in WebAssembly
// and without GOEXPERIMENT=simd, its implementation. They follow the rules
// of kernels.go in float32:
//   - every sum of products starts at +0 and adds one rounded product at a
//     time in index order (a bias after its sum); the explicit float32
//     conversions forbid fused multiply-add, and Go rounds every float32
//     operation to single precision on every GOARCH (amd64 and wasm alike);
//   - zero activations and deltas are skipped (a ±0 product never changes a
//     sequential sum from +0), so the dense vector kernels give the same
//     bits whenever the values are finite;
//   - square roots are float32(math.Sqrt(float64(x))), which is the
//     correctly rounded single-precision square root (double has more than
//     2·24 + 2 significand bits), the same as VSQRTPS.

// forwardLayer32Scalar writes z = a·Wᵀ + b for the n samples of a (n×fi):
// wt is Wᵀ (fi×fo), z is n×fo. Per sample it adds the rows of wt of the
// non-zero inputs, then the bias.
func forwardLayer32Scalar(z, a, wt, b []float32, fi int, vals []float32, idx []int32) {
	fo := len(b)
	n := len(a) / fi
	clear(z[:n*fo])
	for s := range n {
		zs := z[s*fo:][:fo]
		nz := compactScalar(a[s*fi:][:fi], vals, idx)
		addRowsScalar(zs, wt, fo, vals[:nz], idx[:nz])
		for j, v := range b {
			zs[j] += v
		}
	}
}

// backLayer32Scalar writes g = (d·W) ⊙ 1[a > 0] for the n samples of d
// (n×fo): W is fo×fi, g and a are n×fi. Per sample it adds the rows of W of
// the non-zero deltas, then applies the ReLU derivative of the layer below
// (0 wherever !(a > 0), as in PyTorch).
func backLayer32Scalar(g, d, w, a []float32, fi int, vals []float32, idx []int32) {
	fo := len(w) / fi
	n := len(d) / fo
	clear(g[:n*fi])
	for s := range n {
		nz := compactScalar(d[s*fo:][:fo], vals, idx)
		gs := g[s*fi:][:fi]
		addRowsScalar(gs, w, fi, vals[:nz], idx[:nz])
		for k, v := range a[s*fi:][:fi] {
			if !(v > 0) {
				gs[k] = 0
			}
		}
	}
}

// weightGrad32Scalar writes the gradient of one layer's weights and biases
// into gW (fo×fi) and gb (fo) given the layer's deltas d (n×fo) and inputs
// prev (n×fi), each element the sequential sum over the samples in order
// from +0 (∂/∂b_j = Σ_s δ_sj, ∂/∂W_jk = Σ_s δ_sj·a_sk, every product
// rounded first). Samples with δ_sj = 0 are skipped (they change no bit).
// vals and idx are scratch of length ≥ n.
func weightGrad32Scalar(gW, gb, d, prev []float32, fi int, vals []float32, idx []int32) {
	fo := len(gb)
	n := len(d) / fo
	for j := range fo {
		k := 0
		var sum float32
		for s := range n {
			v := d[s*fo+j]
			sum += v
			if v != 0 {
				vals[k] = v
				idx[k] = int32(s)
				k++
			}
		}
		gb[j] = sum
		row := gW[j*fi:][:fi]
		clear(row)
		addRowsScalar(row, prev, fi, vals[:k], idx[:k])
	}
}

// sqrt32 is the correctly rounded single-precision square root.
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// adamConsts32 are the per-step scalars of the Adam update, computed in
// double (as torch computes them, in Python floats), then rounded to
// float32.
type adamConsts32 struct {
	w1, omw1 float32 // lerp weight 1 − β1 and, for the high branch, 1 − w1 in float32
	w2       float32 // 1 − β2
	b2       float32 // β2
	negStep  float32 // −lr/(1−β1ᵗ)
	bc2Inv   float32 // 1/√(1−β2ᵗ)
	eps      float32
	lerpLow  bool // |w1| < 0.5: torch.lerp's formula switch
}

// adamConstsFor returns the constants of Adam step number step (1-based).
func adamConstsFor(o AdamOptions, step int) adamConsts32 {
	bc1 := 1 - math.Pow(o.Beta1, float64(step))
	bc2 := 1 - math.Pow(o.Beta2, float64(step))
	w1 := float32(1 - o.Beta1) // torch passes 1 − β1 as lerp's weight
	return adamConsts32{
		w1:      w1,
		omw1:    1 - w1,
		w2:      float32(1 - o.Beta2),
		b2:      float32(o.Beta2),
		negStep: float32(-(o.LearningRate / bc1)),
		bc2Inv:  float32(1 / math.Sqrt(bc2)),
		eps:     float32(o.Epsilon),
		lerpLow: math.Abs(float64(w1)) < 0.5,
	}
}

// adamUpdate32Scalar is the elementwise Adam update with the constants of
// one step, operation for operation as torch's single-tensor Adam on
// float32 tensors but for one: torch divides √v by √(1−β2ᵗ), fedcast
// multiplies it by the rounded reciprocal bc2Inv (the two differ in the
// last bit of the denominator at most; it saves one of the three
// divider operations per parameter, about a tenth of a client round):
//
//	m ← lerp(m, g, w1)   v ← v·β2 + (w2·g)·g
//	p ← p + (negStep·m) / (√v · bc2Inv + ε)
//
// Elements with g = m = v = 0 are skipped: their update is p + (−0)/ε = p.
func adamUpdate32Scalar(p, g, m, v []float32, c adamConsts32) {
	w1, omw1, w2, b2 := c.w1, c.omw1, c.w2, c.b2
	negStep, bc2Inv, eps := c.negStep, c.bc2Inv, c.eps
	g = g[:len(p)]
	m = m[:len(p)]
	v = v[:len(p)]
	for i := range p {
		gi, mi, vi := g[i], m[i], v[i]
		if gi == 0 && mi == 0 && vi == 0 {
			continue
		}
		if c.lerpLow {
			mi = mi + float32(w1*(gi-mi))
		} else {
			mi = gi - float32((gi-mi)*omw1)
		}
		vi = float32(vi*b2) + float32(float32(w2*gi)*gi)
		m[i], v[i] = mi, vi
		denom := float32(sqrt32(vi)*bc2Inv) + eps
		p[i] += float32(negStep*mi) / denom
	}
}

// toFloat32 writes float32(src[i]) into dst (round to nearest even).
func toFloat32(dst []float32, src []float64) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float32(v)
	}
}

// toFloat64 writes float64(src[i]) into dst (exact).
func toFloat64(dst []float64, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float64(v)
	}
}
