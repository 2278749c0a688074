//go:build !purego

package jsonscan

// stopMask returns a bit for each of the first 64 bytes of blk that is a
// quote, a backslash, a control character or, when hi is msb, ≥ 0x80: bit
// i for blk[i] (stopMaskGo in SSE2).
//
//go:noescape
func stopMask(blk *[blockNeed]byte, hi uint64) uint64
