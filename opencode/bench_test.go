package opencode

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// benchLines is a realistic transcript: the real multi-step run (text,
// bash calls, usage) followed by the real tool and thinking runs from
// testdata/real when present.
func benchLines(b *testing.B) [][]byte {
	data := []byte(live["multistep"].stdout)
	for _, name := range []string{"tool", "thinking"} {
		if d, err := os.ReadFile("testdata/real/" + name + ".stdout"); err == nil {
			data = append(data, d...)
		}
	}
	return bytes.Split(bytes.TrimSpace(data), []byte("\n"))
}

func size(lines [][]byte) int64 {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return int64(n)
}

// BenchmarkParse measures the parser over real 1.18.33 output. Compare with
// BenchmarkUnmarshal, the floor: a plain json.Unmarshal of the same lines
// into the wire structs.
func BenchmarkParse(b *testing.B) {
	lines := benchLines(b)
	b.SetBytes(size(lines))
	b.ReportAllocs()
	for b.Loop() {
		p := newParser()
		for _, l := range lines {
			p.Line(l)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	lines := benchLines(b)
	b.SetBytes(size(lines))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			var w wireLine
			json.Unmarshal(l, &w)
		}
	}
}
