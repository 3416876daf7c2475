//go:build goexperiment.simd && amd64

package nn

import "simd/archsimd"

// AVX2 versions of the Trainer's float32 kernels, on archsimd Float32x8,
// used when the CPU has AVX2 but not AVX-512 (useSIMD && !useAVX512). They
// follow the contracts of the AVX-512 ones lane for lane: gemm32AVX2 is
// gemmAVX512 (same arguments, same sums: from +0, one rounded product at a
// time in k order, VMULPS then VADDPS, never a fused multiply-add, the bias
// last, then the ReLU and mask flags), computed four rows × 16 columns at a
// time (eight ymm accumulators), then four rows × 8 columns, with the last
// cols mod 8 columns and rows mod 4 rows by the same sums in scalar Go.

// ld8f loads s[o:o+8].
func ld8f(s []float32, o int) archsimd.Float32x8 {
	return archsimd.LoadFloat32x8((*[8]float32)(s[o : o+8]))
}

// gemmEpi8 finishes one vector of results: bias (bv, when hasBias), ReLU,
// the inactive-unit mask (mask[o:o+8] when set), then the store to out[o:].
func gemmEpi8(v archsimd.Float32x8, out []float32, o int, mask []float32, mode int, bv archsimd.Float32x8, hasBias bool) {
	var zero archsimd.Float32x8
	if hasBias {
		v = v.Add(bv)
	}
	if mode&gemmReLU != 0 {
		v = v.Masked(v.Greater(zero).Or(v.IsNaN())) // zero where v ≤ 0, NaN stays
	}
	if mode&gemmMask != 0 {
		v = v.Masked(ld8f(mask, o).Greater(zero))
	}
	v.Store((*[8]float32)(out[o : o+8]))
}

// gemmScalar1 is one element of gemm in scalar Go: the same sum and the
// same epilogue.
func gemmScalar1(out []float32, o int, a []float32, ao, ak int, b []float32, bo, ldb int, bias, mask []float32, mode, i, c, kd int) {
	var sum float32
	for k := range kd {
		sum += float32(a[ao+k*ak] * b[bo+k*ldb])
	}
	switch mode & 3 {
	case biasRow:
		sum += bias[i]
	case biasCol:
		sum += bias[c]
	}
	if mode&gemmReLU != 0 && sum <= 0 {
		sum = 0
	}
	if mode&gemmMask != 0 && !(mask[o] > 0) {
		sum = 0
	}
	out[o] = sum
}

// gemm32AVX2 is gemmAVX512 on AVX2 (the slices were checked by gemmMasked).
func gemm32AVX2(out []float32, ldo int, a []float32, ai, ak int, b []float32, ldb int, bias, mask []float32, mode, rows, kd, cols int) {
	bm := mode & 3
	i := 0
	for ; i+4 <= rows; i += 4 {
		a0, a1, a2, a3 := i*ai, (i+1)*ai, (i+2)*ai, (i+3)*ai
		var rb0, rb1, rb2, rb3 archsimd.Float32x8
		if bm == biasRow {
			rb0 = archsimd.BroadcastFloat32x8(bias[i])
			rb1 = archsimd.BroadcastFloat32x8(bias[i+1])
			rb2 = archsimd.BroadcastFloat32x8(bias[i+2])
			rb3 = archsimd.BroadcastFloat32x8(bias[i+3])
		}
		c := 0
		for ; c+16 <= cols; c += 16 {
			var s0, s1, s2, s3, s4, s5, s6, s7 archsimd.Float32x8
			for k := range kd {
				bo := k*ldb + c
				b0, b1 := ld8f(b, bo), ld8f(b, bo+8)
				ko := k * ak
				x0 := archsimd.BroadcastFloat32x8(a[a0+ko])
				x1 := archsimd.BroadcastFloat32x8(a[a1+ko])
				x2 := archsimd.BroadcastFloat32x8(a[a2+ko])
				x3 := archsimd.BroadcastFloat32x8(a[a3+ko])
				s0 = s0.Add(x0.Mul(b0))
				s1 = s1.Add(x0.Mul(b1))
				s2 = s2.Add(x1.Mul(b0))
				s3 = s3.Add(x1.Mul(b1))
				s4 = s4.Add(x2.Mul(b0))
				s5 = s5.Add(x2.Mul(b1))
				s6 = s6.Add(x3.Mul(b0))
				s7 = s7.Add(x3.Mul(b1))
			}
			cb0, cb1 := rb0, rb0
			if bm == biasCol {
				cb0, cb1 = ld8f(bias, c), ld8f(bias, c+8)
			}
			has := bm != biasNone
			o := i*ldo + c
			gemmEpi8(s0, out, o, mask, mode, cb0, has)
			gemmEpi8(s1, out, o+8, mask, mode, cb1, has)
			if bm == biasRow {
				cb0, cb1 = rb1, rb1
			}
			gemmEpi8(s2, out, o+ldo, mask, mode, cb0, has)
			gemmEpi8(s3, out, o+ldo+8, mask, mode, cb1, has)
			if bm == biasRow {
				cb0, cb1 = rb2, rb2
			}
			gemmEpi8(s4, out, o+2*ldo, mask, mode, cb0, has)
			gemmEpi8(s5, out, o+2*ldo+8, mask, mode, cb1, has)
			if bm == biasRow {
				cb0, cb1 = rb3, rb3
			}
			gemmEpi8(s6, out, o+3*ldo, mask, mode, cb0, has)
			gemmEpi8(s7, out, o+3*ldo+8, mask, mode, cb1, has)
		}
		for ; c+8 <= cols; c += 8 {
			var s0, s2, s4, s6 archsimd.Float32x8
			for k := range kd {
				b0 := ld8f(b, k*ldb+c)
				ko := k * ak
				s0 = s0.Add(archsimd.BroadcastFloat32x8(a[a0+ko]).Mul(b0))
				s2 = s2.Add(archsimd.BroadcastFloat32x8(a[a1+ko]).Mul(b0))
				s4 = s4.Add(archsimd.BroadcastFloat32x8(a[a2+ko]).Mul(b0))
				s6 = s6.Add(archsimd.BroadcastFloat32x8(a[a3+ko]).Mul(b0))
			}
			has := bm != biasNone
			o := i*ldo + c
			cb := [4]archsimd.Float32x8{rb0, rb1, rb2, rb3}
			if bm == biasCol {
				v := ld8f(bias, c)
				cb = [4]archsimd.Float32x8{v, v, v, v}
			}
			gemmEpi8(s0, out, o, mask, mode, cb[0], has)
			gemmEpi8(s2, out, o+ldo, mask, mode, cb[1], has)
			gemmEpi8(s4, out, o+2*ldo, mask, mode, cb[2], has)
			gemmEpi8(s6, out, o+3*ldo, mask, mode, cb[3], has)
		}
		for ; c < cols; c++ {
			for r := range 4 {
				gemmScalar1(out, (i+r)*ldo+c, a, (i+r)*ai, ak, b, c, ldb, bias, mask, mode, i+r, c, kd)
			}
		}
	}
	for ; i < rows; i++ {
		ao := i * ai
		var rb archsimd.Float32x8
		switch bm {
		case biasRow:
			rb = archsimd.BroadcastFloat32x8(bias[i])
		}
		c := 0
		for ; c+8 <= cols; c += 8 {
			var s0 archsimd.Float32x8
			for k := range kd {
				s0 = s0.Add(archsimd.BroadcastFloat32x8(a[ao+k*ak]).Mul(ld8f(b, k*ldb+c)))
			}
			cb := rb
			if bm == biasCol {
				cb = ld8f(bias, c)
			}
			gemmEpi8(s0, out, i*ldo+c, mask, mode, cb, bm != biasNone)
		}
		for ; c < cols; c++ {
			gemmScalar1(out, i*ldo+c, a, ao, ak, b, c, ldb, bias, mask, mode, i, c, kd)
		}
	}
}

// weightGrad32AVX2 is weightGrad32AVX512 on AVX2: the bias sums eight units
// per vector, the weight gradient dᵀ·prev by gemm.
func weightGrad32AVX2(gW, gb, d, prev []float32, fi int) {
	fo := len(gb)
	n := len(d) / fo
	d = d[:n*fo]
	prev = prev[:n*fi]
	gW = gW[:fo*fi]
	j := 0
	for ; j+8 <= fo; j += 8 {
		var sum archsimd.Float32x8
		for s := range n {
			sum = sum.Add(ld8f(d, s*fo+j))
		}
		sum.Store((*[8]float32)(gb[j : j+8]))
	}
	weightGrad32Rest(gW, gb, d, prev, fi, j)
}

// weightGrad32Rest finishes a vector weightGrad32 whose bias sums reached
// unit j: the remaining bias sums one unit at a time, then the weight
// gradient dᵀ·prev by gemm.
func weightGrad32Rest(gW, gb, d, prev []float32, fi, j int) {
	fo := len(gb)
	n := len(d) / fo
	for ; j < fo; j++ {
		var sum float32
		for s := range n {
			sum += d[s*fo+j]
		}
		gb[j] = sum
	}
	gemm(gW, fi, d, 1, fo, prev, fi, nil, biasNone, fo, n, fi)
}
