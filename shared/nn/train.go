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

// Trainer evaluates the MSE loss and its gradient and runs Adam for one MLP.
// It owns reusable workspace, sized for the largest batch seen so far, so
// after the first call nothing is allocated. A Trainer is NOT safe for
// concurrent use: give each goroutine its own.
type Trainer struct {
	m    *MLP
	wt   []float64 // transposed weight matrices, same offsets as params' W
	grad []float64 // ∂MSE/∂params for Train
	mom  []float64 // Adam first moment m
	vel  []float64 // Adam second moment v

	cap  int         // batch size the buffers below hold
	act  [][]float64 // act[l]: n×s_l activations after ReLU (l ≥ 1); act[L] = outputs
	del  [][]float64 // del[l]: n×s_l ∂MSE/∂z_l
	vals []float64   // scratch: non-zero values (length max(width, cap))
	idx  []int32     // scratch: their indices

	fm *fmWork // feature-major workspace of the AVX-512 path (train_avx512_amd64.go)
}

// NewTrainer returns a Trainer for m.
func NewTrainer(m *MLP) *Trainer {
	n := m.NumParams()
	L := len(m.sizes) - 1
	return &Trainer{
		m:    m,
		wt:   make([]float64, n),
		grad: make([]float64, n),
		mom:  make([]float64, n),
		vel:  make([]float64, n),
		act:  make([][]float64, L+1),
		del:  make([][]float64, L+1),
	}
}

// reserve makes the per-sample buffers hold n samples.
func (t *Trainer) reserve(n int) {
	if n <= t.cap {
		return
	}
	for l := 1; l < len(t.m.sizes); l++ {
		t.act[l] = make([]float64, n*t.m.sizes[l])
		t.del[l] = make([]float64, n*t.m.sizes[l])
	}
	w := max(t.m.width, n)
	t.vals = make([]float64, w)
	t.idx = make([]int32, w)
	t.cap = n
}

// forward runs the batch through the network (t.wt must hold the transposed
// weights) and returns the MSE against y.
func (t *Trainer) forward(params, x, y []float64, n int) float64 {
	m := t.m
	L := len(m.sizes) - 1
	prev := x
	for l := 1; l <= L; l++ {
		fi, fo := m.sizes[l-1], m.sizes[l]
		wt := t.wt[m.wOff[l-1]:m.bOff[l-1]]
		b := params[m.bOff[l-1]:][:fo]
		cur := t.act[l][:n*fo]
		forwardLayer(cur, prev[:n*fi], wt, b, fi, t.vals, t.idx)
		if l < L {
			relu(cur)
		}
		prev = cur
	}
	out := prev[:len(y)]
	sum := 0.0
	for i, v := range out {
		d := v - y[i]
		sum += float64(d * d)
	}
	return sum / float64(len(y))
}

// backward writes ∂MSE/∂params into dst after forward has run on the same
// batch.
func (t *Trainer) backward(params, x, y, dst []float64, n int) {
	m := t.m
	L := len(m.sizes) - 1
	// ∂MSE/∂ŷ = (2/N)(ŷ − y), N = n·Out, as in torch's mse_loss_backward.
	norm := 2 / float64(len(y))
	dOut := t.del[L][:len(y)]
	for i, v := range t.act[L][:len(y)] {
		dOut[i] = norm * (v - y[i])
	}
	for l := L; l >= 1; l-- {
		fi, fo := m.sizes[l-1], m.sizes[l]
		var prev []float64
		if l == 1 {
			prev = x[:n*fi]
		} else {
			prev = t.act[l-1][:n*fi]
		}
		d := t.del[l][:n*fo]
		gW := dst[m.wOff[l-1]:m.bOff[l-1]]
		gb := dst[m.bOff[l-1]:][:fo]
		weightGrad(gW, gb, d, prev, fi, t.vals, t.idx)
		if l == 1 {
			break
		}
		// δ_{l−1} = (W_lᵀ δ_l) ⊙ 1[a_{l−1} > 0].
		w := params[m.wOff[l-1]:m.bOff[l-1]]
		dp := t.del[l-1][:n*fi]
		backLayer(dp, d, w, prev, fi, t.vals, t.idx)
	}
}

// forwardLayerSparse writes z = a·Wᵀ + b for the n samples of a (n×fi):
// wt is Wᵀ (fi×fo), z is n×fo. Per sample it adds the rows of wt of the
// non-zero inputs (addRows), then the bias.
func forwardLayerSparse(z, a, wt, b []float64, fi int, vals []float64, idx []int32) {
	fo := len(b)
	n := len(a) / fi
	clear(z[:n*fo])
	for s := range n {
		zs := z[s*fo:][:fo]
		nz := compact(a[s*fi:][:fi], vals, idx)
		addRows(zs, wt, fo, vals[:nz], idx[:nz])
	}
	addBias(z[:n*fo], b)
}

// backLayerSparse writes g = d·W for the n samples of d (n×fo): W is fo×fi,
// g is n×fi. Per sample it adds the rows of W of the non-zero deltas.
func backLayerSparse(g, d, w []float64, fi int, vals []float64, idx []int32) {
	fo := len(w) / fi
	n := len(d) / fo
	clear(g[:n*fi])
	for s := range n {
		nz := compact(d[s*fo:][:fo], vals, idx)
		addRows(g[s*fi:][:fi], w, fi, vals[:nz], idx[:nz])
	}
}

func (t *Trainer) prepare(params []float64) {
	m := t.m
	for l := 1; l < len(m.sizes); l++ {
		transpose(t.wt[m.wOff[l-1]:m.bOff[l-1]], params[m.wOff[l-1]:m.bOff[l-1]], m.sizes[l], m.sizes[l-1])
	}
}

// Loss returns the mean squared error of the network on (x, y): the mean over
// samples and outputs of (ŷ − y)², like torch.nn.MSELoss(). x is n×In and y
// n×Out, row-major; n = 0 gives NaN (0/0), as torch does for empty input.
func (t *Trainer) Loss(params, x, y []float64) float64 {
	t.m.checkParams(params)
	n := t.m.checkBatch(x, y, "y")
	t.reserve(n)
	t.prepare(params)
	return t.forward(params, x, y, n)
}

// Gradient writes ∂MSE/∂params into dst (same layout as params) and returns
// the MSE, both for the batch (x, y) as in Loss. ReLU has derivative 0 at 0,
// as in PyTorch.
func (t *Trainer) Gradient(params, x, y, dst []float64) (loss float64) {
	t.m.checkParams(params)
	if len(dst) != len(params) {
		panic(fmt.Sprintf("nn: gradient dst has length %d, want %d", len(dst), len(params)))
	}
	n := t.m.checkBatch(x, y, "y")
	t.reserve(n)
	if w := t.fmReserve(n); w != nil {
		t.fmLoad(w, x, n)
		loss = t.fmForward(w, params, y, n)
		t.fmBackward(w, params, x, y, dst, n)
		return loss
	}
	t.prepare(params)
	loss = t.forward(params, x, y, n)
	t.backward(params, x, y, dst, n)
	return loss
}

// Train runs steps full-batch Adam steps on (x, y) from a fresh Adam state
// (m = v = 0, step count 0), updating params in place, and returns the loss
// evaluated at the start of the last step, i.e. on the parameters the final
// update was computed from (with steps = 0 it returns Loss and changes
// nothing). Step t = 1…steps is torch.optim.Adam's single-tensor step with
// amsgrad=False, weight_decay=0, maximize=False, operation for operation:
//
//	m ← m + (1−β1)(g − m)              (torch.lerp, = β1 m + (1−β1) g)
//	v ← v·β2 + (1−β2)·g·g
//	p ← p + (−lr/(1−β1ᵗ))·m / (√v / √(1−β2ᵗ) + ε)
//
// which is p −= lr·m̂/(√v̂ + ε) with m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ).
func (t *Trainer) Train(params, x, y []float64, steps int, opt AdamOptions) (loss float64) {
	return t.TrainProgress(params, x, y, steps, opt, nil)
}

// TrainProgress is Train that calls progress(step, steps) after each step
// (step = 1…steps) when progress is not nil, so that a user interface can
// show how far local training has come (and, in the browser, yield to the
// page between steps). The result is identical to Train's.
func (t *Trainer) TrainProgress(params, x, y []float64, steps int, opt AdamOptions, progress func(step, steps int)) (loss float64) {
	t.m.checkParams(params)
	if steps < 0 {
		panic(fmt.Sprintf("nn: Train with %d steps", steps))
	}
	o := opt.withDefaults()
	n := t.m.checkBatch(x, y, "y")
	t.reserve(n)
	if steps == 0 {
		t.prepare(params)
		return t.forward(params, x, y, n)
	}
	clear(t.mom)
	clear(t.vel)
	w := t.fmReserve(n)
	if w != nil {
		t.fmLoad(w, x, n)
	}
	for step := 1; step <= steps; step++ {
		if w != nil {
			loss = t.fmForward(w, params, y, n)
			t.fmBackward(w, params, x, y, t.grad, n)
		} else {
			t.prepare(params)
			loss = t.forward(params, x, y, n)
			t.backward(params, x, y, t.grad, n)
		}
		adamStep(params, t.grad, t.mom, t.vel, o, step)
		if progress != nil {
			progress(step, steps)
		}
	}
	return loss
}

// adamConsts are the per-step scalars of torch's Adam update.
type adamConsts struct {
	w1, w2  float64 // 1 − β1 (torch's lerp weight) and 1 − β2
	b2      float64 // β2
	negStep float64 // −lr/(1−β1ᵗ)
	bc2Sqrt float64 // √(1−β2ᵗ)
	eps     float64
	lerpLow bool // |w1| < 0.5: torch.lerp's formula switch
}

// adamStep applies Adam step number step (1-based) to p.
func adamStep(p, g, m, v []float64, o AdamOptions, step int) {
	adamUpdate(p, g[:len(p)], m[:len(p)], v[:len(p)], adamConstsFor(o, step))
}

// adamConstsFor returns the constants of Adam step number step (1-based).
func adamConstsFor(o AdamOptions, step int) adamConsts {
	bc1 := 1 - math.Pow(o.Beta1, float64(step))
	bc2 := 1 - math.Pow(o.Beta2, float64(step))
	w1 := 1 - o.Beta1 // torch passes 1 − β1 as lerp's weight
	return adamConsts{
		w1:      w1,
		w2:      1 - o.Beta2,
		b2:      o.Beta2,
		negStep: -(o.LearningRate / bc1),
		bc2Sqrt: math.Sqrt(bc2),
		eps:     o.Epsilon,
		lerpLow: math.Abs(w1) < 0.5, // torch.lerp switches formula at |weight| = 0.5
	}
}

// adamUpdateScalar is the elementwise Adam update with the constants of one
// step, operation for operation as torch's single-tensor Adam.
func adamUpdateScalar(p, g, m, v []float64, c adamConsts) {
	w1, w2, b2 := c.w1, c.w2, c.b2
	negStep, bc2Sqrt, eps := c.negStep, c.bc2Sqrt, c.eps
	g = g[:len(p)]
	m = m[:len(p)]
	v = v[:len(p)]
	for i := range p {
		gi, mi, vi := g[i], m[i], v[i]
		if gi == 0 && mi == 0 && vi == 0 {
			continue // the update is exactly p + (−0)/ε = p
		}
		if c.lerpLow {
			mi = mi + float64(w1*(gi-mi))
		} else {
			mi = gi - float64((gi-mi)*(1-w1))
		}
		vi = float64(vi*b2) + float64(float64(w2*gi)*gi)
		m[i], v[i] = mi, vi
		denom := math.Sqrt(vi)/bc2Sqrt + eps
		p[i] += float64(negStep*mi) / denom
	}
}
