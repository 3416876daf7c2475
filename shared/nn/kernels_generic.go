//go:build !(goexperiment.simd && amd64)

package nn

// Without GOEXPERIMENT=simd on amd64 (and always in WebAssembly) the kernels
// are the scalar ones of kernels.go (float64, MLP.Predict) and kernels32.go
// (float32, the Trainer).

func relu(z []float64) { reluScalar(z) }

func compact(a, vals []float64, idx []int32) int { return compactScalar(a, vals, idx) }

// predictFast handles MLP.Predict when a faster kernel exists; here it never
// does.
func predictFast(m *MLP, params, x, dst []float64, n int) bool { return false }

func forwardLayer32(z, a, wt, b []float32, fi int, vals []float32, idx []int32, relu bool) {
	forwardLayer32Scalar(z, a, wt, b, fi, vals, idx)
	if relu {
		reluScalar(z)
	}
}

func backLayer32(g, d, w, a []float32, fi int, vals []float32, idx []int32) {
	backLayer32Scalar(g, d, w, a, fi, vals, idx)
}

func weightGrad32(gW, gb, d, prev []float32, fi int, vals []float32, idx []int32) {
	weightGrad32Scalar(gW, gb, d, prev, fi, vals, idx)
}

func adamUpdate32(p, g, m, v []float32, c adamConsts32) { adamUpdate32Scalar(p, g, m, v, c) }

// fmWork is the feature-major workspace of the AVX-512 Trainer path
// (train_avx512_amd64.go); this build has no such path.
type fmWork struct{}

func (t *Trainer) fmReserve(n int) *fmWork            { return nil }
func (t *Trainer) fmLoad(w *fmWork, n int)            {}
func (t *Trainer) fmForward(w *fmWork, n int) float64 { return 0 }
func (t *Trainer) fmBackward(w *fmWork, n int)        {}

// Kernels names the Trainer's kernels: "scalar" in a build without
// GOEXPERIMENT=simd on amd64 (and always in WebAssembly).
func Kernels() string { return "scalar" }
