// Package benchdata generates realistic synthetic output of the four CLIs
// for benchmarks: the same generator feeds the fake CLIs of
// internal/bench and the parser benchmarks of each backend.
//
// A stream is a header (claude's system/init, codex's thread.started, ...),
// then turns cycled until the requested size is reached, then the CLI's
// terminal lines. Turns mix what real runs print: text streamed in deltas
// with escapes and multi-byte UTF-8, thinking, tool calls with JSON input,
// large tool outputs (up to 32 KiB, full of quotes, tabs, backslashes and
// newlines), usage. Line shapes (keys, their order, nesting) follow the real
// transcripts under <cli>/testdata/real and /work/shared/wire-formats.md.
// Output is deterministic.
//
// Use in a parser benchmark:
//
//	lines := benchdata.Lines(benchdata.Claude, 2<<20)
//	b.SetBytes(benchdata.Size(lines))
//	b.ReportAllocs()
//	for b.Loop() {
//		p := newParser()
//		for _, l := range lines {
//			p.Line(l)
//		}
//	}
package benchdata

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// CLI names a CLI whose output is generated.
type CLI string

// The CLIs benchdata knows.
const (
	Claude   CLI = "claude"
	Codex    CLI = "codex"
	Gemini   CLI = "gemini"
	OpenCode CLI = "opencode"
)

// CLIs lists every CLI, in a fixed order.
var CLIs = []CLI{Claude, Codex, Gemini, OpenCode}

// Generator writes synthetic streams of one CLI. Its zero value is not
// usable; call New.
type Generator struct {
	cli     CLI
	header  []byte // lines before the first turn
	trailer []byte // terminal lines
	turn    func(w *writer, r *rand.Rand, i int)
	turns   [][]byte // distinct turns, cycled; made on first use
	lines   []int    // lines in each turn
}

// turnsPerCycle is how many distinct turns are generated; a long stream
// repeats them.
const turnsPerCycle = 16

// New returns the generator for cli, or an error for an unknown CLI.
func New(cli CLI) (*Generator, error) {
	g := &Generator{cli: cli}
	var turn func(w *writer, r *rand.Rand, i int)
	switch cli {
	case Claude:
		g.header = claudeHeader()
		g.trailer = claudeResult()
		turn = claudeTurn
	case Codex:
		g.header = codexHeader()
		g.trailer = codexTrailer()
		turn = codexTurn
	case Gemini:
		g.header = geminiHeader()
		g.trailer = geminiResult()
		turn = geminiTurn
	case OpenCode:
		g.trailer = opencodeFinal()
		turn = opencodeTurn
	default:
		return nil, fmt.Errorf("benchdata: unknown CLI %q", cli)
	}
	g.turn = turn
	return g, nil
}

// makeTurns generates the turns of a cycle.
func (g *Generator) makeTurns() {
	if g.turns != nil {
		return
	}
	r := rand.New(rand.NewPCG(1, uint64(len(g.cli))))
	for i := range turnsPerCycle {
		w := &writer{}
		g.turn(w, r, i)
		g.turns = append(g.turns, w.b)
		g.lines = append(g.lines, bytes.Count(w.b, []byte("\n")))
	}
}

// must returns the generator of a known CLI.
func must(cli CLI) *Generator {
	g, err := New(cli)
	if err != nil {
		panic(err)
	}
	return g
}

// Header returns the lines a stream starts with (may be empty). The first
// line is what a consumer sees as its first event.
func (g *Generator) Header() []byte { return g.header }

// Trailer returns the terminal lines of a stream (may be empty: opencode
// prints no terminal event).
func (g *Generator) Trailer() []byte { return g.trailer }

// WriteStream writes a stream of at least size bytes (header, turns,
// trailer) to w and returns the bytes and lines written. It holds at most
// one cycle of turns in memory, so any size can be written. When w has a
// Flush method (bufio.Writer) it is called after the header, which is
// written before anything else is generated, so that a consumer sees its
// first event at once.
func (g *Generator) WriteStream(w io.Writer, size int64) (n, lines int64, err error) {
	write := func(b []byte, l int) bool {
		var m int
		m, err = w.Write(b)
		n += int64(m)
		lines += int64(l)
		return err == nil
	}
	if !write(g.header, bytes.Count(g.header, []byte("\n"))) {
		return
	}
	if f, ok := w.(interface{ Flush() error }); ok {
		if err = f.Flush(); err != nil {
			return
		}
	}
	g.makeTurns()
	for i := 0; n+int64(len(g.trailer)) < size; i = (i + 1) % len(g.turns) {
		if !write(g.turns[i], g.lines[i]) {
			return
		}
	}
	write(g.trailer, bytes.Count(g.trailer, []byte("\n")))
	return
}

// HugeLine returns one line (with its newline) of about n bytes: the
// largest kind of line the CLI prints, a tool result whose output is n
// bytes of text.
func (g *Generator) HugeLine(n int) []byte {
	r := rand.New(rand.NewPCG(2, 2))
	out := toolOutput(r, n)
	half := out[:n/2] // claude and opencode print the output twice
	for !utf8.ValidString(half) {
		half = half[:len(half)-1]
	}
	w := &writer{}
	switch g.cli {
	case Claude:
		claudeToolResult(w, "toolu_huge", half, false)
	case Codex:
		w.f(`{"type":"item.completed","item":{"id":"item_huge","type":"command_execution","command":"/bin/bash -lc 'cat big.log'","aggregated_output":%s,"exit_code":0,"status":"completed"}}`, w.q(out))
	case Gemini:
		w.f(`{"type":"tool_result","timestamp":"2026-11-22T00:11:18.344Z","tool_id":"run_shell_command__huge","status":"success","output":%s}`, w.q(out))
	case OpenCode:
		opencodeTool(w, "huge", "cat big.log", half)
	}
	return w.b
}

// HugeLine returns Generator.HugeLine(n) of cli's generator.
func HugeLine(cli CLI, n int) []byte { return must(cli).HugeLine(n) }

// HugeStream returns header, one line of about n bytes, and trailer.
func (g *Generator) HugeStream(n int) []byte {
	var b []byte
	b = append(b, g.header...)
	b = append(b, g.HugeLine(n)...)
	return append(b, g.trailer...)
}

// HugeStream returns Generator.HugeStream(n) of cli's generator.
func HugeStream(cli CLI, n int) []byte { return must(cli).HugeStream(n) }

// Stream returns a whole stream of at least size bytes of cli's output.
func Stream(cli CLI, size int) []byte {
	var buf bytes.Buffer
	buf.Grow(size + 64<<10)
	must(cli).WriteStream(&buf, int64(size)) //nolint:errcheck // bytes.Buffer does not fail
	return buf.Bytes()
}

// Lines returns Stream(cli, size) split into lines, without newlines.
func Lines(cli CLI, size int) [][]byte {
	return split(Stream(cli, size))
}

// Size returns the bytes of lines, a newline counted for each: the
// argument for testing.B.SetBytes.
func Size(lines [][]byte) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	return n
}

// ReadLines reads the non-empty lines of every file matching pattern (in
// filepath.Glob order), e.g. "testdata/real/*.stdout" from a backend's
// folder. It fails when nothing matches.
func ReadLines(pattern string) ([][]byte, error) {
	names, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("benchdata: no file matches %s", pattern)
	}
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, split(b)...)
	}
	return out, nil
}

func split(b []byte) [][]byte {
	var out [][]byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if len(line) > 0 {
			out = append(out, line[:len(line):len(line)])
		}
	}
	return out
}

// writer builds lines.
type writer struct{ b []byte }

// f appends one formatted line and a newline.
func (w *writer) f(format string, args ...any) {
	w.b = fmt.Appendf(w.b, format, args...)
	w.b = append(w.b, '\n')
}

// q returns s as a JSON string the way JavaScript's JSON.stringify and
// serde_json write it: only quotes, backslashes and control characters
// escaped, UTF-8 kept as is, no HTML escaping.
func (w *writer) q(s string) string { return string(appendQuoted(nil, s)) }

func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// Text material: English prose with the characters that make JSON strings
// expensive (quotes, backslashes, newlines, tabs) and multi-byte UTF-8.
var words = []string{
	"the", "function", "returns", "an", "error", "when", "file", "is", "missing", "so", "we", "check",
	"it", "first", "then", "call", "`os.ReadFile`", "and", "parse", "\"quoted\"", "value", "path\\to\\dir",
	"naïve", "café", "résumé", "—", "→", "日本語", "テスト", "中文", "emoji 🎉", "✓", "Ünïcödé", "…",
	"config", "test", "passes", "now", "line", "42", "{\"key\": 1}", "<tag>", "a&b", "TODO:", "done.",
}

func prose(r *rand.Rand, n int) string {
	var b []byte
	for len(b) < n {
		if len(b) > 0 {
			switch r.IntN(12) {
			case 0:
				b = append(b, ".\n\n"...)
			case 1:
				b = append(b, ",\t"...)
			default:
				b = append(b, ' ')
			}
		}
		b = append(b, words[r.IntN(len(words))]...)
	}
	return string(b)
}

// toolOutput is n bytes of what a shell tool prints: grep and test output.
func toolOutput(r *rand.Rand, n int) string {
	b := make([]byte, 0, n+128)
	for len(b) < n {
		switch r.IntN(4) {
		case 0:
			b = fmt.Appendf(b, "internal/pkg%d/file_%d.go:%d:\tif err := run(ctx, \"arg %d\"); err != nil {\n", r.IntN(20), r.IntN(100), r.IntN(900), r.IntN(9))
		case 1:
			b = fmt.Appendf(b, "--- FAIL: TestThing%d (0.%02ds)\n    thing_test.go:%d: got \"%s\", want \"%s\"\n", r.IntN(50), r.IntN(99), r.IntN(300), prose(r, 12), prose(r, 12))
		case 2:
			b = fmt.Appendf(b, "C:\\Users\\dev\\src\\app\\main.go  %d bytes  ✓ ok\n", r.IntN(99999))
		default:
			b = append(b, prose(r, 60)...)
			b = append(b, '\n')
		}
	}
	b = b[:n]
	for !utf8.Valid(b) { // do not cut a rune in half
		b = b[:len(b)-1]
	}
	return string(b)
}

// pieces cuts s into n pieces at rune boundaries.
func pieces(s string, n int) []string {
	res := make([]string, 0, n)
	prev := 0
	for i := 1; i <= n; i++ {
		end := len(s) * i / n
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		end = max(end, prev)
		res = append(res, s[prev:end])
		prev = end
	}
	return res
}

func uuid(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0x3fff|0x8000, r.Uint64()&0xffffffffffff)
}
