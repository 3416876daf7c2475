//go:build goexperiment.simd && amd64

#include "textflag.h"

// func transposeColsAVX512(dst, src *float64, units, ldd, n, np int)
//
// For every block of eight units k…k+7 (units is a multiple of 8) and the
// first n columns s of src (units × np, np a multiple of 8 ≥ n): eight rows
// of eight columns are loaded, transposed in registers (VUNPCKLPD/HPD, then
// two rounds of VSHUFF64X2) and stored as dst[s·ldd + k … k+7] for the real
// samples s < n only. Pure data movement: no arithmetic.
TEXT ·transposeColsAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ units+16(FP), R8
	MOVQ ldd+24(FP), R11
	SHLQ $3, R11
	MOVQ n+32(FP), R9
	MOVQ np+40(FP), R10
	SHLQ $3, R10
	LEAQ (R10)(R10*2), R12
	XORQ AX, AX

kloop:
	LEAQ  8(AX), BX
	CMPQ  BX, R8
	JGT   done
	MOVQ  AX, R13
	IMULQ R10, R13
	ADDQ  SI, R13
	LEAQ  (DI)(AX*8), R14
	XORQ  CX, CX

sloop:
	CMPQ CX, R9
	JGE  knext
	LEAQ (R13)(CX*8), R15
	VMOVUPD (R15), Z0
	VMOVUPD (R15)(R10*1), Z1
	VMOVUPD (R15)(R10*2), Z2
	VMOVUPD (R15)(R12*1), Z3
	LEAQ (R15)(R10*4), R15
	VMOVUPD (R15), Z4
	VMOVUPD (R15)(R10*1), Z5
	VMOVUPD (R15)(R10*2), Z6
	VMOVUPD (R15)(R12*1), Z7

	// t: pairs of rows interleaved (even columns in lo, odd in hi).
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VUNPCKLPD Z3, Z2, Z10
	VUNPCKHPD Z3, Z2, Z11
	VUNPCKLPD Z5, Z4, Z12
	VUNPCKHPD Z5, Z4, Z13
	VUNPCKLPD Z7, Z6, Z14
	VUNPCKHPD Z7, Z6, Z15
	// u: 128-bit lanes regrouped (0x88 takes lanes 0 and 2, 0xDD 1 and 3).
	VSHUFF64X2 $0x88, Z10, Z8, Z16
	VSHUFF64X2 $0xDD, Z10, Z8, Z17
	VSHUFF64X2 $0x88, Z11, Z9, Z18
	VSHUFF64X2 $0xDD, Z11, Z9, Z19
	VSHUFF64X2 $0x88, Z14, Z12, Z20
	VSHUFF64X2 $0xDD, Z14, Z12, Z21
	VSHUFF64X2 $0x88, Z15, Z13, Z22
	VSHUFF64X2 $0xDD, Z15, Z13, Z23
	// columns: Z24+j holds column s+j of the eight rows.
	VSHUFF64X2 $0x88, Z20, Z16, Z24
	VSHUFF64X2 $0x88, Z22, Z18, Z25
	VSHUFF64X2 $0x88, Z21, Z17, Z26
	VSHUFF64X2 $0x88, Z23, Z19, Z27
	VSHUFF64X2 $0xDD, Z20, Z16, Z28
	VSHUFF64X2 $0xDD, Z22, Z18, Z29
	VSHUFF64X2 $0xDD, Z21, Z17, Z30
	VSHUFF64X2 $0xDD, Z23, Z19, Z31

	MOVQ  CX, BX
	IMULQ R11, BX
	ADDQ  R14, BX
	MOVQ  R9, DX
	SUBQ  CX, DX
	VMOVUPD Z24, (BX)
	CMPQ  DX, $1
	JLE   snext
	ADDQ  R11, BX
	VMOVUPD Z25, (BX)
	CMPQ  DX, $2
	JLE   snext
	ADDQ  R11, BX
	VMOVUPD Z26, (BX)
	CMPQ  DX, $3
	JLE   snext
	ADDQ  R11, BX
	VMOVUPD Z27, (BX)
	CMPQ  DX, $4
	JLE   snext
	ADDQ  R11, BX
	VMOVUPD Z28, (BX)
	CMPQ  DX, $5
	JLE   snext
	ADDQ  R11, BX
	VMOVUPD Z29, (BX)
	CMPQ  DX, $6
	JLE   snext
	ADDQ  R11, BX
	VMOVUPD Z30, (BX)
	CMPQ  DX, $7
	JLE   snext
	ADDQ  R11, BX
	VMOVUPD Z31, (BX)

snext:
	ADDQ $8, CX
	JMP  sloop

knext:
	ADDQ $8, AX
	JMP  kloop

done:
	VZEROUPPER
	RET
