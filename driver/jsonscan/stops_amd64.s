//go:build !purego

#include "textflag.h"

// func stopMask(blk *[blockNeed]byte, hi uint64) uint64
//
// For each of the first 64 bytes of blk, a bit (bit i for blk[i]) when it
// is a quote, a backslash, a control character (< 0x20) or, when hi is not
// 0, a byte ≥ 0x80: four 16-byte loads, all within the 80 bytes of blk.
// SSE2 only, which every amd64 processor has.
TEXT ·stopMask(SB), NOSPLIT, $0-24
	MOVQ blk+0(FP), SI
	MOVQ $0x2222222222222222, AX
	MOVQ AX, X8
	PUNPCKLQDQ X8, X8
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X9
	PUNPCKLQDQ X9, X9
	MOVQ $0x1f1f1f1f1f1f1f1f, AX
	MOVQ AX, X10
	PUNPCKLQDQ X10, X10

	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3

	// Quotes and backslashes.
	MOVOU X0, X4
	PCMPEQB X8, X4
	MOVOU X0, X5
	PCMPEQB X9, X5
	POR X5, X4
	MOVOU X1, X5
	PCMPEQB X8, X5
	MOVOU X1, X6
	PCMPEQB X9, X6
	POR X6, X5
	MOVOU X2, X6
	PCMPEQB X8, X6
	MOVOU X2, X7
	PCMPEQB X9, X7
	POR X7, X6
	MOVOU X3, X7
	PCMPEQB X8, X7
	MOVOU X3, X11
	PCMPEQB X9, X11
	POR X11, X7

	// Control characters: min(b, 0x1f) == b exactly when b ≤ 0x1f.
	MOVOU X0, X11
	PMINUB X10, X11
	PCMPEQB X0, X11
	POR X11, X4
	MOVOU X1, X11
	PMINUB X10, X11
	PCMPEQB X1, X11
	POR X11, X5
	MOVOU X2, X11
	PMINUB X10, X11
	PCMPEQB X2, X11
	POR X11, X6
	MOVOU X3, X11
	PMINUB X10, X11
	PCMPEQB X3, X11
	POR X11, X7

	MOVQ hi+8(FP), DX
	TESTQ DX, DX
	JZ gather
	// Bytes ≥ 0x80: their high bits are what PMOVMSKB gathers.
	POR X0, X4
	POR X1, X5
	POR X2, X6
	POR X3, X7

gather:
	PMOVMSKB X4, AX
	PMOVMSKB X5, BX
	PMOVMSKB X6, CX
	PMOVMSKB X7, DX
	SHLQ $16, BX
	SHLQ $32, CX
	SHLQ $48, DX
	ORQ BX, AX
	ORQ CX, AX
	ORQ DX, AX
	MOVQ AX, ret+16(FP)
	RET
