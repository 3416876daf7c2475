//go:build goexperiment.simd && amd64

#include "textflag.h"

// func transposeCols32AVX512(dst, src *float32, units, ldd, n, np int)
//
// For every block of 16 units u…u+15 (units is a multiple of 16) and the
// first n columns s of src (units × np float32 values, np a multiple of 16
// not below n): 16 rows of 16 columns are loaded and transposed in
// registers, and column s+k is stored as dst[(s+k)·ldd + u … u+15] for the
// real samples s+k < n only. Pure data movement, no arithmetic.
//
// The transpose: VUNPCKLPS/VUNPCKHPS interleave rows 2i and 2i+1, so that
// each 64-bit lane holds the pair (row 2i, row 2i+1) of one column; the low
// halves hold columns 0, 1, 4, 5, 8, 9, 12, 13 and the high halves 2, 3, 6,
// 7, 10, 11, 14, 15. Each set of eight pair-rows is then an 8 × 8 matrix of
// 64-bit lanes, transposed as in the third pass's float64 transpose
// (VUNPCKLPD/HPD, then two rounds of VSHUFF64X2): its column j is the whole
// transposed column of the 16 rows.
//
// Registers: DI dst, SI src, R8 units, R11 ldd·4, R9 n, R10 np·4,
// AX unit index, R13 the block's first source row, R14 dst + u·4,
// CX column index, BX the block's first destination row, DX columns left.
TEXT ·transposeCols32AVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ units+16(FP), R8
	MOVQ ldd+24(FP), R11
	SHLQ $2, R11
	MOVQ n+32(FP), R9
	MOVQ np+40(FP), R10
	SHLQ $2, R10
	XORQ AX, AX

kloop:
	LEAQ  16(AX), BX
	CMPQ  BX, R8
	JGT   done
	MOVQ  AX, R13
	IMULQ R10, R13
	ADDQ  SI, R13
	LEAQ  (DI)(AX*4), R14
	XORQ  CX, CX

sloop:
	CMPQ CX, R9
	JGE  knext
	LEAQ (R13)(CX*4), R15
	VMOVUPS (R15), Z0
	ADDQ R10, R15
	VMOVUPS (R15), Z1
	ADDQ R10, R15
	VMOVUPS (R15), Z2
	ADDQ R10, R15
	VMOVUPS (R15), Z3
	ADDQ R10, R15
	VMOVUPS (R15), Z4
	ADDQ R10, R15
	VMOVUPS (R15), Z5
	ADDQ R10, R15
	VMOVUPS (R15), Z6
	ADDQ R10, R15
	VMOVUPS (R15), Z7
	ADDQ R10, R15
	VMOVUPS (R15), Z8
	ADDQ R10, R15
	VMOVUPS (R15), Z9
	ADDQ R10, R15
	VMOVUPS (R15), Z10
	ADDQ R10, R15
	VMOVUPS (R15), Z11
	ADDQ R10, R15
	VMOVUPS (R15), Z12
	ADDQ R10, R15
	VMOVUPS (R15), Z13
	ADDQ R10, R15
	VMOVUPS (R15), Z14
	ADDQ R10, R15
	VMOVUPS (R15), Z15
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z24
	VUNPCKLPS Z3, Z2, Z17
	VUNPCKHPS Z3, Z2, Z25
	VUNPCKLPS Z5, Z4, Z18
	VUNPCKHPS Z5, Z4, Z26
	VUNPCKLPS Z7, Z6, Z19
	VUNPCKHPS Z7, Z6, Z27
	VUNPCKLPS Z9, Z8, Z20
	VUNPCKHPS Z9, Z8, Z28
	VUNPCKLPS Z11, Z10, Z21
	VUNPCKHPS Z11, Z10, Z29
	VUNPCKLPS Z13, Z12, Z22
	VUNPCKHPS Z13, Z12, Z30
	VUNPCKLPS Z15, Z14, Z23
	VUNPCKHPS Z15, Z14, Z31
	MOVQ  CX, BX
	IMULQ R11, BX
	ADDQ  R14, BX
	MOVQ  R9, DX
	SUBQ  CX, DX
	VUNPCKLPD Z17, Z16, Z0
	VUNPCKHPD Z17, Z16, Z1
	VUNPCKLPD Z19, Z18, Z2
	VUNPCKHPD Z19, Z18, Z3
	VUNPCKLPD Z21, Z20, Z4
	VUNPCKHPD Z21, Z20, Z5
	VUNPCKLPD Z23, Z22, Z6
	VUNPCKHPD Z23, Z22, Z7
	VSHUFF64X2 $0x88, Z2, Z0, Z8
	VSHUFF64X2 $0xDD, Z2, Z0, Z9
	VSHUFF64X2 $0x88, Z3, Z1, Z10
	VSHUFF64X2 $0xDD, Z3, Z1, Z11
	VSHUFF64X2 $0x88, Z6, Z4, Z12
	VSHUFF64X2 $0xDD, Z6, Z4, Z13
	VSHUFF64X2 $0x88, Z7, Z5, Z14
	VSHUFF64X2 $0xDD, Z7, Z5, Z15
	VSHUFF64X2 $0x88, Z12, Z8, Z16
	VSHUFF64X2 $0x88, Z14, Z10, Z17
	VSHUFF64X2 $0x88, Z13, Z9, Z18
	VSHUFF64X2 $0x88, Z15, Z11, Z19
	VSHUFF64X2 $0xDD, Z12, Z8, Z20
	VSHUFF64X2 $0xDD, Z14, Z10, Z21
	VSHUFF64X2 $0xDD, Z13, Z9, Z22
	VSHUFF64X2 $0xDD, Z15, Z11, Z23
	CMPQ DX, $0
	JLE  skip1
	MOVQ $0, R12
	IMULQ R11, R12
	VMOVUPS Z16, (BX)(R12*1)
skip1:
	CMPQ DX, $1
	JLE  skip2
	MOVQ $1, R12
	IMULQ R11, R12
	VMOVUPS Z17, (BX)(R12*1)
skip2:
	CMPQ DX, $4
	JLE  skip3
	MOVQ $4, R12
	IMULQ R11, R12
	VMOVUPS Z18, (BX)(R12*1)
skip3:
	CMPQ DX, $5
	JLE  skip4
	MOVQ $5, R12
	IMULQ R11, R12
	VMOVUPS Z19, (BX)(R12*1)
skip4:
	CMPQ DX, $8
	JLE  skip5
	MOVQ $8, R12
	IMULQ R11, R12
	VMOVUPS Z20, (BX)(R12*1)
skip5:
	CMPQ DX, $9
	JLE  skip6
	MOVQ $9, R12
	IMULQ R11, R12
	VMOVUPS Z21, (BX)(R12*1)
skip6:
	CMPQ DX, $12
	JLE  skip7
	MOVQ $12, R12
	IMULQ R11, R12
	VMOVUPS Z22, (BX)(R12*1)
skip7:
	CMPQ DX, $13
	JLE  skip8
	MOVQ $13, R12
	IMULQ R11, R12
	VMOVUPS Z23, (BX)(R12*1)
skip8:
	VUNPCKLPD Z25, Z24, Z0
	VUNPCKHPD Z25, Z24, Z1
	VUNPCKLPD Z27, Z26, Z2
	VUNPCKHPD Z27, Z26, Z3
	VUNPCKLPD Z29, Z28, Z4
	VUNPCKHPD Z29, Z28, Z5
	VUNPCKLPD Z31, Z30, Z6
	VUNPCKHPD Z31, Z30, Z7
	VSHUFF64X2 $0x88, Z2, Z0, Z8
	VSHUFF64X2 $0xDD, Z2, Z0, Z9
	VSHUFF64X2 $0x88, Z3, Z1, Z10
	VSHUFF64X2 $0xDD, Z3, Z1, Z11
	VSHUFF64X2 $0x88, Z6, Z4, Z12
	VSHUFF64X2 $0xDD, Z6, Z4, Z13
	VSHUFF64X2 $0x88, Z7, Z5, Z14
	VSHUFF64X2 $0xDD, Z7, Z5, Z15
	VSHUFF64X2 $0x88, Z12, Z8, Z16
	VSHUFF64X2 $0x88, Z14, Z10, Z17
	VSHUFF64X2 $0x88, Z13, Z9, Z18
	VSHUFF64X2 $0x88, Z15, Z11, Z19
	VSHUFF64X2 $0xDD, Z12, Z8, Z20
	VSHUFF64X2 $0xDD, Z14, Z10, Z21
	VSHUFF64X2 $0xDD, Z13, Z9, Z22
	VSHUFF64X2 $0xDD, Z15, Z11, Z23
	CMPQ DX, $2
	JLE  skip9
	MOVQ $2, R12
	IMULQ R11, R12
	VMOVUPS Z16, (BX)(R12*1)
skip9:
	CMPQ DX, $3
	JLE  skip10
	MOVQ $3, R12
	IMULQ R11, R12
	VMOVUPS Z17, (BX)(R12*1)
skip10:
	CMPQ DX, $6
	JLE  skip11
	MOVQ $6, R12
	IMULQ R11, R12
	VMOVUPS Z18, (BX)(R12*1)
skip11:
	CMPQ DX, $7
	JLE  skip12
	MOVQ $7, R12
	IMULQ R11, R12
	VMOVUPS Z19, (BX)(R12*1)
skip12:
	CMPQ DX, $10
	JLE  skip13
	MOVQ $10, R12
	IMULQ R11, R12
	VMOVUPS Z20, (BX)(R12*1)
skip13:
	CMPQ DX, $11
	JLE  skip14
	MOVQ $11, R12
	IMULQ R11, R12
	VMOVUPS Z21, (BX)(R12*1)
skip14:
	CMPQ DX, $14
	JLE  skip15
	MOVQ $14, R12
	IMULQ R11, R12
	VMOVUPS Z22, (BX)(R12*1)
skip15:
	CMPQ DX, $15
	JLE  skip16
	MOVQ $15, R12
	IMULQ R11, R12
	VMOVUPS Z23, (BX)(R12*1)
skip16:
	ADDQ $16, CX
	JMP  sloop

knext:
	ADDQ $16, AX
	JMP  kloop

done:
	VZEROUPPER
	RET
