//go:build goexperiment.simd && amd64

package nn

import "fmt"

// Bias modes of gemm, and epilogue flags that may be added to them.
const (
	biasNone = iota // no bias
	biasRow         // bias[i] added to every element of row i
	biasCol         // bias[c] added to every element of column c

	gemmReLU = 4 // then relu (reluScalar) on every element
	gemmMask = 8 // then the ReLU derivative: zero where the mask element at the same place is not > 0
)

// gemm writes, for i < rows and c < cols,
//
//	out[i·ldo + c] = Σ_{k<kd} a[i·ai + k·ak] · b[k·ldb + c]   (+ bias)
//
// each element the sequential sum from +0 in order k = 0, 1, …, every
// product rounded before it is added (no fused multiply-add), then the bias
// of its row (biasRow) or column (biasCol) added last: exactly the sums of
// kernels.go, so the bits equal the scalar float32 kernels' (kernels32.go). The strides let one
// kernel serve the three products of a training step: a's rows may be
// contiguous (ak = 1: forward and back-propagation) or its columns
// (ai = 1: the weight gradient reads the deltas transposed). Elements of
// out outside the rows × cols block are not touched.
//
// It is written in assembly (gemm_avx512_amd64.s: float32, four rows × 32
// columns in registers, b's row loaded once per four rows, masked column tails, no
// bounds checks in the loops), so the slice bounds are checked here, once,
// and a short slice panics. On CPUs without AVX-512 (useAVX512 false) it
// runs gemm32AVX2 (gemm_avx2_amd64.go) instead, with the same bits; the CPU
// must have AVX2 at least (useSIMD).
func gemm(out []float32, ldo int, a []float32, ai, ak int, b []float32, ldb int, bias []float32, mode, rows, kd, cols int) {
	gemmMasked(out, ldo, a, ai, ak, b, ldb, bias, nil, mode, rows, kd, cols)
}

// gemmMasked is gemm whose mode may carry the epilogue flags: gemmReLU
// applies reluScalar's rule to each result, gemmMask zeroes each result
// whose element of mask (laid out like out: mask[i·ldo + c]) is not > 0, as
// backLayer32Scalar does; ReLU first when both are set. Either is applied
// in registers before the store, with the same bits as the separate pass.
func gemmMasked(out []float32, ldo int, a []float32, ai, ak int, b []float32, ldb int, bias, mask []float32, mode, rows, kd, cols int) {
	if !gemmCheck("gemm", len(out), len(a), len(b), len(bias), ldo, ai, ak, ldb, mode&3, rows, kd, cols) {
		return
	}
	if mode&^(3|gemmReLU|gemmMask) != 0 {
		panic(fmt.Sprintf("nn: gemm mode %#x", mode))
	}
	if mode&gemmMask != 0 {
		gemmNeed("mask", len(mask), (rows-1)*ldo+cols)
	}
	// The assembly never reads a, b, bias or mask when kd = 0 or the mode
	// does not ask for them; it still wants pointers, so pass out's.
	pa, pb, pbias, pmask := &out[0], &out[0], &out[0], &out[0]
	if kd > 0 {
		pa, pb = &a[0], &b[0]
	}
	if mode&3 != biasNone {
		pbias = &bias[0]
	}
	if mode&gemmMask != 0 {
		pmask = &mask[0]
	}
	if !useAVX512 {
		gemm32AVX2(out, ldo, a, ai, ak, b, ldb, bias, mask, mode, rows, kd, cols)
		return
	}
	gemmAVX512(&out[0], pa, pb, pbias, pmask, ldo, ai, ak, ldb, rows, kd, cols, mode)
}

// gemmCheck checks the shape of a product for the assembly, which checks
// nothing: strides and sizes not negative, and out, a, b and the bias
// (biasNone, biasRow or biasCol) long enough. It panics with an "nn:"
// message naming name and the short slice, and returns false when the
// product is empty (rows or cols ≤ 0: nothing to do).
func gemmCheck(name string, nOut, nA, nB, nBias, ldo, ai, ak, ldb, bias, rows, kd, cols int) bool {
	if rows <= 0 || cols <= 0 {
		return false
	}
	if kd < 0 || ldo < 0 || ai < 0 || ak < 0 || ldb < 0 {
		panic(fmt.Sprintf("nn: %s with negative size or stride (kd %d, ldo %d, ai %d, ak %d, ldb %d)", name, kd, ldo, ai, ak, ldb))
	}
	gemmNeed("out", nOut, (rows-1)*ldo+cols)
	if kd > 0 {
		gemmNeed("a", nA, (rows-1)*ai+(kd-1)*ak+1)
		gemmNeed("b", nB, (kd-1)*ldb+cols)
	}
	switch bias {
	case biasNone:
	case biasRow:
		gemmNeed("bias", nBias, rows)
	case biasCol:
		gemmNeed("bias", nBias, cols)
	default:
		panic(fmt.Sprintf("nn: %s bias mode %d", name, bias))
	}
	return true
}

func gemmNeed(what string, have, need int) {
	if have < need {
		panic(fmt.Sprintf("nn: gemm %s has %d values, needs %d", what, have, need))
	}
}

// gemmAVX512 is gemm without the checks (gemm_avx512_amd64.s).
//
//go:noescape
func gemmAVX512(out, a, b, bias, mask *float32, ldo, ai, ak, ldb, rows, kd, cols, mode int)
