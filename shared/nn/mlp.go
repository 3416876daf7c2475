package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MLP describes a fully connected network with ReLU after every hidden layer
// and a linear output layer. It holds only the shape: the parameters live in a
// caller-owned flat []float64 (see the package documentation for the layout),
// so one MLP can be shared by any number of goroutines.
type MLP struct {
	sizes []int
	wOff  []int // wOff[l]: offset of W_{l+1} (layer l+1, 0-based l) in params
	bOff  []int // bOff[l]: offset of b_{l+1}
	n     int   // number of parameters
	width int   // widest layer, input included
}

// NewMLP returns the network with layer widths sizes[0] (inputs) …
// sizes[len-1] (outputs), e.g. NewMLP(10, 128, 64, 32, 1). It panics if fewer
// than two sizes are given or a size is below 1.
func NewMLP(sizes ...int) *MLP {
	if len(sizes) < 2 {
		panic(fmt.Sprintf("nn: NewMLP needs at least 2 sizes, got %d", len(sizes)))
	}
	m := &MLP{sizes: append([]int(nil), sizes...)}
	for i, s := range sizes {
		if s < 1 {
			panic(fmt.Sprintf("nn: layer size %d at position %d is below 1", s, i))
		}
		m.width = max(m.width, s)
	}
	for l := 1; l < len(sizes); l++ {
		m.wOff = append(m.wOff, m.n)
		m.n += sizes[l] * sizes[l-1]
		m.bOff = append(m.bOff, m.n)
		m.n += sizes[l]
	}
	return m
}

// Sizes returns a copy of the layer widths, input first.
func (m *MLP) Sizes() []int { return append([]int(nil), m.sizes...) }

// NumParams returns the length of the flat parameter vector:
// Σ_l s_l·(s_{l−1}+1), 11 777 for 10-128-64-32-1.
func (m *MLP) NumParams() int { return m.n }

// In returns the number of inputs per sample.
func (m *MLP) In() int { return m.sizes[0] }

// Out returns the number of outputs per sample.
func (m *MLP) Out() int { return m.sizes[len(m.sizes)-1] }

func (m *MLP) checkParams(params []float64) {
	if len(params) != m.n {
		panic(fmt.Sprintf("nn: params has length %d, want %d", len(params), m.n))
	}
}

// checkBatch returns the number of samples in x and panics unless x holds a
// whole number of samples and dst (dst may stand for y) holds n×Out values.
func (m *MLP) checkBatch(x, dst []float64, name string) int {
	in, out := m.In(), m.Out()
	if len(x)%in != 0 {
		panic(fmt.Sprintf("nn: x has length %d, not a multiple of %d inputs", len(x), in))
	}
	n := len(x) / in
	if len(dst) != n*out {
		panic(fmt.Sprintf("nn: %s has length %d, want %d (%d samples × %d outputs)", name, len(dst), n*out, n, out))
	}
	return n
}

// Init writes PyTorch's default nn.Linear initialisation into dst: every
// weight and bias of layer l is drawn independently from U(−1/√fan_in,
// 1/√fan_in) with fan_in = s_{l−1}. Draws follow the parameter layout order.
func (m *MLP) Init(dst []float64, rng *rand.Rand) {
	m.checkParams(dst)
	if rng == nil {
		panic("nn: Init needs a non-nil *rand.Rand")
	}
	for l := 1; l < len(m.sizes); l++ {
		bound := 1 / math.Sqrt(float64(m.sizes[l-1]))
		end := m.bOff[l-1] + m.sizes[l]
		for i := m.wOff[l-1]; i < end; i++ {
			dst[i] = (2*rng.Float64() - 1) * bound
		}
	}
}

// Predict writes the network's outputs for the n samples of x (n×In,
// row-major) into dst (n×Out, row-major). It allocates nothing for networks
// up to 256 units wide (with GOEXPERIMENT=simd, batches of 4 or more use a
// pooled workspace instead, reallocated only after a garbage collection
// empties the pool). It computes in float64 (every sum sequential, no fused
// multiply-add, the same bits on every platform and kernel set), while the
// Trainer computes in float32: the two agree to float32 accuracy, not bit
// for bit.
func (m *MLP) Predict(params, x, dst []float64) {
	m.checkParams(params)
	n := m.checkBatch(x, dst, "dst")
	if predictFast(m, params, x, dst, n) {
		return
	}
	var stack [3 * 256]float64
	var istack [256]int32
	var buf []float64
	var idx []int32
	if m.width <= 256 {
		buf, idx = stack[:3*m.width], istack[:m.width]
	} else {
		buf, idx = make([]float64, 3*m.width), make([]int32, m.width)
	}
	cur, next, vals := buf[:m.width], buf[m.width:2*m.width], buf[2*m.width:]
	in, out := m.In(), m.Out()
	L := len(m.sizes) - 1
	for s := range n {
		copy(cur, x[s*in:(s+1)*in])
		for l := 1; l <= L; l++ {
			fi, fo := m.sizes[l-1], m.sizes[l]
			nz := compact(cur[:fi], vals, idx)
			z := next[:fo]
			forwardGather(z, params[m.wOff[l-1]:m.bOff[l-1]], params[m.bOff[l-1]:][:fo], fi, vals[:nz], idx[:nz])
			if l < L {
				relu(z)
			}
			cur, next = next, cur
		}
		copy(dst[s*out:(s+1)*out], cur[:out])
	}
}
