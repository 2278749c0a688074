package gemini

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/benchdata"
)

// The parser benchmarks run the parser and, for comparison, the oracle
// (the former encoding/json parser, oracle_test.go) on
//
//	real     every stream-json transcript under testdata/real
//	answer   the real tool-call transcript with a long answer in many deltas
//	mix      2 MiB of internal/benchdata's synthetic gemini stream
//	huge     one 8 MiB tool-result line (benchdata's HugeLine)
//	json     the real json documents (-o json), line by line
//
//	go test -run '^$' -bench 'Parse|Linear' -benchmem ./gemini/

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

func readLines(b *testing.B, pattern string) [][]byte {
	var out [][]byte
	names, _ := filepath.Glob(filepath.Join("testdata", "real", pattern))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, bytes.Split(bytes.TrimSpace(data), []byte("\n"))...)
	}
	return out
}

func BenchmarkParse(b *testing.B) {
	g, _ := benchdata.New(benchdata.Gemini)
	inputs := []struct {
		name  string
		f     format
		lines [][]byte
	}{
		{"real", formatStream, readLines(b, "*-stream.stdout")},
		{"answer", formatStream, benchTranscript()},
		{"mix", formatStream, benchdata.Lines(benchdata.Gemini, 2<<20)},
		{"huge", formatStream, [][]byte{bytes.TrimSuffix(g.HugeLine(8<<20), []byte("\n"))}},
		{"json", formatJSON, readLines(b, "*-json.stdout")},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			backendtest.BenchParse(b, in.lines, func() driver.Parser { return newParser(in.f) })
		})
		b.Run(in.name+"/oracle", func(b *testing.B) {
			backendtest.BenchParse(b, in.lines, func() driver.Parser { return newOracleParser(in.f) })
		})
	}
}

// docParser parses a whole json document given as one input with its
// lines separated by newlines, so that BenchLinear can time it.
type docParser struct{ driver.Parser }

func (d docParser) Line(doc []byte) []agentcli.Event {
	for l := range bytes.SplitSeq(doc, []byte("\n")) {
		d.Parser.Line(l)
	}
	return nil
}

// BenchmarkLinear: the json document costs the same per byte at size S
// and 2S, whatever its shape: the lines of "}" that made the oracle
// quadratic (issue 7; shown by the oracle's sub-benchmarks, whose cost per
// byte doubles with the size), and an unterminated document, which is cut
// at the limit.
func BenchmarkLinear(b *testing.B) {
	join := func(lines [][]byte) []byte { return bytes.Join(lines, []byte("\n")) }
	for _, impl := range []struct {
		name string
		p    func() driver.Parser
		ns   []int
	}{
		{"new", func() driver.Parser { p := newJSONParser(); p.limit = 1 << 20; return p }, []int{20000, 40000}},
		{"oracle", func() driver.Parser { return newOracleParser(formatJSON) }, []int{2000, 4000}},
	} {
		wrap := func() driver.Parser { return docParser{impl.p()} }
		backendtest.BenchLinear(b, impl.name+"/closing-lines", func(n int) []byte { return join(nestedLines(n)) }, impl.ns, wrap)
		if impl.name == "new" {
			backendtest.BenchLinear(b, impl.name+"/unterminated", func(n int) []byte { return join(unterminated(n)) }, []int{50000, 100000}, wrap)
		}
	}
	backendtest.BenchLinear(b, "stream/output", func(n int) []byte {
		out := strings.Repeat(`ok \"pkg\"\n\tdone é `, n/20)
		return []byte(`{"type":"tool_result","tool_id":"t","status":"success","output":"` + out + `"}`)
	}, []int{1 << 20, 2 << 20}, func() driver.Parser { return newParser(formatStream) })
}
