//go:build goexperiment.simd && amd64

#include "textflag.h"

// gemmAVX512 is the one small matrix product behind the Trainer's AVX-512
// path, in float32 (see gemm_avx512_amd64.go for the contract):
//
//	out[i·ldo + c] = Σ_{k<kd} a[i·ai + k·ak] · b[k·ldb + c]   (+ bias)
//
// Every element is the sequential sum from +0: VMULPS rounds each product
// to single precision (src1 = the a value, src2 = the b value, as the
// scalar a*b), then VADDPS adds it to the running sum (src1 = the sum), one
// k after the other; the bias, if any, is added last. No fused multiply-add
// anywhere. Mode bits 2 and 3 then apply ReLU or zero the lanes whose mask
// is not positive (the ReLU derivative), so the forward pass and
// back-propagation need no second pass over their results.
//
// Register blocking: four rows of out × 32 columns live in Z0–Z7 (two
// vectors of 16 floats per row) while k runs; per k two vectors of b's row
// k are loaded once and serve the four rows, whose a values are broadcast
// (VBROADCASTSS) from memory. Columns left over (fewer than 32) are done 32
// wide with the upper vector masked (K2) or 16 wide masked (K1); rows left
// over (rows mod 4) one at a time the same way. Masked-off lanes are loaded
// as zeros and never stored.
//
// Registers: DI out (row block), SI a (row block), DX b, CX rows left,
// AX column offset in bytes, R13 columns left, R8 ldo·4, R9 ai·4, R10 ak·4,
// R11 ldb·4, R12 3·ai·4; in the k loop R14 walks a, R15 walks b, BX counts.

// masks<>: entry r (r = 0…16) is the 16-bit lane mask (1 << r) − 1.
DATA masks<>+0(SB)/2, $0x0000
DATA masks<>+2(SB)/2, $0x0001
DATA masks<>+4(SB)/2, $0x0003
DATA masks<>+6(SB)/2, $0x0007
DATA masks<>+8(SB)/2, $0x000f
DATA masks<>+10(SB)/2, $0x001f
DATA masks<>+12(SB)/2, $0x003f
DATA masks<>+14(SB)/2, $0x007f
DATA masks<>+16(SB)/2, $0x00ff
DATA masks<>+18(SB)/2, $0x01ff
DATA masks<>+20(SB)/2, $0x03ff
DATA masks<>+22(SB)/2, $0x07ff
DATA masks<>+24(SB)/2, $0x0fff
DATA masks<>+26(SB)/2, $0x1fff
DATA masks<>+28(SB)/2, $0x3fff
DATA masks<>+30(SB)/2, $0x7fff
DATA masks<>+32(SB)/2, $0xffff
GLOBL masks<>(SB), RODATA|NOPTR, $34

// Epilogue flags (mode bits 2 and 3), applied after the bias and before
// the store. RELU(z) zeroes the lanes with z ≤ 0 (NaN stays, as in
// relu32): keep where !(z ≤ 0), predicate NLE_UQ. MASKV(z, addr) and
// MASKVK(z, addr, k) zero the lanes whose mask value at the same position
// is not > 0 (the ReLU derivative of backLayer32Scalar: predicate GT_OQ, so NaN zeroes too); Z31
// holds zeros, Z30 and K3 are scratch.
#define RELU(z) \
	VCMPPS $6, Z31, z, K3; \
	VMOVUPS.Z z, K3, z

#define MASKV(z, addr) \
	VMOVUPS addr, Z30; \
	VCMPPS $14, Z31, Z30, K3; \
	VMOVUPS.Z z, K3, z

#define MASKVK(z, addr, k) \
	VMOVUPS.Z addr, k, Z30; \
	VCMPPS $14, Z31, Z30, K3; \
	VMOVUPS.Z z, K3, z

// MASKROW leaves in R14 the address of the mask element of the block's
// first row and column (mask + (rows − CX)·ldo + column), in R15 that of
// its third row.
#define MASKROW \
	MOVQ rows+72(FP), R14; \
	SUBQ CX, R14; \
	IMULQ R8, R14; \
	ADDQ mask+32(FP), R14; \
	ADDQ AX, R14; \
	LEAQ (R14)(R8*2), R15

// func gemmAVX512(out, a, b, bias, mask *float32, ldo, ai, ak, ldb, rows, kd, cols, mode int)
TEXT ·gemmAVX512(SB), NOSPLIT, $0-104
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ ldo+40(FP), R8
	SHLQ $2, R8
	MOVQ ai+48(FP), R9
	SHLQ $2, R9
	MOVQ ak+56(FP), R10
	SHLQ $2, R10
	MOVQ ldb+64(FP), R11
	SHLQ $2, R11
	LEAQ (R9)(R9*2), R12
	MOVQ rows+72(FP), CX
	VPXORQ Z31, Z31, Z31

rows4:
	CMPQ CX, $4
	JLT  rows1
	XORQ AX, AX
	MOVQ cols+88(FP), R13

r4wide:
	CMPQ R13, $16
	JLE  r4tail

	// K2 masks the upper 16 columns: min(R13 − 16, 16) of them are real.
	MOVQ R13, BX
	SUBQ $16, BX
	MOVQ $16, R14
	CMPQ BX, R14
	CMOVQGT R14, BX
	LEAQ masks<>(SB), R14
	KMOVW (R14)(BX*2), K2

	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	MOVQ SI, R14
	LEAQ (DX)(AX*1), R15
	MOVQ kd+80(FP), BX
	TESTQ BX, BX
	JZ   r4widebias

r4widek:
	VMOVUPS      (R15), Z16
	VMOVUPS.Z    64(R15), K2, Z17
	VBROADCASTSS (R14), Z18
	VBROADCASTSS (R14)(R9*1), Z19
	VBROADCASTSS (R14)(R9*2), Z20
	VBROADCASTSS (R14)(R12*1), Z21
	VMULPS       Z16, Z18, Z22
	VMULPS       Z17, Z18, Z23
	VMULPS       Z16, Z19, Z24
	VMULPS       Z17, Z19, Z25
	VMULPS       Z16, Z20, Z26
	VMULPS       Z17, Z20, Z27
	VMULPS       Z16, Z21, Z28
	VMULPS       Z17, Z21, Z29
	VADDPS       Z22, Z0, Z0
	VADDPS       Z23, Z1, Z1
	VADDPS       Z24, Z2, Z2
	VADDPS       Z25, Z3, Z3
	VADDPS       Z26, Z4, Z4
	VADDPS       Z27, Z5, Z5
	VADDPS       Z28, Z6, Z6
	VADDPS       Z29, Z7, Z7
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r4widek

r4widebias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r4widestore
	JGT  r4widecolbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	LEAQ (R15)(BX*4), R15
	VBROADCASTSS (R15), Z18
	VBROADCASTSS 4(R15), Z19
	VBROADCASTSS 8(R15), Z20
	VBROADCASTSS 12(R15), Z21
	VADDPS Z18, Z0, Z0
	VADDPS Z18, Z1, Z1
	VADDPS Z19, Z2, Z2
	VADDPS Z19, Z3, Z3
	VADDPS Z20, Z4, Z4
	VADDPS Z20, Z5, Z5
	VADDPS Z21, Z6, Z6
	VADDPS Z21, Z7, Z7
	JMP  r4widestore

r4widecolbias:
	MOVQ      bias+24(FP), R15
	VMOVUPS   (R15)(AX*1), Z18
	VMOVUPS.Z 64(R15)(AX*1), K2, Z19
	VADDPS    Z18, Z0, Z0
	VADDPS    Z19, Z1, Z1
	VADDPS    Z18, Z2, Z2
	VADDPS    Z19, Z3, Z3
	VADDPS    Z18, Z4, Z4
	VADDPS    Z19, Z5, Z5
	VADDPS    Z18, Z6, Z6
	VADDPS    Z19, Z7, Z7

r4widestore:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r4widenorelu
	RELU(Z0)
	RELU(Z1)
	RELU(Z2)
	RELU(Z3)
	RELU(Z4)
	RELU(Z5)
	RELU(Z6)
	RELU(Z7)
r4widenorelu:
	TESTQ $8, BX
	JZ    r4widenomask
	MASKROW
	MASKV(Z0, (R14))
	MASKVK(Z1, 64(R14), K2)
	MASKV(Z2, (R14)(R8*1))
	MASKVK(Z3, 64(R14)(R8*1), K2)
	MASKV(Z4, (R15))
	MASKVK(Z5, 64(R15), K2)
	MASKV(Z6, (R15)(R8*1))
	MASKVK(Z7, 64(R15)(R8*1), K2)
r4widenomask:
	LEAQ    (DI)(AX*1), R14
	LEAQ    (R14)(R8*2), R15
	VMOVUPS Z0, (R14)
	VMOVUPS Z1, K2, 64(R14)
	VMOVUPS Z2, (R14)(R8*1)
	VMOVUPS Z3, K2, 64(R14)(R8*1)
	VMOVUPS Z4, (R15)
	VMOVUPS Z5, K2, 64(R15)
	VMOVUPS Z6, (R15)(R8*1)
	VMOVUPS Z7, K2, 64(R15)(R8*1)
	ADDQ    $128, AX
	SUBQ    $32, R13
	JG      r4wide
	JMP     r4next

r4tail:
	// 1…16 columns left (or none).
	TESTQ R13, R13
	JLE   r4next
	LEAQ  masks<>(SB), R14
	KMOVW (R14)(R13*2), K1

	VPXORQ Z0, Z0, Z0
	VPXORQ Z2, Z2, Z2
	VPXORQ Z4, Z4, Z4
	VPXORQ Z6, Z6, Z6
	MOVQ SI, R14
	LEAQ (DX)(AX*1), R15
	MOVQ kd+80(FP), BX
	TESTQ BX, BX
	JZ   r4tailbias

r4tailk:
	VMOVUPS.Z    (R15), K1, Z16
	VBROADCASTSS (R14), Z18
	VBROADCASTSS (R14)(R9*1), Z19
	VBROADCASTSS (R14)(R9*2), Z20
	VBROADCASTSS (R14)(R12*1), Z21
	VMULPS       Z16, Z18, Z22
	VMULPS       Z16, Z19, Z24
	VMULPS       Z16, Z20, Z26
	VMULPS       Z16, Z21, Z28
	VADDPS       Z22, Z0, Z0
	VADDPS       Z24, Z2, Z2
	VADDPS       Z26, Z4, Z4
	VADDPS       Z28, Z6, Z6
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r4tailk

r4tailbias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r4tailstore
	JGT  r4tailcolbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	LEAQ (R15)(BX*4), R15
	VBROADCASTSS (R15), Z18
	VBROADCASTSS 4(R15), Z19
	VBROADCASTSS 8(R15), Z20
	VBROADCASTSS 12(R15), Z21
	VADDPS Z18, Z0, Z0
	VADDPS Z19, Z2, Z2
	VADDPS Z20, Z4, Z4
	VADDPS Z21, Z6, Z6
	JMP  r4tailstore

r4tailcolbias:
	MOVQ      bias+24(FP), R15
	VMOVUPS.Z (R15)(AX*1), K1, Z18
	VADDPS    Z18, Z0, Z0
	VADDPS    Z18, Z2, Z2
	VADDPS    Z18, Z4, Z4
	VADDPS    Z18, Z6, Z6

r4tailstore:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r4tailnorelu
	RELU(Z0)
	RELU(Z2)
	RELU(Z4)
	RELU(Z6)
r4tailnorelu:
	TESTQ $8, BX
	JZ    r4tailnomask
	MASKROW
	MASKVK(Z0, (R14), K1)
	MASKVK(Z2, (R14)(R8*1), K1)
	MASKVK(Z4, (R15), K1)
	MASKVK(Z6, (R15)(R8*1), K1)
r4tailnomask:
	LEAQ    (DI)(AX*1), R14
	LEAQ    (R14)(R8*2), R15
	VMOVUPS Z0, K1, (R14)
	VMOVUPS Z2, K1, (R14)(R8*1)
	VMOVUPS Z4, K1, (R15)
	VMOVUPS Z6, K1, (R15)(R8*1)

r4next:
	LEAQ (SI)(R9*4), SI
	LEAQ (DI)(R8*4), DI
	SUBQ $4, CX
	JMP  rows4

rows1:
	// The last rows mod 4 rows, one at a time.
	TESTQ CX, CX
	JLE   done
	XORQ  AX, AX
	MOVQ  cols+88(FP), R13

r1wide:
	CMPQ R13, $16
	JLE  r1tail
	MOVQ R13, BX
	SUBQ $16, BX
	MOVQ $16, R14
	CMPQ BX, R14
	CMOVQGT R14, BX
	LEAQ masks<>(SB), R14
	KMOVW (R14)(BX*2), K2

	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	MOVQ SI, R14
	LEAQ (DX)(AX*1), R15
	MOVQ kd+80(FP), BX
	TESTQ BX, BX
	JZ   r1widebias

r1widek:
	VMOVUPS      (R15), Z16
	VMOVUPS.Z    64(R15), K2, Z17
	VBROADCASTSS (R14), Z18
	VMULPS       Z16, Z18, Z22
	VMULPS       Z17, Z18, Z23
	VADDPS       Z22, Z0, Z0
	VADDPS       Z23, Z1, Z1
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r1widek

r1widebias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r1widestore
	JGT  r1widecolbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	VBROADCASTSS (R15)(BX*4), Z18
	VADDPS Z18, Z0, Z0
	VADDPS Z18, Z1, Z1
	JMP  r1widestore

r1widecolbias:
	MOVQ      bias+24(FP), R15
	VMOVUPS   (R15)(AX*1), Z18
	VMOVUPS.Z 64(R15)(AX*1), K2, Z19
	VADDPS    Z18, Z0, Z0
	VADDPS    Z19, Z1, Z1

r1widestore:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r1widenorelu
	RELU(Z0)
	RELU(Z1)
r1widenorelu:
	TESTQ $8, BX
	JZ    r1widenomask
	MASKROW
	MASKV(Z0, (R14))
	MASKVK(Z1, 64(R14), K2)
r1widenomask:
	VMOVUPS Z0, (DI)(AX*1)
	VMOVUPS Z1, K2, 64(DI)(AX*1)
	ADDQ    $128, AX
	SUBQ    $32, R13
	JG      r1wide
	JMP     r1next

r1tail:
	TESTQ R13, R13
	JLE   r1next
	LEAQ  masks<>(SB), R14
	KMOVW (R14)(R13*2), K1

	VPXORQ Z0, Z0, Z0
	MOVQ SI, R14
	LEAQ (DX)(AX*1), R15
	MOVQ kd+80(FP), BX
	TESTQ BX, BX
	JZ   r1tailbias

r1tailk:
	VMOVUPS.Z    (R15), K1, Z16
	VBROADCASTSS (R14), Z18
	VMULPS       Z16, Z18, Z22
	VADDPS       Z22, Z0, Z0
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r1tailk

r1tailbias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r1tailstore
	JGT  r1tailcolbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	VBROADCASTSS (R15)(BX*4), Z18
	VADDPS Z18, Z0, Z0
	JMP  r1tailstore

r1tailcolbias:
	MOVQ      bias+24(FP), R15
	VMOVUPS.Z (R15)(AX*1), K1, Z18
	VADDPS    Z18, Z0, Z0

r1tailstore:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r1tailnorelu
	RELU(Z0)
r1tailnorelu:
	TESTQ $8, BX
	JZ    r1tailnomask
	MASKROW
	MASKVK(Z0, (R14), K1)
r1tailnomask:
	VMOVUPS Z0, K1, (DI)(AX*1)

r1next:
	ADDQ R9, SI
	ADDQ R8, DI
	DECQ CX
	JMP  rows1

done:
	VZEROUPPER
	RET
