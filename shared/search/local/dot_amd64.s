//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX2(a, b []float32) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop32:
	CMPQ CX, $32
	JL   loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JL   reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

scalar:
	CMPQ CX, $0
	JE   done
	VMOVSS (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  scalar

done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func dotI8AVX2(q []int16, c []int8) int32
// The products of 16 int8 codes (sign-extended to int16) and 16 int16
// query values are summed in pairs into 8 int32 lanes (VPMADDWD); four
// independent accumulators, 64 codes per round.
TEXT ·dotI8AVX2(SB), NOSPLIT, $0-52
	MOVQ q_base+0(FP), DI
	MOVQ q_len+8(FP), CX
	MOVQ c_base+24(FP), SI
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

i8loop64:
	CMPQ CX, $64
	JL   i8loop16
	VPMOVSXBW (SI), Y4
	VPMOVSXBW 16(SI), Y5
	VPMOVSXBW 32(SI), Y6
	VPMOVSXBW 48(SI), Y7
	VPMADDWD (DI), Y4, Y4
	VPMADDWD 32(DI), Y5, Y5
	VPMADDWD 64(DI), Y6, Y6
	VPMADDWD 96(DI), Y7, Y7
	VPADDD Y4, Y0, Y0
	VPADDD Y5, Y1, Y1
	VPADDD Y6, Y2, Y2
	VPADDD Y7, Y3, Y3
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $64, CX
	JMP  i8loop64

i8loop16:
	CMPQ CX, $16
	JL   i8reduce
	VPMOVSXBW (SI), Y4
	VPMADDWD (DI), Y4, Y4
	VPADDD Y4, Y0, Y0
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP  i8loop16

i8reduce:
	VPADDD Y1, Y0, Y0
	VPADDD Y3, Y2, Y2
	VPADDD Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPHADDD X0, X0, X0
	VPHADDD X0, X0, X0
	VMOVD X0, AX

i8scalar:
	CMPQ CX, $0
	JE   i8done
	MOVBQSX (SI), BX
	MOVWQSX (DI), DX
	IMULQ DX, BX
	ADDL BX, AX
	INCQ SI
	ADDQ $2, DI
	DECQ CX
	JMP  i8scalar

i8done:
	VZEROUPPER
	MOVL AX, ret+48(FP)
	RET
