package nn

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// problem returns random params (PyTorch init) and n samples with standard
// normal inputs and targets, so ReLU kinks (z exactly 0) are hit with
// probability zero and finite differences of size 1e-6 cross one rarely.
func problem(seed uint64, n int, sizes ...int) (*MLP, []float64, []float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	m := NewMLP(sizes...)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	x := make([]float64, n*m.In())
	y := make([]float64, n*m.Out())
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	return m, p, x, y
}

func relErr(got, want, floor float64) float64 {
	return math.Abs(got-want) / math.Max(math.Max(math.Abs(got), math.Abs(want)), floor)
}

func TestNumParams(t *testing.T) {
	for _, c := range []struct {
		sizes []int
		want  int
	}{
		{[]int{10, 128, 64, 32, 1}, 11777},
		{[]int{2, 3, 1}, 13},
		{[]int{1, 1}, 2},
		{[]int{7, 14, 2}, 7*14 + 14 + 14*2 + 2},
	} {
		if got := NewMLP(c.sizes...).NumParams(); got != c.want {
			t.Errorf("NewMLP(%v).NumParams() = %d, want %d", c.sizes, got, c.want)
		}
	}
	s := NewMLP(3, 4, 1).Sizes()
	s[0] = 99
	if NewMLP(3, 4, 1).Sizes()[0] != 3 {
		t.Error("Sizes must return a copy")
	}
}

// TestGradientFiniteDifference compares the float64 reference gradient
// (reference_test.go) with central differences of the float64 reference
// loss, (L(p+h e_i) − L(p−h e_i))/2h, h = 1e-6·max(1,|p_i|): truncation
// error O(h²·L”') and rounding about ε_mach·L/h ≈ 2e-10·L, so it allows
// |g − num| ≤ 1e-5·max(|g|,|num|) + 1e-8·L. It then checks the Trainer's
// float32 gradient against the same reference: |g32 − g| ≤ 1e-4·|g| +
// 1e-5·max|g| (float32 carries 6e-8 relative per operation; sums of terms
// of both signs lose relative accuracy in small components). Loose for a
// correct gradient, yet a missing factor or a wrong index fails by orders.
func TestGradientFiniteDifference(t *testing.T) {
	for _, c := range []struct {
		name  string
		sizes []int
		n     int
		every int // check every k-th parameter (all of them for small nets)
	}{
		{"2-3-1", []int{2, 3, 1}, 4, 1},
		{"3-5-4-2", []int{3, 5, 4, 2}, 7, 1},
		{"10-128-64-32-1", []int{10, 128, 64, 32, 1}, 13, 7},
		{"one sample", []int{4, 6, 1}, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, p, x, y := problem(3, c.n, c.sizes...)
			tr := NewTrainer(m)
			ref := newGonumNet(m, c.n)
			g32 := make([]float64, len(p))
			loss32 := tr.Gradient(p, x, y, g32)
			if l := tr.Loss(p, x, y); l != loss32 {
				t.Fatalf("Gradient loss %v != Loss %v", loss32, l)
			}
			g := make([]float64, len(p))
			loss := ref.gradient(p, x, y, g)
			if e := relErr(loss32, loss, 0); e > 1e-5 {
				t.Errorf("float32 loss %v, float64 reference %v (rel err %.2g)", loss32, loss, e)
			}
			mse := func() float64 {
				out := ref.forward(p, x, c.n)
				s := 0.0
				for i, v := range out {
					s += (v - y[i]) * (v - y[i])
				}
				return s / float64(len(out))
			}
			gmax := 0.0
			for _, v := range g {
				gmax = math.Max(gmax, math.Abs(v))
			}
			bad, bad32 := 0, 0
			for i := 0; i < len(p); i += c.every {
				if d := math.Abs(g32[i] - g[i]); d > 1e-4*math.Abs(g[i])+1e-5*gmax {
					bad32++
					if bad32 < 5 {
						t.Errorf("param %d: float32 Gradient %.10g, float64 reference %.10g", i, g32[i], g[i])
					}
				}
				old := p[i]
				h := 1e-6 * math.Max(1, math.Abs(old))
				p[i] = old + h
				lp := mse()
				p[i] = old - h
				lm := mse()
				p[i] = old
				num := (lp - lm) / (2 * h)
				if d := math.Abs(g[i] - num); d > 1e-5*math.Max(math.Abs(g[i]), math.Abs(num))+1e-8*loss {
					e := relErr(g[i], num, 0)
					bad++
					if bad < 5 {
						t.Errorf("param %d: reference gradient %.10g, finite difference %.10g (rel err %.2g)", i, g[i], num, e)
					}
				}
			}
			if bad > 0 || bad32 > 0 {
				t.Errorf("%d parameters disagree with the finite differences, %d float32 gradients with the reference", bad, bad32)
			}
		})
	}
}

// TestAgreesWithGonum checks the float32 Trainer against the dense float64
// gonum BLAS implementation in reference_test.go: loss to 1e-5 relative,
// every gradient component to 1e-5·max|g| (float32 rounds at 6e-8 relative
// per operation; sums of terms of both signs lose relative accuracy in
// small components, whatever the order), and after 30 Adam steps the loss
// to 1e-4 relative and every parameter to 1e-4 relative or 1e-4·lr·30
// absolute for parameters near zero (Adam's normalised step lr·m̂/√v̂
// amplifies the relative error of tiny gradients, but never moves a
// parameter by more than about lr per step).
func TestAgreesWithGonum(t *testing.T) {
	for _, c := range []struct {
		name  string
		sizes []int
		n     int
		scale float64 // input scale: 100 mimics raw case counts
	}{
		{"small", []int{3, 5, 4, 2}, 9, 1},
		{"full normal inputs", []int{10, 128, 64, 32, 1}, 13, 1},
		{"full count-sized inputs", []int{10, 128, 64, 32, 1}, 12, 100},
		{"wide batch", []int{10, 128, 64, 32, 1}, 40, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, p, x, y := problem(11, c.n, c.sizes...)
			for i := range x {
				x[i] *= c.scale
			}
			for i := range y {
				y[i] *= c.scale
			}
			ref := newGonumNet(m, c.n)
			g1 := make([]float64, len(p))
			g2 := make([]float64, len(p))
			l1 := NewTrainer(m).Gradient(p, x, y, g1)
			l2 := ref.gradient(p, x, y, g2)
			if e := relErr(l1, l2, 0); e > 1e-5 {
				t.Errorf("loss %v vs gonum %v (rel %.2g)", l1, l2, e)
			}
			gmax := 0.0
			for _, v := range g2 {
				gmax = math.Max(gmax, math.Abs(v))
			}
			for i := range g1 {
				if e := math.Abs(g1[i]-g2[i]) / gmax; e > 1e-5 {
					t.Fatalf("gradient[%d] = %v, gonum %v (rel %.2g)", i, g1[i], g2[i], e)
				}
			}
			p1 := append([]float64(nil), p...)
			p2 := append([]float64(nil), p...)
			l1 = NewTrainer(m).Train(p1, x, y, 30, AdamOptions{})
			l2 = ref.train(p2, x, y, 30, AdamOptions{})
			if e := relErr(l1, l2, 0); e > 1e-4 {
				t.Errorf("Train loss %v vs gonum %v (rel %.2g)", l1, l2, e)
			}
			for i := range p1 {
				if e := relErr(p1[i], p2[i], 30*0.001); e > 1e-4 {
					t.Fatalf("after Train param[%d] = %v, gonum %v (rel %.2g)", i, p1[i], p2[i], e)
				}
			}
		})
	}
}

// TestAdamOneStepByHand works a 2-3-1 network through one Adam step.
//
// Parameters: W1 = [[1, −1], [0.5, 0.5], [−2, 1]], b1 = [0, 0.1, 0],
// W2 = [[1, 2, −1]], b2 = 0.5. One sample x = (1, 2), target y = 0.
//
//	z1 = W1 x + b1 = (1−2, 0.5+1+0.1, −2+2) = (−1, 1.6, 0);  a1 = relu(z1) = (0, 1.6, 0)
//	ŷ  = W2 a1 + b2 = 2·1.6 + 0.5 = 3.7;  loss = 3.7² = 13.69
//	δ2 = 2(ŷ−y)/1 = 7.4:  ∂W2 = δ2·a1 = (0, 11.84, 0), ∂b2 = 7.4
//	W2ᵀδ2 = (7.4, 14.8, −7.4), masked by a1 > 0 (ReLU'(0) = 0): δ1 = (0, 14.8, 0)
//	∂W1 = δ1 xᵀ = [[0, 0], [14.8, 29.6], [0, 0]], ∂b1 = (0, 14.8, 0)
//
// Adam step 1 with lr = 0.01 (m = v = 0): m = (1−β1) g, v = (1−β2) g²,
// m̂ = g, v̂ = g², so p ← p − lr·g/(|g| + ε): every parameter with g ≠ 0
// moves by exactly −lr·sign(g)·|g|/(|g|+1e-8) and the others stay put.
// The Trainer computes in float32, so the values are compared with a
// tolerance of a few float32 ulps (6e-8 relative each).
func TestAdamOneStepByHand(t *testing.T) {
	m := NewMLP(2, 3, 1)
	p := []float64{
		1, -1, 0.5, 0.5, -2, 1, // W1
		0, 0.1, 0, // b1
		1, 2, -1, // W2
		0.5, // b2
	}
	x, y := []float64{1, 2}, []float64{0}
	wantG := []float64{0, 0, 14.8, 29.6, 0, 0, 0, 14.8, 0, 0, 11.84, 0, 7.4}
	tr := NewTrainer(m)
	g := make([]float64, len(p))
	if loss := tr.Gradient(p, x, y, g); relErr(loss, 13.69, 0) > 1e-6 {
		t.Errorf("loss = %v, want 13.69", loss)
	}
	for i := range g {
		if relErr(g[i], wantG[i], 1) > 1e-6 {
			t.Errorf("gradient[%d] = %v, want %v", i, g[i], wantG[i])
		}
	}
	q := append([]float64(nil), p...)
	if loss := tr.Train(q, x, y, 1, AdamOptions{LearningRate: 0.01}); relErr(loss, 13.69, 0) > 1e-6 {
		t.Errorf("Train loss = %v, want 13.69 (the loss before the step)", loss)
	}
	for i := range q {
		want := p[i]
		if wantG[i] != 0 {
			want -= 0.01 * wantG[i] / (math.Abs(wantG[i]) + 1e-8)
		}
		if relErr(q[i], want, 1) > 3e-7 {
			t.Errorf("after one step param[%d] = %.17g, want %.17g", i, q[i], want)
		}
	}
	// Step 2 by hand for b2 (g2 recomputed on the moved parameters).
	g1b2 := wantG[12]
	g2 := make([]float64, len(p))
	tr.Gradient(q, x, y, g2)
	r := append([]float64(nil), p...)
	tr.Train(r, x, y, 2, AdamOptions{LearningRate: 0.01})
	m2 := 0.9*0.1*g1b2 + 0.1*g2[12]
	v2 := 0.999*0.001*g1b2*g1b2 + 0.001*g2[12]*g2[12]
	want := q[12] - 0.01*(m2/(1-0.81))/(math.Sqrt(v2/(1-0.999*0.999))+1e-8)
	if e := relErr(r[12], want, 0); e > 1e-6 {
		t.Errorf("after two steps b2 = %.17g, want %.17g", r[12], want)
	}
}

// TestTrainDecreasesLoss fits y = 0.5·x1 − 0.25·x2 + x3 (learnable exactly by
// the linear path of a ReLU network) with default Adam.
func TestTrainDecreasesLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m := NewMLP(3, 16, 8, 1)
	p := make([]float64, m.NumParams())
	m.Init(p, rng)
	const n = 32
	x := make([]float64, 3*n)
	y := make([]float64, n)
	for s := range n {
		for k := range 3 {
			x[3*s+k] = rng.NormFloat64()
		}
		y[s] = 0.5*x[3*s] - 0.25*x[3*s+1] + x[3*s+2]
	}
	tr := NewTrainer(m)
	l0 := tr.Loss(p, x, y)
	prev := l0
	for range 10 {
		tr.Train(p, x, y, 100, AdamOptions{LearningRate: 0.01})
		l := tr.Loss(p, x, y)
		if !(l < prev) {
			t.Fatalf("loss went from %v to %v", prev, l)
		}
		prev = l
	}
	if prev > l0/20 {
		t.Errorf("loss %v after 1000 steps, started at %v: want at least 20× smaller", prev, l0)
	}
}

// TestInit checks PyTorch's nn.Linear default: each layer's weights and
// biases lie in [−b, b], b = 1/√fan_in, with the mean (0) and second moment
// (b²/3) of U(−b, b). The statistics are z-scores (Var X = b²/3, Var X² =
// 4b⁴/45) over 20 initialisations (n ≥ 660 draws per layer), rejected beyond
// 4.9: two-sided 1e-6 per check, 8 checks, so the false-rejection rate is
// below 1e-5 (normal approximation; the seed is fixed so the test is
// deterministic).
func TestInit(t *testing.T) {
	m := NewMLP(10, 128, 64, 32, 1)
	rng := rand.New(rand.NewPCG(2026, 11))
	p := make([]float64, m.NumParams())
	const reps = 20
	sizes := m.Sizes()
	type acc struct{ n, s1, s2 float64 }
	stats := make([]acc, len(sizes)-1)
	for range reps {
		m.Init(p, rng)
		off := 0
		for l := 1; l < len(sizes); l++ {
			b := 1 / math.Sqrt(float64(sizes[l-1]))
			cnt := sizes[l]*sizes[l-1] + sizes[l]
			for _, v := range p[off : off+cnt] {
				if !(math.Abs(v) <= b) {
					t.Fatalf("layer %d: %v outside ±%v", l, v, b)
				}
				stats[l-1].n++
				stats[l-1].s1 += v / b
				stats[l-1].s2 += (v / b) * (v / b)
			}
			off += cnt
		}
	}
	for l, s := range stats {
		zMean := (s.s1 / s.n) / math.Sqrt(1.0/3/s.n)
		zVar := (s.s2/s.n - 1.0/3) / math.Sqrt(4.0/45/s.n)
		if math.Abs(zMean) > 4.9 || math.Abs(zVar) > 4.9 {
			t.Errorf("layer %d (n=%v): z(mean) = %.2f, z(E x²) = %.2f", l+1, s.n, zMean, zVar)
		}
	}
}

// TestDeterminism: same parameters and data give bit-identical results, with
// a fresh Trainer and with a reused one (whose workspace holds the previous
// run); Predict (float64) agrees with the Trainer's float32 forward pass to
// float32 accuracy (MSE within 1e-5 relative), and every trained parameter
// is a float32 value.
func TestDeterminism(t *testing.T) {
	m, p0, x, y := problem(21, 13, 10, 128, 64, 32, 1)
	run := func(tr *Trainer) ([]float64, float64) {
		p := append([]float64(nil), p0...)
		return p, tr.Train(p, x, y, 30, AdamOptions{})
	}
	reused := NewTrainer(m)
	reused.Train(append([]float64(nil), p0...), x[:50], y[:5], 3, AdamOptions{LearningRate: 0.1})
	a, la := run(NewTrainer(m))
	b, lb := run(reused)
	c, lc := run(reused)
	if la != lb || la != lc {
		t.Errorf("losses differ: %v %v %v", la, lb, lc)
	}
	for i := range a {
		if a[i] != b[i] || a[i] != c[i] {
			t.Fatalf("param %d differs: %v %v %v", i, a[i], b[i], c[i])
		}
	}
	pred := make([]float64, len(y))
	m.Predict(a, x, pred)
	sum := 0.0
	for i := range y {
		d := pred[i] - y[i]
		sum += float64(d * d)
	}
	for i, v := range a {
		if float64(float32(v)) != v {
			t.Fatalf("trained param %d = %v is not a float32 value", i, v)
		}
	}
	if got := reused.Loss(a, x, y); relErr(got, sum/float64(len(y)), 0) > 1e-5 {
		t.Errorf("Loss %v differs from MSE of Predict %v", got, sum/float64(len(y)))
	}
}

// TestGolden pins the bits of a 30-step client round. The kernels forbid
// fused multiply-add, so the same hash must come out natively and under
// GOOS=js GOARCH=wasm: federated clients in browsers and the simulator
// compute identical updates.
func TestGolden(t *testing.T) {
	m, p, x, y := problem(42, 13, 10, 128, 64, 32, 1)
	for i := range x {
		x[i] = math.Abs(x[i]) * 100 // count-like inputs
	}
	for i := range y {
		y[i] = math.Abs(y[i]) * 100
	}
	loss := NewTrainer(m).Train(p, x, y, 30, AdamOptions{})
	h := sha256.New()
	var buf [8]byte
	for _, v := range append(p, loss) {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
		h.Write(buf[:])
	}
	got := fmt.Sprintf("%x", h.Sum(nil))
	want, err := os.ReadFile("testdata/train_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != got {
		t.Errorf("30-step round hash %s, want %s (loss %v)", got, strings.TrimSpace(string(want)), loss)
	}
}

func TestPanics(t *testing.T) {
	m := NewMLP(2, 3, 1)
	tr := NewTrainer(m)
	p := make([]float64, m.NumParams())
	x, y := []float64{1, 2, 3, 4}, []float64{1, 2}
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"one size", func() { NewMLP(3) }},
		{"zero size", func() { NewMLP(3, 0, 1) }},
		{"short params", func() { tr.Loss(p[:5], x, y) }},
		{"ragged x", func() { tr.Loss(p, x[:3], y) }},
		{"short y", func() { tr.Loss(p, x, y[:1]) }},
		{"short dst", func() { tr.Gradient(p, x, y, p[:3]) }},
		{"predict dst", func() { m.Predict(p, x, make([]float64, 3)) }},
		{"init length", func() { m.Init(p[:1], rand.New(rand.NewPCG(1, 1))) }},
		{"init nil rng", func() { m.Init(p, nil) }},
		{"negative steps", func() { tr.Train(p, x, y, -1, AdamOptions{}) }},
		{"beta1 = 1", func() { tr.Train(p, x, y, 1, AdamOptions{Beta1: 1}) }},
		{"negative lr", func() { tr.Train(p, x, y, 1, AdamOptions{LearningRate: -1}) }},
		{"NaN epsilon", func() { tr.Train(p, x, y, 1, AdamOptions{Epsilon: math.NaN()}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				s, ok := r.(string)
				if !ok || !strings.HasPrefix(s, "nn: ") {
					t.Errorf("recovered %#v, want a panic string starting with \"nn: \"", r)
				}
			}()
			c.f()
		})
	}
}

func TestTrainZeroSteps(t *testing.T) {
	m, p, x, y := problem(8, 5, 3, 4, 1)
	q := append([]float64(nil), p...)
	tr := NewTrainer(m)
	if got, want := tr.Train(q, x, y, 0, AdamOptions{}), tr.Loss(p, x, y); got != want {
		t.Errorf("Train(0 steps) = %v, want Loss %v", got, want)
	}
	for i := range p {
		if p[i] != q[i] {
			t.Fatal("Train with 0 steps changed params")
		}
	}
}

// TestFloat32NearFloat64 trains the paper's network (10-128-64-32-1, 13
// windows of count-like inputs, 30 full-batch Adam steps) once in float32
// (the Trainer) and once in float64 (reference_test.go's gonum net, torch's
// order of Adam operations) from the same start, and bounds the relative
// difference of the two rounds' updates: ‖p32 − p64‖ / ‖p64 − p0‖ ≤ 1e-4,
// and the final losses within 1e-4 relative. float32 rounds at 6e-8 per
// operation; the bound leaves a wide margin for 30 steps of amplification
// yet fails for any systematic error (a wrong constant, a skipped update).
func TestFloat32NearFloat64(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		m, p0, x, y := problem(seed, 13, 10, 128, 64, 32, 1)
		for i := range x {
			x[i] = math.Abs(x[i]) * 100
		}
		for i := range y {
			y[i] = math.Abs(y[i]) * 100
		}
		p32 := append([]float64(nil), p0...)
		p64 := append([]float64(nil), p0...)
		l32 := NewTrainer(m).Train(p32, x, y, 30, AdamOptions{})
		l64 := newGonumNet(m, 13).train(p64, x, y, 30, AdamOptions{})
		var diff, step float64
		for i := range p0 {
			diff += (p32[i] - p64[i]) * (p32[i] - p64[i])
			step += (p64[i] - p0[i]) * (p64[i] - p0[i])
		}
		rel := math.Sqrt(diff / step)
		t.Logf("seed %d: ‖p32 − p64‖/‖p64 − p0‖ = %.3g, loss %v vs %v", seed, rel, l32, l64)
		if !(rel <= 1e-4) {
			t.Errorf("seed %d: relative update difference %.3g > 1e-4", seed, rel)
		}
		if e := relErr(l32, l64, 0); !(e <= 1e-4) {
			t.Errorf("seed %d: loss %v (float32) vs %v (float64), rel %.2g", seed, l32, l64, e)
		}
	}
}
