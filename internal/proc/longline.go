//go:build unix

package proc

// longLine gathers the pieces of a line longer than the read buffer, in
// chunks of chunkSize. Where the system allows it (see allocChunk) the
// chunks live outside the Go heap and each is returned to the system as
// soon as join has copied it into the line, so that a huge line costs its
// size about once while it is joined, not twice (pieces plus the line).
//
// A longLine is used by one goroutine; its chunks never escape it.
type longLine struct {
	chunks [][]byte // filled part of each chunk; cap is the chunk's size
	mapped []bool   // chunks[i] came from allocChunk's mapping
	n      int      // bytes gathered
}

// chunkSize is the size of a long line's chunks.
const chunkSize = 1 << 20

// add appends a copy of frag.
func (l *longLine) add(frag []byte) {
	l.n += len(frag)
	for len(frag) > 0 {
		i := len(l.chunks) - 1
		if i < 0 || len(l.chunks[i]) == cap(l.chunks[i]) {
			c, mapped := allocChunk(chunkSize)
			l.chunks = append(l.chunks, c[:0])
			l.mapped = append(l.mapped, mapped)
			i++
		}
		c := l.chunks[i]
		k := copy(c[len(c):cap(c)], frag)
		l.chunks[i] = c[:len(c)+k]
		frag = frag[k:]
	}
}

// join returns the gathered bytes followed by tail in one new slice of the
// exact size, releasing each chunk once copied; l is empty afterwards.
func (l *longLine) join(tail []byte) []byte {
	data := make([]byte, l.n+len(tail))
	off := 0
	for i, c := range l.chunks {
		off += copy(data[off:], c)
		freeChunk(c[:cap(c)], l.mapped[i])
		l.chunks[i] = nil
	}
	copy(data[off:], tail)
	l.chunks, l.mapped, l.n = l.chunks[:0], l.mapped[:0], 0
	return data
}

// free releases what was gathered; l is empty afterwards.
func (l *longLine) free() {
	for i, c := range l.chunks {
		freeChunk(c[:cap(c)], l.mapped[i])
		l.chunks[i] = nil
	}
	l.chunks, l.mapped, l.n = l.chunks[:0], l.mapped[:0], 0
}
