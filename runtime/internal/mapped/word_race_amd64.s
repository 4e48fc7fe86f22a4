//go:build race

#include "textflag.h"

// func load(p *uint64) uint64
TEXT ·load(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ 0(AX), AX
	MOVQ AX, ret+8(FP)
	RET

// func store(p *uint64, v uint64)
TEXT ·store(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), BX
	MOVQ v+8(FP), AX
	XCHGQ AX, 0(BX)
	RET

// func add(p *uint64, d uint64) uint64
TEXT ·add(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), BX
	MOVQ d+8(FP), AX
	MOVQ AX, CX
	LOCK
	XADDQ AX, 0(BX)
	ADDQ CX, AX
	MOVQ AX, ret+16(FP)
	RET

// func cas(p *uint64, old, new uint64) bool
TEXT ·cas(SB), NOSPLIT, $0-25
	MOVQ p+0(FP), BX
	MOVQ old+8(FP), AX
	MOVQ new+16(FP), CX
	LOCK
	CMPXCHGQ CX, 0(BX)
	SETEQ ret+24(FP)
	RET

// func or(p *uint64, mask uint64) uint64
TEXT ·or(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), BX
	MOVQ mask+8(FP), CX
	MOVQ 0(BX), AX
again:
	MOVQ AX, DX
	ORQ CX, DX
	LOCK
	CMPXCHGQ DX, 0(BX)
	JNE again
	MOVQ AX, ret+16(FP)
	RET

// func and(p *uint64, mask uint64) uint64
TEXT ·and(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), BX
	MOVQ mask+8(FP), CX
	MOVQ 0(BX), AX
again:
	MOVQ AX, DX
	ANDQ CX, DX
	LOCK
	CMPXCHGQ DX, 0(BX)
	JNE again
	MOVQ AX, ret+16(FP)
	RET
