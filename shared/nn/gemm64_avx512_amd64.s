//go:build goexperiment.simd && amd64

#include "textflag.h"

// gemm64AVX512 is the float64 twin of gemmAVX512 (gemm_avx512_amd64.s),
// behind MLP.Predict's AVX-512 path (see gemm64_avx512_amd64.go for the
// contract):
//
//	out[i·ldo + c] = Σ_{k<kd} a[i·ai + k·ak] · b[k·ldb + c]   (+ bias)
//
// Every element is the sequential sum from +0: VMULPD rounds each product
// (src1 = the a value, src2 = the b value, as the scalar a*b), then VADDPD
// adds it to the running sum (src1 = the sum), one k after the other; the
// bias, if any, is added last. No fused multiply-add anywhere. Mode bits 2
// and 3 then apply ReLU or zero the lanes whose mask is not positive
// (the ReLU derivative). gemm64 passes no flags (Predict applies relu
// itself); the flag code is kept as the third pass tested it.
//
// Register blocking: four rows of out × 16 columns live in Z0–Z7 while k
// runs; per k two vectors of b's row k are loaded once and serve the four
// rows, whose a values are broadcast (VBROADCASTSD) from memory. Columns
// left over (fewer than 16) are done 16 wide with the upper half masked
// (K2) or 8 wide masked (K1); rows left over (rows mod 4) one at a time the
// same way. Masked-off lanes are loaded as zeros and never stored.
//
// Registers: DI out (row block), SI a (row block), DX b, CX rows left,
// AX column offset in bytes, R13 columns left, R8 ldo·8, R9 ai·8, R10 ak·8,
// R11 ldb·8, R12 3·ai·8; in the k loop R14 walks a, R15 walks b, BX counts.

// masks<>: entry r (r = 0…8) is the 16-bit lane mask (1 << r) − 1.
DATA masks<>+0(SB)/2, $0x0000
DATA masks<>+2(SB)/2, $0x0001
DATA masks<>+4(SB)/2, $0x0003
DATA masks<>+6(SB)/2, $0x0007
DATA masks<>+8(SB)/2, $0x000f
DATA masks<>+10(SB)/2, $0x001f
DATA masks<>+12(SB)/2, $0x003f
DATA masks<>+14(SB)/2, $0x007f
DATA masks<>+16(SB)/2, $0x00ff
GLOBL masks<>(SB), RODATA|NOPTR, $18

// Epilogue flags (mode bits 2 and 3), applied after the bias and before
// the store. RELU(z) zeroes the lanes with z ≤ 0 (NaN stays, as in
// reluScalar): keep where !(z ≤ 0), predicate NLE_UQ. MASKV(z, addr) and
// MASKVK(z, addr, k) zero the lanes whose mask value at the same position
// is not > 0 (predicate GT_OQ, so NaN zeroes too); Z31
// holds zeros, Z30 and K3 are scratch.
#define RELU(z) \
	VCMPPD $6, Z31, z, K3; \
	VMOVUPD.Z z, K3, z

#define MASKV(z, addr) \
	VMOVUPD addr, Z30; \
	VCMPPD $14, Z31, Z30, K3; \
	VMOVUPD.Z z, K3, z

#define MASKVK(z, addr, k) \
	VMOVUPD.Z addr, k, Z30; \
	VCMPPD $14, Z31, Z30, K3; \
	VMOVUPD.Z z, K3, z

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

// func gemm64AVX512(out, a, b, bias, mask *float64, ldo, ai, ak, ldb, rows, kd, cols, mode int)
TEXT ·gemm64AVX512(SB), NOSPLIT, $0-104
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ ldo+40(FP), R8
	SHLQ $3, R8
	MOVQ ai+48(FP), R9
	SHLQ $3, R9
	MOVQ ak+56(FP), R10
	SHLQ $3, R10
	MOVQ ldb+64(FP), R11
	SHLQ $3, R11
	LEAQ (R9)(R9*2), R12
	MOVQ rows+72(FP), CX
	VPXORQ Z31, Z31, Z31

rows4:
	CMPQ CX, $4
	JLT  rows1
	XORQ AX, AX
	MOVQ cols+88(FP), R13

r4c16:
	CMPQ R13, $8
	JLE  r4c8

	// K2 masks the upper eight columns: min(R13 − 8, 8) of them are real.
	MOVQ R13, BX
	SUBQ $8, BX
	MOVQ $8, R14
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
	JZ   r4c16bias

r4c16k:
	VMOVUPD      (R15), Z16
	VMOVUPD.Z    64(R15), K2, Z17
	VBROADCASTSD (R14), Z18
	VBROADCASTSD (R14)(R9*1), Z19
	VBROADCASTSD (R14)(R9*2), Z20
	VBROADCASTSD (R14)(R12*1), Z21
	VMULPD       Z16, Z18, Z22
	VMULPD       Z17, Z18, Z23
	VMULPD       Z16, Z19, Z24
	VMULPD       Z17, Z19, Z25
	VMULPD       Z16, Z20, Z26
	VMULPD       Z17, Z20, Z27
	VMULPD       Z16, Z21, Z28
	VMULPD       Z17, Z21, Z29
	VADDPD       Z22, Z0, Z0
	VADDPD       Z23, Z1, Z1
	VADDPD       Z24, Z2, Z2
	VADDPD       Z25, Z3, Z3
	VADDPD       Z26, Z4, Z4
	VADDPD       Z27, Z5, Z5
	VADDPD       Z28, Z6, Z6
	VADDPD       Z29, Z7, Z7
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r4c16k

r4c16bias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r4c16store
	JGT  r4c16colbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	LEAQ (R15)(BX*8), R15
	VBROADCASTSD (R15), Z18
	VBROADCASTSD 8(R15), Z19
	VBROADCASTSD 16(R15), Z20
	VBROADCASTSD 24(R15), Z21
	VADDPD Z18, Z0, Z0
	VADDPD Z18, Z1, Z1
	VADDPD Z19, Z2, Z2
	VADDPD Z19, Z3, Z3
	VADDPD Z20, Z4, Z4
	VADDPD Z20, Z5, Z5
	VADDPD Z21, Z6, Z6
	VADDPD Z21, Z7, Z7
	JMP  r4c16store

r4c16colbias:
	MOVQ      bias+24(FP), R15
	VMOVUPD   (R15)(AX*1), Z18
	VMOVUPD.Z 64(R15)(AX*1), K2, Z19
	VADDPD    Z18, Z0, Z0
	VADDPD    Z19, Z1, Z1
	VADDPD    Z18, Z2, Z2
	VADDPD    Z19, Z3, Z3
	VADDPD    Z18, Z4, Z4
	VADDPD    Z19, Z5, Z5
	VADDPD    Z18, Z6, Z6
	VADDPD    Z19, Z7, Z7

r4c16store:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r4c16norelu
	RELU(Z0)
	RELU(Z1)
	RELU(Z2)
	RELU(Z3)
	RELU(Z4)
	RELU(Z5)
	RELU(Z6)
	RELU(Z7)
r4c16norelu:
	TESTQ $8, BX
	JZ    r4c16nomask
	MASKROW
	MASKV(Z0, (R14))
	MASKVK(Z1, 64(R14), K2)
	MASKV(Z2, (R14)(R8*1))
	MASKVK(Z3, 64(R14)(R8*1), K2)
	MASKV(Z4, (R15))
	MASKVK(Z5, 64(R15), K2)
	MASKV(Z6, (R15)(R8*1))
	MASKVK(Z7, 64(R15)(R8*1), K2)
r4c16nomask:
	LEAQ    (DI)(AX*1), R14
	LEAQ    (R14)(R8*2), R15
	VMOVUPD Z0, (R14)
	VMOVUPD Z1, K2, 64(R14)
	VMOVUPD Z2, (R14)(R8*1)
	VMOVUPD Z3, K2, 64(R14)(R8*1)
	VMOVUPD Z4, (R15)
	VMOVUPD Z5, K2, 64(R15)
	VMOVUPD Z6, (R15)(R8*1)
	VMOVUPD Z7, K2, 64(R15)(R8*1)
	ADDQ    $128, AX
	SUBQ    $16, R13
	JG      r4c16
	JMP     r4next

r4c8:
	// 1…8 columns left (or none).
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
	JZ   r4c8bias

r4c8k:
	VMOVUPD.Z    (R15), K1, Z16
	VBROADCASTSD (R14), Z18
	VBROADCASTSD (R14)(R9*1), Z19
	VBROADCASTSD (R14)(R9*2), Z20
	VBROADCASTSD (R14)(R12*1), Z21
	VMULPD       Z16, Z18, Z22
	VMULPD       Z16, Z19, Z24
	VMULPD       Z16, Z20, Z26
	VMULPD       Z16, Z21, Z28
	VADDPD       Z22, Z0, Z0
	VADDPD       Z24, Z2, Z2
	VADDPD       Z26, Z4, Z4
	VADDPD       Z28, Z6, Z6
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r4c8k

r4c8bias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r4c8store
	JGT  r4c8colbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	LEAQ (R15)(BX*8), R15
	VBROADCASTSD (R15), Z18
	VBROADCASTSD 8(R15), Z19
	VBROADCASTSD 16(R15), Z20
	VBROADCASTSD 24(R15), Z21
	VADDPD Z18, Z0, Z0
	VADDPD Z19, Z2, Z2
	VADDPD Z20, Z4, Z4
	VADDPD Z21, Z6, Z6
	JMP  r4c8store

r4c8colbias:
	MOVQ      bias+24(FP), R15
	VMOVUPD.Z (R15)(AX*1), K1, Z18
	VADDPD    Z18, Z0, Z0
	VADDPD    Z18, Z2, Z2
	VADDPD    Z18, Z4, Z4
	VADDPD    Z18, Z6, Z6

r4c8store:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r4c8norelu
	RELU(Z0)
	RELU(Z2)
	RELU(Z4)
	RELU(Z6)
r4c8norelu:
	TESTQ $8, BX
	JZ    r4c8nomask
	MASKROW
	MASKVK(Z0, (R14), K1)
	MASKVK(Z2, (R14)(R8*1), K1)
	MASKVK(Z4, (R15), K1)
	MASKVK(Z6, (R15)(R8*1), K1)
r4c8nomask:
	LEAQ    (DI)(AX*1), R14
	LEAQ    (R14)(R8*2), R15
	VMOVUPD Z0, K1, (R14)
	VMOVUPD Z2, K1, (R14)(R8*1)
	VMOVUPD Z4, K1, (R15)
	VMOVUPD Z6, K1, (R15)(R8*1)

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

r1c16:
	CMPQ R13, $8
	JLE  r1c8
	MOVQ R13, BX
	SUBQ $8, BX
	MOVQ $8, R14
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
	JZ   r1c16bias

r1c16k:
	VMOVUPD      (R15), Z16
	VMOVUPD.Z    64(R15), K2, Z17
	VBROADCASTSD (R14), Z18
	VMULPD       Z16, Z18, Z22
	VMULPD       Z17, Z18, Z23
	VADDPD       Z22, Z0, Z0
	VADDPD       Z23, Z1, Z1
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r1c16k

r1c16bias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r1c16store
	JGT  r1c16colbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	VBROADCASTSD (R15)(BX*8), Z18
	VADDPD Z18, Z0, Z0
	VADDPD Z18, Z1, Z1
	JMP  r1c16store

r1c16colbias:
	MOVQ      bias+24(FP), R15
	VMOVUPD   (R15)(AX*1), Z18
	VMOVUPD.Z 64(R15)(AX*1), K2, Z19
	VADDPD    Z18, Z0, Z0
	VADDPD    Z19, Z1, Z1

r1c16store:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r1c16norelu
	RELU(Z0)
	RELU(Z1)
r1c16norelu:
	TESTQ $8, BX
	JZ    r1c16nomask
	MASKROW
	MASKV(Z0, (R14))
	MASKVK(Z1, 64(R14), K2)
r1c16nomask:
	VMOVUPD Z0, (DI)(AX*1)
	VMOVUPD Z1, K2, 64(DI)(AX*1)
	ADDQ    $128, AX
	SUBQ    $16, R13
	JG      r1c16
	JMP     r1next

r1c8:
	TESTQ R13, R13
	JLE   r1next
	LEAQ  masks<>(SB), R14
	KMOVW (R14)(R13*2), K1

	VPXORQ Z0, Z0, Z0
	MOVQ SI, R14
	LEAQ (DX)(AX*1), R15
	MOVQ kd+80(FP), BX
	TESTQ BX, BX
	JZ   r1c8bias

r1c8k:
	VMOVUPD.Z    (R15), K1, Z16
	VBROADCASTSD (R14), Z18
	VMULPD       Z16, Z18, Z22
	VADDPD       Z22, Z0, Z0
	ADDQ         R10, R14
	ADDQ         R11, R15
	DECQ         BX
	JNZ          r1c8k

r1c8bias:
	MOVQ mode+96(FP), BX
	ANDQ $3, BX
	CMPQ BX, $1
	JLT  r1c8store
	JGT  r1c8colbias
	MOVQ rows+72(FP), BX
	SUBQ CX, BX
	MOVQ bias+24(FP), R15
	VBROADCASTSD (R15)(BX*8), Z18
	VADDPD Z18, Z0, Z0
	JMP  r1c8store

r1c8colbias:
	MOVQ      bias+24(FP), R15
	VMOVUPD.Z (R15)(AX*1), K1, Z18
	VADDPD    Z18, Z0, Z0

r1c8store:
	MOVQ  mode+96(FP), BX
	TESTQ $4, BX
	JZ    r1c8norelu
	RELU(Z0)
r1c8norelu:
	TESTQ $8, BX
	JZ    r1c8nomask
	MASKROW
	MASKVK(Z0, (R14), K1)
r1c8nomask:
	VMOVUPD Z0, K1, (DI)(AX*1)

r1next:
	ADDQ R9, SI
	ADDQ R8, DI
	DECQ CX
	JMP  rows1

done:
	VZEROUPPER
	RET
