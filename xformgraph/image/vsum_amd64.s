#include "textflag.h"

// func vsumSSE2(dst *byte, n int, src *float32, stride int, w *[4]float32, k int)
// dst[x] = sat8(trunc(sum_t w[t] * src[t*stride + x] + 0.5)) for x in [0, n), n % 4 == 0.
// w holds each tap's weight broadcast to 4 lanes. SSE2 only (amd64 baseline).
TEXT ·vsumSSE2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ src+16(FP), SI
	MOVQ stride+24(FP), DX
	SHLQ $2, DX                 // row stride in bytes
	MOVQ w+32(FP), R8
	MOVQ k+40(FP), R9
	MOVL $0x3f000000, AX        // 0.5f
	MOVL AX, X7
	SHUFPS $0, X7, X7
	XORQ R10, R10               // x
	MOVQ CX, R14
	SUBQ $16, R14               // last x with 16 lanes left
loop16:
	// 16 outputs per pass, four independent sums (same per-lane order as below).
	CMPQ R10, R14
	JG loop
	XORPS X0, X0
	XORPS X3, X3
	XORPS X4, X4
	XORPS X5, X5
	LEAQ (SI)(R10*4), R12
	MOVQ R8, R13
	MOVQ R9, R11
tap16:
	MOVUPS (R13), X2
	MOVUPS (R12), X1
	MULPS X2, X1
	ADDPS X1, X0
	MOVUPS 16(R12), X1
	MULPS X2, X1
	ADDPS X1, X3
	MOVUPS 32(R12), X1
	MULPS X2, X1
	ADDPS X1, X4
	MOVUPS 48(R12), X1
	MULPS X2, X1
	ADDPS X1, X5
	ADDQ DX, R12
	ADDQ $16, R13
	DECQ R11
	JNZ tap16
	ADDPS X7, X0
	ADDPS X7, X3
	ADDPS X7, X4
	ADDPS X7, X5
	CVTTPS2PL X0, X0
	CVTTPS2PL X3, X3
	CVTTPS2PL X4, X4
	CVTTPS2PL X5, X5
	PACKSSLW X3, X0
	PACKSSLW X5, X4
	PACKUSWB X4, X0
	MOVOU X0, (DI)(R10*1)
	ADDQ $16, R10
	JMP loop16
loop:
	CMPQ R10, CX
	JGE done
	XORPS X0, X0
	LEAQ (SI)(R10*4), R12       // &src[x] in row 0
	MOVQ R8, R13                // weights
	MOVQ R9, R11                // taps left
tap:
	MOVUPS (R12), X1
	MOVUPS (R13), X2
	MULPS X2, X1
	ADDPS X1, X0
	ADDQ DX, R12
	ADDQ $16, R13
	DECQ R11
	JNZ tap
	ADDPS X7, X0
	CVTTPS2PL X0, X0
	PACKSSLW X0, X0
	PACKUSWB X0, X0
	MOVL X0, AX
	MOVL AX, (DI)(R10*1)
	ADDQ $4, R10
	JMP loop
done:
	RET
