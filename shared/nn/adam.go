package nn

import "fmt"

// Adam is an Adam optimiser state for gradients computed elsewhere (DP-SGD:
// a noised sum of clipped per-example gradients). Each Step applies exactly
// the update Trainer.Train applies with the same gradient, so training with
// an Adam fed Trainer.Gradient's output reproduces Trainer.Train bit for
// bit. The zero value is not usable: use NewAdam.
type Adam struct {
	opt  AdamOptions
	m, v []float64
	step int
}

// NewAdam returns a fresh optimiser (m = v = 0, no step taken) for n
// parameters. It panics on options Trainer.Train would refuse.
func NewAdam(n int, opt AdamOptions) *Adam {
	return &Adam{opt: opt.withDefaults(), m: make([]float64, n), v: make([]float64, n)}
}

// Steps returns the number of steps taken.
func (a *Adam) Steps() int { return a.step }

// Step applies one Adam step with gradient grad to params in place.
func (a *Adam) Step(params, grad []float64) {
	if len(params) != len(a.m) || len(grad) != len(a.m) {
		panic(fmt.Sprintf("nn: Adam.Step: params %d and grad %d values, optimiser %d", len(params), len(grad), len(a.m)))
	}
	a.step++
	adamStep(params, grad, a.m, a.v, a.opt, a.step)
}
