#include "textflag.h"

// func hpass2AVX2(ra, rb *byte, ta, tb *float32, bases *int, masks *byte, w *float32, groups, k int)
// Horizontal pass over two rows, 8 outputs per group, k (1..16) taps per output:
// t[j] = w[j][0]*p[s_j] + w[j][1]*p[s_j+1] + ... in that order, a multiply then an add per
// tap (no fused multiply-add), so the sums are bit-identical to the Go loops and to
// hpass2SSE2. Per group, outputs 0-3 read the 16 bytes at bases[2g] and outputs 4-7 the 16
// at bases[2g+1]; for tap t, masks[g][t] (32 bytes, one 128-bit lane per half) moves byte
// s_j+t-base of each output into the low byte of its 32-bit lane and zeroes the rest
// (VPSHUFB), which is the tap's 8 samples as int32, converted to float.
// weights w: [group][tap][8 lanes]. The caller guarantees the 16-byte loads are in bounds.
TEXT ·hpass2AVX2(SB), NOSPLIT, $0-72
	MOVQ ra+0(FP), DI
	MOVQ rb+8(FP), SI
	MOVQ ta+16(FP), R8
	MOVQ tb+24(FP), R9
	MOVQ bases+32(FP), R10
	MOVQ masks+40(FP), R11
	MOVQ w+48(FP), R12
	MOVQ groups+56(FP), CX
	MOVQ k+64(FP), DX
group:
	TESTQ CX, CX
	JZ done
	MOVQ 0(R10), AX
	MOVQ 8(R10), BX
	VMOVDQU (DI)(AX*1), X0
	VINSERTI128 $1, (DI)(BX*1), Y0, Y0
	VMOVDQU (SI)(AX*1), X1
	VINSERTI128 $1, (SI)(BX*1), Y1, Y1
	// Tap 0: acc = w0*p0.
	VMOVDQU (R11), Y2
	VMOVUPS (R12), Y3
	VPSHUFB Y2, Y0, Y4
	VPSHUFB Y2, Y1, Y5
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VMULPS Y3, Y4, Y6
	VMULPS Y3, Y5, Y7
	ADDQ $32, R11
	ADDQ $32, R12
	MOVQ DX, BX
	DECQ BX
	JZ store
tap:
	// acc += w_t*p_t.
	VMOVDQU (R11), Y2
	VMOVUPS (R12), Y3
	VPSHUFB Y2, Y0, Y4
	VPSHUFB Y2, Y1, Y5
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VMULPS Y3, Y4, Y4
	VMULPS Y3, Y5, Y5
	VADDPS Y4, Y6, Y6
	VADDPS Y5, Y7, Y7
	ADDQ $32, R11
	ADDQ $32, R12
	DECQ BX
	JNZ tap
store:
	VMOVUPS Y6, (R8)
	VMOVUPS Y7, (R9)
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $16, R10
	DECQ CX
	JMP group
done:
	VZEROUPPER
	RET
