package benchdata

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestStreams(t *testing.T) {
	for _, cli := range CLIs {
		t.Run(string(cli), func(t *testing.T) {
			const size = 512 << 10
			s := Stream(cli, size)
			if len(s) < size || len(s) > size+64<<10 {
				t.Errorf("stream of %d bytes, want about %d", len(s), size)
			}
			if !bytes.Equal(s, Stream(cli, size)) {
				t.Error("not deterministic")
			}
			g := must(cli)
			if !bytes.HasPrefix(s, g.Header()) || !bytes.HasSuffix(s, g.Trailer()) {
				t.Error("stream does not start with the header and end with the trailer")
			}
			types := map[string]int{}
			lines := Lines(cli, size)
			if Size(lines) != int64(len(s)) {
				t.Errorf("Size %d, stream %d", Size(lines), len(s))
			}
			for i, l := range lines {
				var v struct {
					Type string `json:"type"`
				}
				if err := json.Unmarshal(l, &v); err != nil || v.Type == "" {
					t.Fatalf("line %d is not a typed JSON object (%v): %.200s", i, err, l)
				}
				types[v.Type]++
			}
			want := map[CLI][]string{
				Claude:   {"system", "stream_event", "assistant", "user", "result"},
				Codex:    {"thread.started", "turn.started", "item.started", "item.completed", "item.updated", "turn.completed"},
				Gemini:   {"init", "message", "tool_use", "tool_result", "result"},
				OpenCode: {"step_start", "text", "reasoning", "tool_use", "step_finish"},
			}[cli]
			for _, typ := range want {
				if types[typ] == 0 {
					t.Errorf("no %q line in %v", typ, types)
				}
			}
			// Realistic density: hundreds of lines per MB, not thousands
			// of tiny ones nor a handful of huge ones.
			if n := 2 * len(lines); n < 100 || n > 5000 {
				t.Errorf("%d lines per MiB", n)
			}
		})
	}
}

func TestHugeLine(t *testing.T) {
	for _, cli := range CLIs {
		const n = 1 << 20
		l := must(cli).HugeLine(n)
		if len(l) < n || len(l) > n+n/4 || bytes.Count(l, []byte("\n")) != 1 || !json.Valid(l) {
			t.Errorf("%s: huge line of %d bytes, valid %v", cli, len(l), json.Valid(l))
		}
		s := must(cli).HugeStream(n)
		if len(Lines0(s)) != len(split(s)) {
			t.Errorf("%s: empty lines in huge stream", cli)
		}
	}
}

// Lines0 splits on every newline, keeping empty lines.
func Lines0(b []byte) [][]byte { return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) }

func TestWriteStreamCounts(t *testing.T) {
	var buf bytes.Buffer
	n, lines, err := must(Codex).WriteStream(&buf, 300<<10)
	if err != nil || n != int64(buf.Len()) || lines != int64(bytes.Count(buf.Bytes(), []byte("\n"))) {
		t.Errorf("n=%d lines=%d err=%v; buffer %d bytes", n, lines, err, buf.Len())
	}
	if _, err := New("nope"); err == nil {
		t.Error("unknown CLI accepted")
	}
}

func TestReadLines(t *testing.T) {
	lines, err := ReadLines("../../claude/testdata/real/*-stream.stdout")
	if err != nil || len(lines) < 20 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	if _, err := ReadLines("no/such/*.stdout"); err == nil {
		t.Error("no error for a pattern that matches nothing")
	}
}

func BenchmarkWriteStream(b *testing.B) {
	for _, cli := range CLIs {
		b.Run(string(cli), func(b *testing.B) {
			g := must(cli)
			var buf bytes.Buffer
			b.SetBytes(8 << 20)
			for b.Loop() {
				buf.Reset()
				g.WriteStream(&buf, 8<<20)
			}
		})
	}
}
