package opencode

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/benchdata"
)

// The parser benchmarks run the parser and, for comparison, the oracle
// (the former encoding/json parser, oracle_test.go) on
//
//	real   the real multi-step run (text, bash calls, usage) and the real
//	       tool and thinking runs from testdata/real
//	mix    2 MiB of internal/benchdata's synthetic opencode stream
//	huge   one 8 MiB tool line (benchdata's HugeLine)
//
//	go test -run '^$' -bench 'Parse|Linear' -benchmem ./opencode/
func benchLines(b *testing.B) [][]byte {
	data := []byte(live["multistep"].stdout)
	for _, name := range []string{"tool", "thinking"} {
		if d, err := os.ReadFile("testdata/real/" + name + ".stdout"); err == nil {
			data = append(data, d...)
		}
	}
	return bytes.Split(bytes.TrimSpace(data), []byte("\n"))
}

func BenchmarkParse(b *testing.B) {
	g, _ := benchdata.New(benchdata.OpenCode)
	inputs := map[string][][]byte{
		"real": benchLines(b),
		"mix":  benchdata.Lines(benchdata.OpenCode, 2<<20),
		"huge": {bytes.TrimSuffix(g.HugeLine(8<<20), []byte("\n"))},
	}
	for _, name := range []string{"real", "mix", "huge"} {
		b.Run(name, func(b *testing.B) {
			backendtest.BenchParse(b, inputs[name], func() driver.Parser { return newParser() })
		})
		b.Run(name+"/oracle", func(b *testing.B) {
			backendtest.BenchParse(b, inputs[name], func() driver.Parser { return newOracleParser() })
		})
	}
}

// BenchmarkLinear: the cost per byte of one line is the same at size S and
// 2S, and at depth N and 2N.
func BenchmarkLinear(b *testing.B) {
	p := func() driver.Parser { return newParser() }
	backendtest.BenchLinear(b, "output", func(n int) []byte {
		out := strings.Repeat(`ok \"pkg\"\n\tdone é `, n/20)
		return []byte(`{"type":"tool_use","sessionID":"s","part":{"callID":"c","tool":"bash","state":{"status":"completed","input":{"command":"x"},"output":"` + out + `"}}}`)
	}, []int{1 << 20, 2 << 20}, p)
	backendtest.BenchLinear(b, "nested-input", func(n int) []byte {
		return []byte(`{"type":"tool_use","sessionID":"s","part":{"callID":"c","tool":"bash","state":{"status":"completed","input":` +
			strings.Repeat(`{"a":[`, n/2) + strings.Repeat(`]}`, n/2) + `,"output":"x"}}}`)
	}, []int{2500, 5000}, p)
}
