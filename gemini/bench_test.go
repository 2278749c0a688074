package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchTranscript is a realistic stream-json run: the real tool-call
// transcript of 0.61.0 with the answer streamed in many deltas, as a long
// answer would be.
func benchTranscript() [][]byte {
	lines := strings.Split(strings.TrimSpace(captured["tool-error-stream"].stdout), "\n")
	var out [][]byte
	for _, l := range lines[:len(lines)-1] {
		if strings.Contains(l, `"role":"assistant"`) {
			continue
		}
		out = append(out, []byte(l))
	}
	for i := range 200 {
		out = append(out, fmt.Appendf(nil, `{"type":"message","timestamp":"2026-11-22T00:21:20.616Z","role":"assistant","content":"chunk %d of a long answer, with some text in it. ","delta":true}`, i))
	}
	return append(out, []byte(lines[len(lines)-1]))
}

func size(lines [][]byte) int64 {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return int64(n)
}

// BenchmarkParse measures the stream-json parser; compare with
// BenchmarkUnmarshal, the floor: a plain json.Unmarshal of the same lines
// into the wire struct. The json sub-benchmark parses the pretty-printed
// json document, which arrives line by line.
func BenchmarkParse(b *testing.B) {
	b.Run("stream-json", func(b *testing.B) {
		lines := benchTranscript()
		b.SetBytes(size(lines))
		b.ReportAllocs()
		for b.Loop() {
			p := newParser(formatStream)
			for _, l := range lines {
				p.Line(l)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		lines := bytes.Split([]byte(captured["empty-json"].stdout), []byte("\n"))
		b.SetBytes(size(lines))
		b.ReportAllocs()
		for b.Loop() {
			p := newParser(formatJSON)
			for _, l := range lines {
				p.Line(l)
			}
		}
	})
}

func BenchmarkUnmarshal(b *testing.B) {
	b.Run("stream-json", func(b *testing.B) {
		lines := benchTranscript()
		b.SetBytes(size(lines))
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				var w wireEvent
				json.Unmarshal(l, &w)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		doc := []byte(captured["empty-json"].stdout)
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			var w wireJSON
			json.Unmarshal(doc, &w)
		}
	})
}
