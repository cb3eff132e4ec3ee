#include "textflag.h"

// func hpass2SSE2(ra, rb *byte, ta, tb *float32, starts *int, w *float32, groups, k int)
// Horizontal pass over two rows with k (1..8) taps per output, 4 outputs per group:
// t[j] = w[j][0]*p[s_j] + w[j][1]*p[s_j+1] + ... in that order (bit-identical to the Go
// loops). starts[j] is s_j; w is transposed per group: w[g][tap][lane]. Reads 8 bytes at
// each s_j (the caller guarantees they are in bounds). SSE2 only (amd64 baseline).
// Frame: 8 tap vectors of row a at 0(SP), of row b at 128(SP).
TEXT ·hpass2SSE2(SB), NOSPLIT, $256-64
	MOVQ ra+0(FP), DI
	MOVQ rb+8(FP), SI
	MOVQ ta+16(FP), R8
	MOVQ tb+24(FP), R9
	MOVQ starts+32(FP), R10
	MOVQ w+40(FP), R11
	MOVQ groups+48(FP), CX
	MOVQ k+56(FP), DX
	PXOR X15, X15
group:
	TESTQ CX, CX
	JZ done
	MOVQ 0(R10), AX
	MOVQ 8(R10), BX
	MOVQ 16(R10), R12
	MOVQ 24(R10), R13

	// Row a: bytes of the 4 lanes, transposed to tap-major, widened to floats.
	MOVQ (DI)(AX*1), X0
	MOVQ (DI)(BX*1), X1
	MOVQ (DI)(R12*1), X2
	MOVQ (DI)(R13*1), X3
	PUNPCKLBW X1, X0  // l0t0 l1t0 l0t1 l1t1 ...
	PUNPCKLBW X3, X2  // l2t0 l3t0 ...
	MOVOU X0, X4
	PUNPCKLWL X2, X0  // taps 0..3, 4 lanes each
	PUNPCKHWL X2, X4  // taps 4..7
	MOVOU X0, X1
	PUNPCKLBW X15, X0 // words: taps 0, 1
	PUNPCKHBW X15, X1 // words: taps 2, 3
	MOVOU X0, X2
	PUNPCKLWL X15, X0
	PUNPCKHWL X15, X2
	CVTPL2PS X0, X0
	CVTPL2PS X2, X2
	MOVUPS X0, 0(SP)
	MOVUPS X2, 16(SP)
	MOVOU X1, X3
	PUNPCKLWL X15, X1
	PUNPCKHWL X15, X3
	CVTPL2PS X1, X1
	CVTPL2PS X3, X3
	MOVUPS X1, 32(SP)
	MOVUPS X3, 48(SP)
	CMPQ DX, $4
	JLE rowb
	MOVOU X4, X5
	PUNPCKLBW X15, X4
	PUNPCKHBW X15, X5
	MOVOU X4, X6
	PUNPCKLWL X15, X4
	PUNPCKHWL X15, X6
	CVTPL2PS X4, X4
	CVTPL2PS X6, X6
	MOVUPS X4, 64(SP)
	MOVUPS X6, 80(SP)
	MOVOU X5, X7
	PUNPCKLWL X15, X5
	PUNPCKHWL X15, X7
	CVTPL2PS X5, X5
	CVTPL2PS X7, X7
	MOVUPS X5, 96(SP)
	MOVUPS X7, 112(SP)

rowb:
	MOVQ (SI)(AX*1), X0
	MOVQ (SI)(BX*1), X1
	MOVQ (SI)(R12*1), X2
	MOVQ (SI)(R13*1), X3
	PUNPCKLBW X1, X0
	PUNPCKLBW X3, X2
	MOVOU X0, X4
	PUNPCKLWL X2, X0
	PUNPCKHWL X2, X4
	MOVOU X0, X1
	PUNPCKLBW X15, X0
	PUNPCKHBW X15, X1
	MOVOU X0, X2
	PUNPCKLWL X15, X0
	PUNPCKHWL X15, X2
	CVTPL2PS X0, X0
	CVTPL2PS X2, X2
	MOVUPS X0, 128(SP)
	MOVUPS X2, 144(SP)
	MOVOU X1, X3
	PUNPCKLWL X15, X1
	PUNPCKHWL X15, X3
	CVTPL2PS X1, X1
	CVTPL2PS X3, X3
	MOVUPS X1, 160(SP)
	MOVUPS X3, 176(SP)
	CMPQ DX, $4
	JLE taps
	MOVOU X4, X5
	PUNPCKLBW X15, X4
	PUNPCKHBW X15, X5
	MOVOU X4, X6
	PUNPCKLWL X15, X4
	PUNPCKHWL X15, X6
	CVTPL2PS X4, X4
	CVTPL2PS X6, X6
	MOVUPS X4, 192(SP)
	MOVUPS X6, 208(SP)
	MOVOU X5, X7
	PUNPCKLWL X15, X5
	PUNPCKHWL X15, X7
	CVTPL2PS X5, X5
	CVTPL2PS X7, X7
	MOVUPS X5, 224(SP)
	MOVUPS X7, 240(SP)

taps:
	// acc = w0*p0, then acc += w_t*p_t for t = 1..k-1.
	MOVUPS 0(R11), X8
	MOVUPS 0(SP), X0
	MOVUPS 128(SP), X1
	MULPS X8, X0
	MULPS X8, X1
	LEAQ 16(R11), R14
	LEAQ 16(SP), R15
	MOVQ DX, BX
	DECQ BX
	JZ store
tap:
	MOVUPS (R14), X8
	MOVUPS (R15), X2
	MOVUPS 128(R15), X3
	MULPS X8, X2
	MULPS X8, X3
	ADDPS X2, X0
	ADDPS X3, X1
	ADDQ $16, R14
	ADDQ $16, R15
	DECQ BX
	JNZ tap
store:
	MOVUPS X0, (R8)
	MOVUPS X1, (R9)
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $32, R10
	MOVQ R14, R11
	DECQ CX
	JMP group
done:
	RET
