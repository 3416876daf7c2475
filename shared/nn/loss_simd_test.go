//go:build goexperiment.simd && amd64

package nn

import "testing"

// TestAbsoluteErrorKernelsSameBits: training with the absolute error gives
// the same loss and parameters, bit for bit, on the scalar, AVX2 and
// AVX-512 kernels (the last through the feature-major path for batches up
// to fmMaxBatch), as the squared error does.
func TestAbsoluteErrorKernelsSameBits(t *testing.T) {
	lossKernelsSameBits(t, 11, 1, []int{13, 180, fmMaxBatch + 5}, func(tr *Trainer) { tr.SetLoss(AbsoluteError) })
}

// TestPinballKernelsSameBits: the pinball loss at the hub's seven levels
// trains to the same bits on every kernel set.
func TestPinballKernelsSameBits(t *testing.T) {
	levels := []float64{0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975}
	lossKernelsSameBits(t, 12, 7, []int{13, fmMaxBatch + 5}, func(tr *Trainer) { tr.SetPinball(levels) })
}

// lossKernelsSameBits trains a 16-32-out network 30 steps with the loss
// set sets, on each batch size, with every kernel set the machine has,
// and compares the loss and the parameters bit for bit with the scalar
// kernels'.
func lossKernelsSameBits(t *testing.T, seed uint64, out int, batches []int, set func(*Trainer)) {
	t.Helper()
	for _, n := range batches {
		m, p0, x, y := problem(seed, n, 16, 32, out)
		run := func() ([]float64, float64) {
			p := append([]float64(nil), p0...)
			tr := NewTrainer(m)
			set(tr)
			loss := tr.Train(p, x, y, 30, AdamOptions{LearningRate: 0.01})
			return p, loss
		}
		var want []float64
		var wantLoss float64
		withKernels("scalar", func() { want, wantLoss = run() })
		for _, k := range []string{"avx2", "avx512"} {
			var got []float64
			var gotLoss float64
			if !withKernels(k, func() { got, gotLoss = run() }) {
				continue
			}
			if !sameBits(t, k+" loss", []float64{gotLoss}, []float64{wantLoss}) || !sameBits(t, k+" trained parameters", got, want) {
				t.Fatalf("%s: batch of %d", k, n)
			}
		}
	}
}
