//go:build goexperiment.simd && amd64

package nn

// gemm64 is gemm in float64 for MLP.Predict on AVX-512 CPUs (the Trainer
// computes in float32): for i < rows and c < cols,
//
//	out[i·ldo + c] = Σ_{k<kd} a[i·ai + k·ak] · b[k·ldb + c]   (+ bias)
//
// each element the sequential sum from +0 in order k = 0, 1, …, every
// product rounded before it is added (no fused multiply-add), then the
// bias of its row (biasRow) or column (biasCol): the sums of forwardGather
// and addRowsScalar, so the bits equal the scalar float64 kernels'. The
// assembly (gemm64_avx512_amd64.s: four rows × 16 columns in registers,
// masked tails, VMULPD then VADDPD) checks nothing, so the slices are
// checked here and a short slice panics. Only the bias modes are used
// (no flags: Predict applies relu itself).
func gemm64(out []float64, ldo int, a []float64, ai, ak int, b []float64, ldb int, bias []float64, mode, rows, kd, cols int) {
	if !gemmCheck("gemm64", len(out), len(a), len(b), len(bias), ldo, ai, ak, ldb, mode, rows, kd, cols) {
		return
	}
	pa, pb, pbias := &out[0], &out[0], &out[0]
	if kd > 0 {
		pa, pb = &a[0], &b[0]
	}
	if mode != biasNone {
		pbias = &bias[0]
	}
	gemm64AVX512(&out[0], pa, pb, pbias, &out[0], ldo, ai, ak, ldb, rows, kd, cols, mode)
}

// gemm64AVX512 is gemm64 without the checks (gemm64_avx512_amd64.s).
//
//go:noescape
func gemm64AVX512(out, a, b, bias, mask *float64, ldo, ai, ak, ldb, rows, kd, cols, mode int)
