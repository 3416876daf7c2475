package nn

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Lipschitz-bounded networks (the DNA seed, Romijnders et al.): a network
// whose every weight matrix has spectral norm ≤ 1 and whose activations
// (ReLU) are 1-Lipschitz is itself 1-Lipschitz in the L2 norm of its
// inputs, whatever its biases. The bound of a network is the product of
// its layers' spectral norms.

// weights returns layer l's weight matrix (0-based l) as a view on params.
func (m *MLP) weights(params []float64, l int) *mat.Dense {
	rows, cols := m.sizes[l+1], m.sizes[l]
	return mat.NewDense(rows, cols, params[m.wOff[l]:m.bOff[l]])
}

// Layers returns the number of weight matrices (layers) of m.
func (m *MLP) Layers() int { return len(m.sizes) - 1 }

// SpectralNorms returns the exact spectral norm (largest singular value,
// from a full SVD) of every weight matrix in params, first layer first.
func (m *MLP) SpectralNorms(params []float64) []float64 {
	m.checkParams(params)
	out := make([]float64, m.Layers())
	for l := range out {
		out[l] = spectralNorm(m.weights(params, l))
	}
	return out
}

func spectralNorm(w *mat.Dense) float64 {
	var svd mat.SVD
	if !svd.Factorize(w, mat.SVDNone) {
		panic("nn: SVD did not converge")
	}
	s := svd.Values(nil)
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

// LipschitzBound returns Π_l ‖W_l‖₂, an upper bound on the network's
// Lipschitz constant (L2 in, absolute value out) for ReLU activations.
func (m *MLP) LipschitzBound(params []float64) float64 {
	b := 1.0
	for _, s := range m.SpectralNorms(params) {
		b *= s
	}
	return b
}

// projectionSlack is the factor by which a projected layer is divided
// beyond its norm, so that float64 rounding of the scaled entries can never
// leave a norm just above 1.
const projectionSlack = 1 + 1e-12

// ProjectSpectral scales, in place, every weight matrix of params whose
// exact spectral norm exceeds 1 by 1/‖W‖₂ (times a tiny slack), so that
// every layer's spectral norm is at most 1 afterwards; biases are left
// alone. It is deterministic post-processing (the same bits for the same
// params on every platform that computes the SVD alike), done by every
// LHA and the coordinator on a released model. It returns the norms found
// before the projection.
func (m *MLP) ProjectSpectral(params []float64) []float64 {
	norms := m.SpectralNorms(params)
	for l, s := range norms {
		if s <= 1 {
			continue
		}
		w := params[m.wOff[l]:m.bOff[l]]
		k := 1 / (s * projectionSlack)
		for i := range w {
			w[i] *= k
		}
	}
	return norms
}

// PowerIteration estimates the spectral norm of layer l's weight matrix by
// iters steps of the power method started from u (length s_{l+1}, updated
// in place so that successive training steps continue where the last one
// stopped, as in spectral normalisation). The estimate is a lower bound
// of the exact norm up to rounding; use ProjectSpectral on a released
// model.
func (m *MLP) PowerIteration(params []float64, l int, u []float64, iters int) float64 {
	m.checkParams(params)
	if l < 0 || l >= m.Layers() || len(u) != m.sizes[l+1] {
		panic(fmt.Sprintf("nn: PowerIteration: layer %d or u length %d out of range", l, len(u)))
	}
	w := m.weights(params, l)
	uv := mat.NewVecDense(len(u), u)
	if mat.Norm(uv, 2) == 0 {
		for i := range u {
			u[i] = 1
		}
	}
	v := mat.NewVecDense(m.sizes[l], nil)
	sigma := 0.0
	for range max(iters, 1) {
		v.MulVec(w.T(), uv)
		nv := mat.Norm(v, 2)
		if nv == 0 {
			return 0
		}
		v.ScaleVec(1/nv, v)
		uv.MulVec(w, v)
		sigma = mat.Norm(uv, 2)
		if sigma == 0 {
			return 0
		}
		uv.ScaleVec(1/sigma, uv)
	}
	return sigma
}

// NormalizeSpectral is one step of spectral normalisation for training:
// every layer whose power-iteration estimate (iters steps, continuing from
// us[l]) exceeds 1 is divided by that estimate. us holds one vector per
// layer (nil entries are allocated). It keeps the network close to
// 1-Lipschitz while it learns; the exact guarantee comes from
// ProjectSpectral.
func (m *MLP) NormalizeSpectral(params []float64, us [][]float64, iters int) {
	for l := range m.Layers() {
		if us[l] == nil {
			us[l] = make([]float64, m.sizes[l+1])
		}
		s := m.PowerIteration(params, l, us[l], iters)
		if s > 1 && !math.IsInf(s, 0) {
			w := params[m.wOff[l]:m.bOff[l]]
			for i := range w {
				w[i] /= s
			}
		}
	}
}

// TrainSpectral is Train with spectral normalisation after every Adam step
// (Miyato et al.): each layer whose power-iteration estimate (iters steps
// per Adam step, continuing from the last step's vector) exceeds 1 is
// divided by it, so that the network stays near 1-Lipschitz while it
// learns. It returns the loss as Train does. The exact guarantee of a
// released model comes from ProjectSpectral.
func (t *Trainer) TrainSpectral(params, x, y []float64, steps int, opt AdamOptions, iters int) (loss float64) {
	if steps < 1 {
		panic(fmt.Sprintf("nn: TrainSpectral with %d steps", steps))
	}
	buf := make([]float64, t.m.n)
	us := make([][]float64, t.m.Layers())
	return t.train(params, x, y, steps, opt, nil, func() {
		toFloat64(buf, t.p32)
		for l := range t.m.Layers() {
			if us[l] == nil {
				us[l] = make([]float64, t.m.sizes[l+1])
			}
			if s := t.m.PowerIteration(buf, l, us[l], iters); s > 1 && !math.IsInf(s, 0) {
				k := float32(1 / s)
				for i := t.m.wOff[l]; i < t.m.bOff[l]; i++ {
					t.p32[i] *= k
				}
			}
		}
	})
}
