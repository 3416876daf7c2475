package nn

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// gonumNet is an independent, dense implementation of the same model on
// gonum's BLAS (assembly kernels natively, pure Go in wasm). It serves as the
// oracle for the flat-loop kernels and as the speed comparison in
// BenchmarkClientRound/gonum. It skips nothing and uses the textbook Adam
// formula, so it agrees with Trainer only to rounding.
type gonumNet struct {
	sizes      []int
	wOff, bOff []int
	act, del   [][]float64
	g          []float64
	mom, vel   []float64
	grad       []float64
}

func newGonumNet(m *MLP, n int) *gonumNet {
	r := &gonumNet{sizes: m.Sizes(), wOff: m.wOff, bOff: m.bOff}
	for _, s := range r.sizes {
		r.act = append(r.act, make([]float64, n*s))
		r.del = append(r.del, make([]float64, n*s))
	}
	r.mom = make([]float64, m.NumParams())
	r.vel = make([]float64, m.NumParams())
	r.grad = make([]float64, m.NumParams())
	return r
}

func (r *gonumNet) forward(p, x []float64, n int) []float64 {
	impl := blas64.Implementation()
	L := len(r.sizes) - 1
	copy(r.act[0], x)
	for l := 1; l <= L; l++ {
		fi, fo := r.sizes[l-1], r.sizes[l]
		z := r.act[l][:n*fo]
		b := p[r.bOff[l-1]:][:fo]
		for s := range n {
			copy(z[s*fo:(s+1)*fo], b)
		}
		impl.Dgemm(blas.NoTrans, blas.Trans, n, fo, fi, 1, r.act[l-1], fi, p[r.wOff[l-1]:], fi, 1, z, fo)
		if l < L {
			for i, v := range z {
				z[i] = math.Max(v, 0)
			}
		}
	}
	return r.act[L][:n*r.sizes[L]]
}

func (r *gonumNet) gradient(p, x, y, dst []float64) float64 {
	impl := blas64.Implementation()
	n := len(y) / r.sizes[len(r.sizes)-1]
	out := r.forward(p, x, n)
	L := len(r.sizes) - 1
	loss := 0.0
	for i := range y {
		loss += (out[i] - y[i]) * (out[i] - y[i])
		r.del[L][i] = 2 * (out[i] - y[i]) / float64(len(y))
	}
	clear(dst)
	for l := L; l >= 1; l-- {
		fi, fo := r.sizes[l-1], r.sizes[l]
		d := r.del[l][:n*fo]
		impl.Dgemm(blas.Trans, blas.NoTrans, fo, fi, n, 1, d, fo, r.act[l-1], fi, 0, dst[r.wOff[l-1]:], fi)
		gb := dst[r.bOff[l-1]:][:fo]
		for s := range n {
			for j := range fo {
				gb[j] += d[s*fo+j]
			}
		}
		if l > 1 {
			g := r.del[l-1][:n*fi]
			impl.Dgemm(blas.NoTrans, blas.NoTrans, n, fi, fo, 1, d, fo, p[r.wOff[l-1]:], fi, 0, g, fi)
			for i, a := range r.act[l-1][:n*fi] {
				if a <= 0 {
					g[i] = 0
				}
			}
		}
	}
	return loss / float64(len(y))
}

// train is textbook Adam: m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ), p −= lr·m̂/(√v̂+ε).
func (r *gonumNet) train(p, x, y []float64, steps int, o AdamOptions) float64 {
	o = o.withDefaults()
	clear(r.mom)
	clear(r.vel)
	loss := 0.0
	for t := 1; t <= steps; t++ {
		loss = r.gradient(p, x, y, r.grad)
		bc1 := 1 - math.Pow(o.Beta1, float64(t))
		bc2 := 1 - math.Pow(o.Beta2, float64(t))
		for i, g := range r.grad {
			r.mom[i] = o.Beta1*r.mom[i] + (1-o.Beta1)*g
			r.vel[i] = o.Beta2*r.vel[i] + (1-o.Beta2)*g*g
			p[i] -= o.LearningRate * (r.mom[i] / bc1) / (math.Sqrt(r.vel[i]/bc2) + o.Epsilon)
		}
	}
	return loss
}
