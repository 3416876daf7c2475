package nn

import "fmt"

// Adam is an Adam optimiser state for gradients computed elsewhere (DP-SGD:
// a noised sum of clipped per-example gradients). Each Step applies exactly
// the update Trainer.Train applies with the same gradient, in float32: the
// parameters and the gradient are rounded to float32, the moments m and v
// are kept in float32 between steps, and params receives the float32
// result (converted exactly to float64). Training with an Adam fed
// Trainer.Gradient's output therefore reproduces Trainer.Train bit for
// bit. The zero value is not usable: use NewAdam.
type Adam struct {
	opt      AdamOptions
	m, v     []float32
	p32, g32 []float32
	step     int
}

// NewAdam returns a fresh optimiser (m = v = 0, no step taken) for n
// parameters. It panics on options Trainer.Train would refuse.
func NewAdam(n int, opt AdamOptions) *Adam {
	return &Adam{
		opt: opt.withDefaults(),
		m:   make([]float32, n), v: make([]float32, n),
		p32: make([]float32, n), g32: make([]float32, n),
	}
}

// Steps returns the number of steps taken.
func (a *Adam) Steps() int { return a.step }

// Step applies one Adam step with gradient grad to params in place.
func (a *Adam) Step(params, grad []float64) {
	if len(params) != len(a.m) || len(grad) != len(a.m) {
		panic(fmt.Sprintf("nn: Adam.Step: params %d and grad %d values, optimiser %d", len(params), len(grad), len(a.m)))
	}
	a.step++
	toFloat32(a.p32, params)
	toFloat32(a.g32, grad)
	adamUpdate32(a.p32, a.g32, a.m, a.v, adamConstsFor(a.opt, a.step))
	toFloat64(params, a.p32)
}
