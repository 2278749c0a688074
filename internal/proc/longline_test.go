//go:build unix

package proc

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// longLine joins what it was given, in order, across chunk boundaries,
// and is empty and reusable after join and free.
func TestLongLineJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var l longLine
	for _, size := range []int{1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 12345} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(rng.IntN(256))
		}
		for rest := want; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(100<<10))
			l.add(rest[:k])
			rest = rest[k:]
		}
		tail := []byte("tail")
		got := l.join(tail)
		if !bytes.Equal(got, append(bytes.Clone(want), tail...)) || len(got) != cap(got) {
			t.Fatalf("size %d: joined %d bytes (cap %d), not what was added", size, len(got), cap(got))
		}
		if l.n != 0 || len(l.chunks) != 0 {
			t.Fatalf("size %d: not empty after join", size)
		}
		l.add(want[:size/2+1])
		l.free()
		if l.n != 0 || len(l.chunks) != 0 {
			t.Fatalf("size %d: not empty after free", size)
		}
	}
}

// Lines of random bytes around the read buffer's and the chunks' sizes
// arrive whole and byte for byte, a line over the limit is skipped, and
// the lines after it are intact.
func TestReadLineLongContent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{readBuffer - 1, readBuffer, readBuffer + 1, chunkSize - 1, chunkSize, chunkSize + 1, 2*chunkSize + 777, 5 << 20, 10, 0}
	var stream bytes.Buffer
	var want [][]byte
	for _, n := range sizes {
		l := make([]byte, n)
		for i := range l {
			l[i] = byte(' ' + rng.IntN(90)) // no newline, no CR
		}
		want = append(want, l)
		stream.Write(l)
		stream.WriteByte('\n')
	}
	f := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(f, stream.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, "cat "+f, Spec{MaxLine: 4 << 20})
	got := readAll(t, p)
	if len(got) != len(want) {
		t.Fatalf("%d lines; want %d", len(got), len(want))
	}
	for i, w := range want {
		if len(w) > 4<<20 {
			if got[i].TooLong != len(w) || got[i].Data != nil {
				t.Fatalf("line %d: %d bytes, TooLong %d; want TooLong %d", i, len(got[i].Data), got[i].TooLong, len(w))
			}
			continue
		}
		if !bytes.Equal(got[i].Data, w) {
			t.Fatalf("line %d: %d bytes differ from the %d written", i, len(got[i].Data), len(w))
		}
	}
	p.Wait()
}
