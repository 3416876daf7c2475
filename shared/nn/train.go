package nn

import (
	"fmt"
	"math"
)

// AdamOptions configures Trainer.Train. A zero field means its default.
type AdamOptions struct {
	LearningRate float64 // step size lr. Defaults to 0.001.
	Beta1        float64 // first-moment decay β1 in (0, 1). Defaults to 0.9.
	Beta2        float64 // second-moment decay β2 in (0, 1). Defaults to 0.999.
	Epsilon      float64 // ε added to √v̂. Defaults to 1e-8.
}

// withDefaults fills zero fields and panics on values torch.optim.Adam
// rejects (and on NaN or ±Inf).
func (o AdamOptions) withDefaults() AdamOptions {
	if o.LearningRate == 0 {
		o.LearningRate = 0.001
	}
	if o.Beta1 == 0 {
		o.Beta1 = 0.9
	}
	if o.Beta2 == 0 {
		o.Beta2 = 0.999
	}
	if o.Epsilon == 0 {
		o.Epsilon = 1e-8
	}
	if !(o.LearningRate > 0) || math.IsInf(o.LearningRate, 0) {
		panic(fmt.Sprintf("nn: Adam learning rate %v is not a positive finite number", o.LearningRate))
	}
	if !(o.Beta1 > 0 && o.Beta1 < 1) || !(o.Beta2 > 0 && o.Beta2 < 1) {
		panic(fmt.Sprintf("nn: Adam betas (%v, %v) must lie in (0, 1)", o.Beta1, o.Beta2))
	}
	if !(o.Epsilon > 0) || math.IsInf(o.Epsilon, 0) {
		panic(fmt.Sprintf("nn: Adam epsilon %v is not a positive finite number", o.Epsilon))
	}
	return o
}

// Trainer evaluates the MSE loss and its gradient and runs Adam for one MLP,
// in float32: each call converts the parameters and the batch to float32
// once, computes in single precision (forward pass, back-propagation,
// gradients, Adam's moments and update) and converts the results back to
// float64 (exactly). It owns reusable workspace, sized for the largest
// batch seen so far, so after the first call nothing is allocated. A
// Trainer is NOT safe for concurrent use: give each goroutine its own.
type Trainer struct {
	m    *MLP
	p32  []float32 // the parameters in float32
	wt   []float32 // transposed weight matrices, same offsets as params' W
	grad []float32 // ∂MSE/∂params
	mom  []float32 // Adam first moment m
	vel  []float32 // Adam second moment v

	cap  int         // batch size the buffers below hold
	x32  []float32   // the batch's inputs, n×s_0
	y32  []float32   // its targets, n×s_L
	act  [][]float32 // act[l]: n×s_l activations after ReLU (l ≥ 1); act[L] = outputs
	del  [][]float32 // del[l]: n×s_l ∂MSE/∂z_l
	vals []float32   // scratch: non-zero values (length max(width, cap))
	idx  []int32     // scratch: their indices

	fm *fmWork // feature-major workspace of the AVX-512 path (train_avx512_amd64.go)

	loss   Loss      // the loss minimised (SquaredError unless SetLoss)
	levels []float32 // Pinball's level of each output (SetPinball)
}

// Loss names the loss a Trainer minimises, averaged over samples and
// outputs.
type Loss int

const (
	// SquaredError is (ŷ − y)², torch.nn.MSELoss (the default).
	SquaredError Loss = iota
	// AbsoluteError is |ŷ − y|, torch.nn.L1Loss: the pinball loss at level
	// ½ times 2, whose minimiser is the median of y instead of its mean.
	// Its derivative is sign(ŷ − y), 0 at ŷ = y as in torch.
	AbsoluteError
	// Pinball is the quantile loss ρ_τ(y − ŷ) = max(τ·(y − ŷ), (τ − 1)·(y − ŷ))
	// at each output's own level τ (SetPinball): output j learns the τ_j
	// quantile of y. Its derivative in ŷ is 1 − τ above y, −τ below and
	// 0 at ŷ = y. At τ = ½ it is half the absolute error.
	Pinball
)

// SetPinball makes the Trainer minimise the pinball loss with output j at
// level levels[j] (each in (0, 1); one level per output).
func (t *Trainer) SetPinball(levels []float64) {
	if len(levels) != t.m.Out() {
		panic(fmt.Sprintf("nn: %d pinball levels for %d outputs", len(levels), t.m.Out()))
	}
	t.levels = make([]float32, len(levels))
	for j, tau := range levels {
		if !(tau > 0 && tau < 1) {
			panic(fmt.Sprintf("nn: pinball level %v (want 0 < τ < 1)", tau))
		}
		t.levels[j] = float32(tau)
	}
	t.loss = Pinball
}

// SetLoss makes the Trainer minimise l from its next call on (Loss,
// Gradient, Train and their variants). Every kernel set computes the same
// bits for every loss: the AVX-512 feature-major pass back-propagates
// through backward, which applies the loss, and step recomputes the
// reported loss from the sample-major outputs.
func (t *Trainer) SetLoss(l Loss) {
	if l == Pinball {
		panic("nn: the pinball loss needs its levels: use SetPinball")
	}
	if l != SquaredError && l != AbsoluteError {
		panic(fmt.Sprintf("nn: unknown loss %d", l))
	}
	t.loss = l
}

// NewTrainer returns a Trainer for m.
func NewTrainer(m *MLP) *Trainer {
	n := m.NumParams()
	L := len(m.sizes) - 1
	return &Trainer{
		m:    m,
		p32:  make([]float32, n),
		wt:   make([]float32, n),
		grad: make([]float32, n),
		mom:  make([]float32, n),
		vel:  make([]float32, n),
		act:  make([][]float32, L+1),
		del:  make([][]float32, L+1),
	}
}

// reserve makes the per-sample buffers hold n samples.
func (t *Trainer) reserve(n int) {
	if n <= t.cap {
		return
	}
	t.x32 = make([]float32, n*t.m.In())
	t.y32 = make([]float32, n*t.m.Out())
	for l := 1; l < len(t.m.sizes); l++ {
		t.act[l] = make([]float32, n*t.m.sizes[l])
		t.del[l] = make([]float32, n*t.m.sizes[l])
	}
	w := max(t.m.width, n)
	t.vals = make([]float32, w)
	t.idx = make([]int32, w)
	t.cap = n
}

// load converts params and the batch (x, y) of n samples to float32.
func (t *Trainer) load(params, x, y []float64, n int) {
	toFloat32(t.p32, params)
	toFloat32(t.x32[:n*t.m.In()], x)
	toFloat32(t.y32[:n*t.m.Out()], y)
}

// sqErr returns the mean of (out − y)² over len(y) values: each difference
// is a float32 operation, its square (exact in float64) is summed in
// float64 in index order. get(i) returns output value i.
func sqErr(y []float32, get func(i int) float32) float64 {
	sum := 0.0
	for i, yi := range y {
		d := float64(get(i) - yi)
		sum += d * d
	}
	return sum / float64(len(y))
}

// pinball returns the mean of ρ_τ(y − out) over len(y) values (τ the
// level of the value's output), summed in float64 in index order.
func pinball(y []float32, levels []float32, get func(i int) float32) float64 {
	sum := 0.0
	out := len(levels)
	for i, yi := range y {
		u := float64(yi - get(i))
		tau := float64(levels[i%out])
		if u >= 0 {
			sum += tau * u
		} else {
			sum += (tau - 1) * u
		}
	}
	return sum / float64(len(y))
}

// absErr returns the mean of |out − y| over len(y) values, summed in
// float64 in index order like sqErr.
func absErr(y []float32, get func(i int) float32) float64 {
	sum := 0.0
	for i, yi := range y {
		sum += math.Abs(float64(get(i) - yi))
	}
	return sum / float64(len(y))
}

// forward runs the batch (t.x32) through the network with parameters t.p32
// (t.wt must hold the transposed weights) and returns the loss (the MSE
// unless SetLoss) against t.y32.
func (t *Trainer) forward(n int) float64 {
	m := t.m
	L := len(m.sizes) - 1
	prev := t.x32[:n*m.In()]
	for l := 1; l <= L; l++ {
		fi, fo := m.sizes[l-1], m.sizes[l]
		wt := t.wt[m.wOff[l-1]:m.bOff[l-1]]
		b := t.p32[m.bOff[l-1]:][:fo]
		cur := t.act[l][:n*fo]
		forwardLayer32(cur, prev[:n*fi], wt, b, fi, t.vals, t.idx, l < L)
		prev = cur
	}
	return t.outputLoss(n)
}

// outputLoss is the loss of the outputs t.act[L] (sample-major) against
// t.y32.
func (t *Trainer) outputLoss(n int) float64 {
	y := t.y32[:n*t.m.Out()]
	out := t.act[len(t.m.sizes)-1]
	switch t.loss {
	case AbsoluteError:
		return absErr(y, func(i int) float32 { return out[i] })
	case Pinball:
		return pinball(y, t.levels, func(i int) float32 { return out[i] })
	}
	return sqErr(y, func(i int) float32 { return out[i] })
}

// backward writes ∂MSE/∂params into t.grad after forward has run on the
// same batch.
func (t *Trainer) backward(n int) {
	m := t.m
	L := len(m.sizes) - 1
	y := t.y32[:n*m.Out()]
	// ∂MSE/∂ŷ = (2/N)(ŷ − y), N = n·Out, as in torch's mse_loss_backward.
	norm := float32(2 / float64(len(y)))
	dOut := t.del[L][:len(y)]
	switch t.loss {
	case Pinball:
		// ∂ρ_τ(y − ŷ)/∂ŷ / N = (1 − τ)/N above y, −τ/N below.
		inv := float32(1 / float64(len(y)))
		out := len(t.levels)
		for i, v := range t.act[L][:len(y)] {
			dOut[i] = 0
			if v > y[i] {
				dOut[i] = (1 - t.levels[i%out]) * inv
			} else if v < y[i] {
				dOut[i] = -t.levels[i%out] * inv
			}
		}
	case AbsoluteError:
		// ∂|ŷ − y|/∂ŷ / N = sign(ŷ − y)/N.
		inv := float32(1 / float64(len(y)))
		for i, v := range t.act[L][:len(y)] {
			dOut[i] = 0
			if v > y[i] {
				dOut[i] = inv
			} else if v < y[i] {
				dOut[i] = -inv
			}
		}
	default:
		for i, v := range t.act[L][:len(y)] {
			dOut[i] = norm * (v - y[i])
		}
	}
	for l := L; l >= 1; l-- {
		fi, fo := m.sizes[l-1], m.sizes[l]
		var prev []float32
		if l == 1 {
			prev = t.x32[:n*fi]
		} else {
			prev = t.act[l-1][:n*fi]
		}
		d := t.del[l][:n*fo]
		gW := t.grad[m.wOff[l-1]:m.bOff[l-1]]
		gb := t.grad[m.bOff[l-1]:][:fo]
		weightGrad32(gW, gb, d, prev, fi, t.vals, t.idx)
		if l == 1 {
			break
		}
		// δ_{l−1} = (W_lᵀ δ_l) ⊙ 1[a_{l−1} > 0].
		w := t.p32[m.wOff[l-1]:m.bOff[l-1]]
		backLayer32(t.del[l-1][:n*fi], d, w, prev, fi, t.vals, t.idx)
	}
}

// prepare writes the transposed weights of t.p32 into t.wt.
func (t *Trainer) prepare() {
	m := t.m
	for l := 1; l < len(m.sizes); l++ {
		transposeScalar(t.wt[m.wOff[l-1]:m.bOff[l-1]], t.p32[m.wOff[l-1]:m.bOff[l-1]], m.sizes[l], m.sizes[l-1])
	}
}

// step runs one forward and backward pass of the loaded batch (t.grad
// receives the gradient) and returns the loss.
func (t *Trainer) step(w *fmWork, n int) float64 {
	if w != nil {
		loss := t.fmForward(w, n) // the squared error
		t.fmBackward(w, n)        // copies the outputs into t.act
		if t.loss != SquaredError {
			loss = t.outputLoss(n)
		}
		return loss
	}
	t.prepare()
	loss := t.forward(n)
	t.backward(n)
	return loss
}

// Loss returns the mean squared error of the network on (x, y): the mean over
// samples and outputs of (ŷ − y)², like torch.nn.MSELoss(), with the
// network evaluated in float32 as Train does (MLP.Predict evaluates it in
// float64). x is n×In and y n×Out, row-major; n = 0 gives NaN (0/0), as
// torch does for empty input.
func (t *Trainer) Loss(params, x, y []float64) float64 {
	t.m.checkParams(params)
	n := t.m.checkBatch(x, y, "y")
	t.reserve(n)
	t.load(params, x, y, n)
	t.prepare()
	return t.forward(n)
}

// Gradient writes ∂MSE/∂params into dst (same layout as params) and returns
// the MSE, both for the batch (x, y) as in Loss and computed in float32 as
// Train computes them. ReLU has derivative 0 at 0, as in PyTorch.
func (t *Trainer) Gradient(params, x, y, dst []float64) (loss float64) {
	t.m.checkParams(params)
	if len(dst) != len(params) {
		panic(fmt.Sprintf("nn: gradient dst has length %d, want %d", len(dst), len(params)))
	}
	n := t.m.checkBatch(x, y, "y")
	t.reserve(n)
	t.load(params, x, y, n)
	w := t.fmReserve(n)
	if w != nil {
		t.fmLoad(w, n)
	}
	loss = t.step(w, n)
	toFloat64(dst, t.grad)
	return loss
}

// Train runs steps full-batch Adam steps on (x, y) from a fresh Adam state
// (m = v = 0, step count 0), updating params in place, and returns the loss
// evaluated at the start of the last step, i.e. on the parameters the final
// update was computed from (with steps = 0 it returns Loss and changes
// nothing). Step t = 1…steps is torch.optim.Adam's single-tensor step with
// amsgrad=False, weight_decay=0, maximize=False, operation for operation
// but for the one multiplication by the rounded reciprocal of √(1−β2ᵗ)
// where torch divides by it (see the package documentation):
//
//	m ← m + (1−β1)(g − m)              (torch.lerp, = β1 m + (1−β1) g)
//	v ← v·β2 + (1−β2)·g·g
//	p ← p + (−lr/(1−β1ᵗ))·m / (√v · (1/√(1−β2ᵗ)) + ε)
//
// which is p −= lr·m̂/(√v̂ + ε) with m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ). All of
// it runs in float32, as torch does for float32 tensors (the constants are
// computed in float64 and rounded to float32, as torch rounds Python
// floats): params is rounded to float32 once at the start, m and v are
// float32, and params receives float64(p32) at the end, so after a Train
// with steps ≥ 1 every parameter is a float32 value.
func (t *Trainer) Train(params, x, y []float64, steps int, opt AdamOptions) (loss float64) {
	return t.TrainProgress(params, x, y, steps, opt, nil)
}

// TrainProgress is Train that calls progress(step, steps) after each step
// (step = 1…steps) when progress is not nil, so that a user interface can
// show how far local training has come (and, in the browser, yield to the
// page between steps). The result is identical to Train's.
func (t *Trainer) TrainProgress(params, x, y []float64, steps int, opt AdamOptions, progress func(step, steps int)) (loss float64) {
	return t.train(params, x, y, steps, opt, progress, nil)
}

// train is TrainProgress that calls after() after each Adam update, before
// progress, when after is not nil (TrainSpectral's constraint on t.p32).
func (t *Trainer) train(params, x, y []float64, steps int, opt AdamOptions, progress func(step, steps int), after func()) (loss float64) {
	t.m.checkParams(params)
	if steps < 0 {
		panic(fmt.Sprintf("nn: Train with %d steps", steps))
	}
	o := opt.withDefaults()
	n := t.m.checkBatch(x, y, "y")
	t.reserve(n)
	t.load(params, x, y, n)
	if steps == 0 {
		t.prepare()
		return t.forward(n)
	}
	clear(t.mom)
	clear(t.vel)
	w := t.fmReserve(n)
	if w != nil {
		t.fmLoad(w, n)
	}
	for step := 1; step <= steps; step++ {
		loss = t.step(w, n)
		adamUpdate32(t.p32, t.grad, t.mom, t.vel, adamConstsFor(o, step))
		if after != nil {
			after()
		}
		if progress != nil {
			progress(step, steps)
		}
	}
	toFloat64(params, t.p32)
	return loss
}
