//go:build !(goexperiment.simd && amd64)

package nn

// Without GOEXPERIMENT=simd on amd64 (and always in WebAssembly) the kernels
// are the scalar ones of kernels.go and train.go.

func addRows(dst, m []float64, stride int, vals []float64, idx []int32) {
	addRowsScalar(dst, m, stride, vals, idx)
}

func relu(z []float64) { reluScalar(z) }

func addBias(z, b []float64) { addBiasScalar(z, b) }

func forwardLayer(z, a, wt, b []float64, fi int, vals []float64, idx []int32) {
	forwardLayerSparse(z, a, wt, b, fi, vals, idx)
}

func backLayer(g, d, w, a []float64, fi int, vals []float64, idx []int32) {
	backLayerSparse(g, d, w, fi, vals, idx)
	maskInactive(g, a)
}

func maskInactive(g, a []float64) { maskInactiveScalar(g, a) }

func transpose(wt, w []float64, fo, fi int) { transposeScalar(wt, w, fo, fi) }

func adamUpdate(p, g, m, v []float64, c adamConsts) { adamUpdateScalar(p, g, m, v, c) }

func compact(a, vals []float64, idx []int32) int { return compactScalar(a, vals, idx) }

func weightGrad(gW, gb, d, prev []float64, fi int, vals []float64, idx []int32) {
	weightGradScalar(gW, gb, d, prev, fi, vals, idx)
}

// predictFast handles MLP.Predict when a faster kernel exists; here it never
// does.
func predictFast(m *MLP, params, x, dst []float64, n int) bool { return false }

// fmWork is the feature-major workspace of the AVX-512 Trainer path
// (train_avx512_amd64.go); this build has no such path.
type fmWork struct{}

func (t *Trainer) fmReserve(n int) *fmWork                                  { return nil }
func (t *Trainer) fmLoad(w *fmWork, x []float64, n int)                     {}
func (t *Trainer) fmForward(w *fmWork, params, y []float64, n int) float64  { return 0 }
func (t *Trainer) fmBackward(w *fmWork, params, x, y, dst []float64, n int) {}
