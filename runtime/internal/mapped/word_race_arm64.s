//go:build race

#include "textflag.h"

// func load(p *uint64) uint64
TEXT ·load(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	LDAR (R0), R0
	MOVD R0, ret+8(FP)
	RET

// func store(p *uint64, v uint64)
TEXT ·store(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD v+8(FP), R1
	STLR R1, (R0)
	RET

// func add(p *uint64, d uint64) uint64
TEXT ·add(SB), NOSPLIT, $0-24
	MOVD p+0(FP), R0
	MOVD d+8(FP), R1
again:
	LDAXR (R0), R2
	ADD R1, R2
	STLXR R2, (R0), R3
	CBNZ R3, again
	MOVD R2, ret+16(FP)
	RET

// func cas(p *uint64, old, new uint64) bool
TEXT ·cas(SB), NOSPLIT, $0-25
	MOVD p+0(FP), R0
	MOVD old+8(FP), R1
	MOVD new+16(FP), R2
again:
	LDAXR (R0), R3
	CMP R1, R3
	BNE done
	STLXR R2, (R0), R3
	CBNZ R3, again
done:
	CSET EQ, R4
	MOVB R4, ret+24(FP)
	RET

// func or(p *uint64, mask uint64) uint64
TEXT ·or(SB), NOSPLIT, $0-24
	MOVD p+0(FP), R0
	MOVD mask+8(FP), R1
again:
	LDAXR (R0), R2
	ORR R1, R2, R3
	STLXR R3, (R0), R4
	CBNZ R4, again
	MOVD R2, ret+16(FP)
	RET

// func and(p *uint64, mask uint64) uint64
TEXT ·and(SB), NOSPLIT, $0-24
	MOVD p+0(FP), R0
	MOVD mask+8(FP), R1
again:
	LDAXR (R0), R2
	AND R1, R2, R3
	STLXR R3, (R0), R4
	CBNZ R4, again
	MOVD R2, ret+16(FP)
	RET
