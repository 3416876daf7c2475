//go:build goexperiment.simd && amd64

package nn

import "simd/archsimd"

// AVX-512 versions of MLP.Predict's float64 row kernels: the same
// lane-by-lane arithmetic as the AVX2 ones (kernels_simd_amd64.go), eight
// float64 lanes per vector instead of four. They are used when the CPU
// reports AVX-512 (F, CD, BW, DQ, VL) and the AVX2 kernels are enabled; the
// results are bit-identical to both the AVX2 and the scalar kernels
// (kernels_simd_test.go compares all three). The Trainer's float32 kernels
// are in train_avx512_amd64.go, gemm_avx512_amd64.go/.s and
// gemm_avx2_amd64.go.

// useAVX512 selects the AVX-512 kernels; tests switch it off.
var useAVX512 = archsimd.X86.AVX512()

// addRowsVec is addRows on the widest vector kernel the CPU has.
func addRowsVec(dst, m []float64, stride int, vals []float64, idx []int32) {
	if useAVX512 {
		addRowsAVX512(dst, m, stride, vals, idx)
		return
	}
	addRowsAVX2(dst, m, stride, vals, idx)
}

// addRowsAVX512 is addRowsScalar with dst cut into blocks of 32 or 8
// elements held in registers while every group of four rows is added,
//
//	dst[j:j+8] = (((dst[j:j+8] + v0·r0) + v1·r1) + v2·r2) + v3·r3
//
// lane by lane, groups in the order of vals; the last len(dst) mod 8
// elements use masked loads and stores (the unused lanes compute on zeros
// and are never written).
func addRowsAVX512(dst, m []float64, stride int, vals []float64, idx []int32) {
	n := len(dst)
	idx = idx[:len(vals)]
	j := 0
	for ; j+32 <= n; j += 32 {
		addRows32w((*[32]float64)(dst[j:j+32]), m[j:], stride, vals, idx)
	}
	for ; j+8 <= n; j += 8 {
		addRows8w((*[8]float64)(dst[j:j+8]), m[j:], stride, vals, idx)
	}
	if j < n {
		addRowsPart(dst[j:], m[j:], stride, vals, idx)
	}
}

// ld8 loads s[o:o+8].
func ld8(s []float64, o int) archsimd.Float64x8 {
	return archsimd.LoadFloat64x8((*[8]float64)(s[o : o+8]))
}

// addRows32w is addRowsAVX512 for one block of 32 elements: row k of the
// block is m[idx[k]·stride:][:32].
func addRows32w(dst *[32]float64, m []float64, stride int, vals []float64, idx []int32) {
	d0 := archsimd.LoadFloat64x8((*[8]float64)(dst[0:8]))
	d1 := archsimd.LoadFloat64x8((*[8]float64)(dst[8:16]))
	d2 := archsimd.LoadFloat64x8((*[8]float64)(dst[16:24]))
	d3 := archsimd.LoadFloat64x8((*[8]float64)(dst[24:32]))
	nv := len(vals)
	idx = idx[:nv]
	k := 0
	for ; k+4 <= nv; k += 4 {
		o0 := int(idx[k]) * stride
		o1 := int(idx[k+1]) * stride
		o2 := int(idx[k+2]) * stride
		o3 := int(idx[k+3]) * stride
		r0 := (*[32]float64)(m[o0 : o0+32])
		r1 := (*[32]float64)(m[o1 : o1+32])
		r2 := (*[32]float64)(m[o2 : o2+32])
		r3 := (*[32]float64)(m[o3 : o3+32])
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		b2 := archsimd.BroadcastFloat64x8(vals[k+2])
		b3 := archsimd.BroadcastFloat64x8(vals[k+3])
		d0 = d0.Add(b0.Mul(at32(r0, 0))).Add(b1.Mul(at32(r1, 0))).Add(b2.Mul(at32(r2, 0))).Add(b3.Mul(at32(r3, 0)))
		d1 = d1.Add(b0.Mul(at32(r0, 8))).Add(b1.Mul(at32(r1, 8))).Add(b2.Mul(at32(r2, 8))).Add(b3.Mul(at32(r3, 8)))
		d2 = d2.Add(b0.Mul(at32(r0, 16))).Add(b1.Mul(at32(r1, 16))).Add(b2.Mul(at32(r2, 16))).Add(b3.Mul(at32(r3, 16)))
		d3 = d3.Add(b0.Mul(at32(r0, 24))).Add(b1.Mul(at32(r1, 24))).Add(b2.Mul(at32(r2, 24))).Add(b3.Mul(at32(r3, 24)))
	}
	switch nv - k {
	case 3:
		o0 := int(idx[k]) * stride
		o1 := int(idx[k+1]) * stride
		o2 := int(idx[k+2]) * stride
		r0 := (*[32]float64)(m[o0 : o0+32])
		r1 := (*[32]float64)(m[o1 : o1+32])
		r2 := (*[32]float64)(m[o2 : o2+32])
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		b2 := archsimd.BroadcastFloat64x8(vals[k+2])
		d0 = d0.Add(b0.Mul(at32(r0, 0))).Add(b1.Mul(at32(r1, 0))).Add(b2.Mul(at32(r2, 0)))
		d1 = d1.Add(b0.Mul(at32(r0, 8))).Add(b1.Mul(at32(r1, 8))).Add(b2.Mul(at32(r2, 8)))
		d2 = d2.Add(b0.Mul(at32(r0, 16))).Add(b1.Mul(at32(r1, 16))).Add(b2.Mul(at32(r2, 16)))
		d3 = d3.Add(b0.Mul(at32(r0, 24))).Add(b1.Mul(at32(r1, 24))).Add(b2.Mul(at32(r2, 24)))
	case 2:
		o0 := int(idx[k]) * stride
		o1 := int(idx[k+1]) * stride
		r0 := (*[32]float64)(m[o0 : o0+32])
		r1 := (*[32]float64)(m[o1 : o1+32])
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		d0 = d0.Add(b0.Mul(at32(r0, 0))).Add(b1.Mul(at32(r1, 0)))
		d1 = d1.Add(b0.Mul(at32(r0, 8))).Add(b1.Mul(at32(r1, 8)))
		d2 = d2.Add(b0.Mul(at32(r0, 16))).Add(b1.Mul(at32(r1, 16)))
		d3 = d3.Add(b0.Mul(at32(r0, 24))).Add(b1.Mul(at32(r1, 24)))
	case 1:
		o0 := int(idx[k]) * stride
		r0 := (*[32]float64)(m[o0 : o0+32])
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		d0 = d0.Add(b0.Mul(at32(r0, 0)))
		d1 = d1.Add(b0.Mul(at32(r0, 8)))
		d2 = d2.Add(b0.Mul(at32(r0, 16)))
		d3 = d3.Add(b0.Mul(at32(r0, 24)))
	}
	d0.Store((*[8]float64)(dst[0:8]))
	d1.Store((*[8]float64)(dst[8:16]))
	d2.Store((*[8]float64)(dst[16:24]))
	d3.Store((*[8]float64)(dst[24:32]))
}

// at32 loads elements i…i+7 of a 32-element row.
func at32(r *[32]float64, i int) archsimd.Float64x8 {
	return archsimd.LoadFloat64x8((*[8]float64)(r[i : i+8]))
}

// addRows8w is addRows32w for a block of 8 elements.
func addRows8w(dst *[8]float64, m []float64, stride int, vals []float64, idx []int32) {
	d0 := archsimd.LoadFloat64x8(dst)
	nv := len(vals)
	idx = idx[:nv]
	k := 0
	for ; k+4 <= nv; k += 4 {
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		b2 := archsimd.BroadcastFloat64x8(vals[k+2])
		b3 := archsimd.BroadcastFloat64x8(vals[k+3])
		d0 = d0.Add(b0.Mul(ld8(m, int(idx[k])*stride))).Add(b1.Mul(ld8(m, int(idx[k+1])*stride))).
			Add(b2.Mul(ld8(m, int(idx[k+2])*stride))).Add(b3.Mul(ld8(m, int(idx[k+3])*stride)))
	}
	switch nv - k {
	case 3:
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		b2 := archsimd.BroadcastFloat64x8(vals[k+2])
		d0 = d0.Add(b0.Mul(ld8(m, int(idx[k])*stride))).Add(b1.Mul(ld8(m, int(idx[k+1])*stride))).
			Add(b2.Mul(ld8(m, int(idx[k+2])*stride)))
	case 2:
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		d0 = d0.Add(b0.Mul(ld8(m, int(idx[k])*stride))).Add(b1.Mul(ld8(m, int(idx[k+1])*stride)))
	case 1:
		d0 = d0.Add(archsimd.BroadcastFloat64x8(vals[k]).Mul(ld8(m, int(idx[k])*stride)))
	}
	d0.Store(dst)
}

// addRowsPart is addRows8w for the last 1…7 elements of dst, with masked
// loads and stores: lanes past len(dst) hold zeros and are not stored.
func addRowsPart(dst, m []float64, stride int, vals []float64, idx []int32) {
	n := len(dst)
	part := func(k int) archsimd.Float64x8 {
		o := int(idx[k]) * stride
		return archsimd.LoadFloat64x8SlicePart(m[o : o+n])
	}
	d0 := archsimd.LoadFloat64x8SlicePart(dst)
	nv := len(vals)
	idx = idx[:nv]
	k := 0
	for ; k+4 <= nv; k += 4 {
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		b2 := archsimd.BroadcastFloat64x8(vals[k+2])
		b3 := archsimd.BroadcastFloat64x8(vals[k+3])
		d0 = d0.Add(b0.Mul(part(k))).Add(b1.Mul(part(k + 1))).Add(b2.Mul(part(k + 2))).Add(b3.Mul(part(k + 3)))
	}
	switch nv - k {
	case 3:
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		b2 := archsimd.BroadcastFloat64x8(vals[k+2])
		d0 = d0.Add(b0.Mul(part(k))).Add(b1.Mul(part(k + 1))).Add(b2.Mul(part(k + 2)))
	case 2:
		b0 := archsimd.BroadcastFloat64x8(vals[k])
		b1 := archsimd.BroadcastFloat64x8(vals[k+1])
		d0 = d0.Add(b0.Mul(part(k))).Add(b1.Mul(part(k + 1)))
	case 1:
		d0 = d0.Add(archsimd.BroadcastFloat64x8(vals[k]).Mul(part(k)))
	}
	d0.StoreSlicePart(dst)
}

// Kernels names the Trainer's kernels this binary and CPU use: "AVX-512",
// "AVX2" or "scalar".
func Kernels() string {
	switch {
	case useSIMD && useAVX512:
		return "AVX-512"
	case useSIMD:
		return "AVX2"
	}
	return "scalar"
}
