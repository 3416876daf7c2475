package nn

import (
	"fmt"
	"math"
)

// Per-example gradients for DP-SGD (example-level differential privacy):
// each training sample's gradient is computed on its own, so that it can be
// clipped on its own before any sum. They are built on Trainer.Gradient
// with a batch of one sample, so they share its kernels (and its bits: the
// gradient is computed in float32 and returned as float64) and the
// per-example gradient of sample i is exactly the gradient Gradient returns
// for the batch that holds only sample i. Clipping and sums (ClipExample,
// ClippedGradientSum) are float64, so the sensitivity bound holds exactly.

// ExampleGradients calls fn(i, grad, loss) for every sample i = 0…n−1 of
// (x, y) in order, where grad is the gradient with respect to params of
// that sample's own squared error loss_i = (1/Out)·Σ_j (ŷ_ij − y_ij)² and
// loss its value. The mean of the n per-example gradients is the gradient
// of the batch's MSE (up to rounding). grad is a workspace reused for the
// next sample: fn may modify it but must not retain it. x is n×In, y n×Out.
func (t *Trainer) ExampleGradients(params, x, y []float64, fn func(i int, grad []float64, loss float64)) {
	t.m.checkParams(params)
	n := t.m.checkBatch(x, y, "y")
	in, out := t.m.In(), t.m.Out()
	grad := make([]float64, len(params))
	for i := range n {
		loss := t.Gradient(params, x[i*in:(i+1)*in], y[i*out:(i+1)*out], grad)
		fn(i, grad, loss)
	}
}

// ClipExample scales g in place so that its L2 norm is at most clip, and
// returns its norm before clipping. A gradient already within the bound is
// left unchanged; one with a NaN or ±Inf entry is set to zero (it carries
// no usable direction, and zero is within every bound). The scaled norm
// never exceeds clip: the factor is reduced until the recomputed norm
// fits. clip must be a finite number > 0.
func ClipExample(g []float64, clip float64) (norm float64) {
	if !(clip > 0) || math.IsInf(clip, 0) {
		panic(fmt.Sprintf("nn: ClipExample with clip bound %v", clip))
	}
	norm = l2(g)
	switch {
	case math.IsNaN(norm) || math.IsInf(norm, 0):
		clear(g)
		return norm
	case norm <= clip:
		return norm
	}
	s := clip / norm
	for range 8 {
		for i := range g {
			g[i] *= s
		}
		n2 := l2(g)
		if n2 <= clip {
			return norm
		}
		s = clip / n2 * (1 - 1e-15)
	}
	clear(g) // unreachable for finite input; zero is within the bound
	return norm
}

// ClippedGradientSum adds to sum, for every sample of (x, y), that
// sample's gradient clipped to L2 norm at most clip (ClipExample), and
// returns how many samples were clipped. Each sample changes sum by a
// vector of norm at most clip, whatever its values: that is the
// sensitivity DP-SGD calibrates its noise to. sum must have len(params).
func (t *Trainer) ClippedGradientSum(params, x, y []float64, clip float64, sum []float64) (clipped int) {
	if len(sum) != len(params) {
		panic(fmt.Sprintf("nn: ClippedGradientSum: sum has length %d, want %d", len(sum), len(params)))
	}
	t.ExampleGradients(params, x, y, func(_ int, g []float64, _ float64) {
		if ClipExample(g, clip) > clip {
			clipped++
		}
		for k, v := range g {
			sum[k] += v
		}
	})
	return clipped
}

// l2 is the Euclidean norm of x. The plain sum of squares is used when it
// is a normal finite number; otherwise (overflow, underflow, NaN) the norm
// is recomputed with scaling, so it neither overflows nor underflows for
// any finite x.
func l2(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	if s >= 0x1p-900 && s <= 0x1p900 {
		return math.Sqrt(s)
	}
	scale := 0.0
	for _, v := range x {
		if a := math.Abs(v); a > scale || math.IsNaN(v) {
			scale = a
		}
	}
	if scale == 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return scale
	}
	s = 0
	for _, v := range x {
		r := v / scale
		s += r * r
	}
	return scale * math.Sqrt(s)
}
