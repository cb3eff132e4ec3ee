#include "textflag.h"

// Lane order after VPACKSSDW/VPACKUSWB of four 8-lane vectors: dwords (0,4,1,5,2,6,3,7).
DATA vsumPerm<>+0(SB)/4, $0
DATA vsumPerm<>+4(SB)/4, $4
DATA vsumPerm<>+8(SB)/4, $1
DATA vsumPerm<>+12(SB)/4, $5
DATA vsumPerm<>+16(SB)/4, $2
DATA vsumPerm<>+20(SB)/4, $6
DATA vsumPerm<>+24(SB)/4, $3
DATA vsumPerm<>+28(SB)/4, $7
GLOBL vsumPerm<>(SB), RODATA|NOPTR, $32

// func vsumAVX2(dst *byte, n int, src *float32, stride int, w *float32, k int)
// dst[x] = sat8(trunc(sum_t w[t] * src[t*stride + x] + 0.5)) for x in [0, n), n % 32 == 0:
// the sum starts at 0 and adds a multiply (never fused) per tap in tap order, as vsumSSE2
// and vsumGo, so the bytes are the same. 32 outputs per pass, four independent sums.
TEXT ·vsumAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ src+16(FP), SI
	MOVQ stride+24(FP), DX
	SHLQ $2, DX                 // row stride in bytes
	MOVQ w+32(FP), R8
	MOVQ k+40(FP), R9
	MOVL $0x3f000000, AX        // 0.5f
	MOVL AX, X7
	VBROADCASTSS X7, Y7
	VMOVDQU vsumPerm<>(SB), Y8
	XORQ R10, R10               // x
loop:
	CMPQ R10, CX
	JGE done
	VXORPS Y0, Y0, Y0
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	LEAQ (SI)(R10*4), R12
	MOVQ R8, R13
	MOVQ R9, R11
tap:
	VBROADCASTSS (R13), Y2
	VMULPS (R12), Y2, Y1
	VADDPS Y1, Y0, Y0
	VMULPS 32(R12), Y2, Y1
	VADDPS Y1, Y3, Y3
	VMULPS 64(R12), Y2, Y1
	VADDPS Y1, Y4, Y4
	VMULPS 96(R12), Y2, Y1
	VADDPS Y1, Y5, Y5
	ADDQ DX, R12
	ADDQ $4, R13
	DECQ R11
	JNZ tap
	VADDPS Y7, Y0, Y0
	VADDPS Y7, Y3, Y3
	VADDPS Y7, Y4, Y4
	VADDPS Y7, Y5, Y5
	VCVTTPS2DQ Y0, Y0
	VCVTTPS2DQ Y3, Y3
	VCVTTPS2DQ Y4, Y4
	VCVTTPS2DQ Y5, Y5
	VPACKSSDW Y3, Y0, Y0        // per 128-bit lane: x0-3, x8-11 | x4-7, x12-15
	VPACKSSDW Y5, Y4, Y4
	VPACKUSWB Y4, Y0, Y0
	VPERMD Y0, Y8, Y0
	VMOVDQU Y0, (DI)(R10*1)
	ADDQ $32, R10
	JMP loop
done:
	VZEROUPPER
	RET
