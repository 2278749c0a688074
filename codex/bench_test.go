package codex

import (
	"bytes"
	"encoding/json"
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

// benchTranscript is a realistic run: the real tool transcript's lines with
// a long agentic middle of shell commands, reasoning and messages.
func benchTranscript(b *testing.B) [][]byte {
	real, err := os.ReadFile("testdata/real/tool.stdout")
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(real), []byte("\n"))
	out := append([][]byte{}, lines[:3]...)
	output := bytes.Repeat([]byte("ok  \tgithub.com/example/pkg\t0.123s\n"), 40)
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("item_%d", 10+i)
		cmd, _ := json.Marshal(fmt.Sprintf("/bin/bash -lc 'go test ./pkg%d/...'", i))
		agg, _ := json.Marshal(string(output))
		out = append(out,
			[]byte(fmt.Sprintf(`{"type":"item.completed","item":{"id":"%s_r","type":"reasoning","text":"**Checking package %d**\nRun its tests next."}}`, id, i)),
			[]byte(fmt.Sprintf(`{"type":"item.started","item":{"id":"%s","type":"command_execution","command":%s,"aggregated_output":"","exit_code":null,"status":"in_progress"}}`, id, cmd)),
			[]byte(fmt.Sprintf(`{"type":"item.completed","item":{"id":"%s","type":"command_execution","command":%s,"aggregated_output":%s,"exit_code":0,"status":"completed"}}`, id, cmd, agg)),
			[]byte(fmt.Sprintf(`{"type":"item.completed","item":{"id":"%s_m","type":"agent_message","text":"Package %d passes."}}`, id, i)),
		)
	}
	return append(out, lines[3:]...)
}

// The parser benchmarks run the parser and, for comparison, the oracle
// (the former encoding/json parser, oracle_test.go) on
//
//	real     every transcript under testdata/real
//	agentic  the real tool transcript with a long middle of commands
//	mix      2 MiB of internal/benchdata's synthetic codex stream
//	huge     one 8 MiB command output line (benchdata's HugeLine)
//
//	go test -run '^$' -bench 'Parse|Linear' -benchmem ./codex/
func BenchmarkParse(b *testing.B) {
	var real [][]byte
	names, _ := filepath.Glob(filepath.Join("testdata", "real", "*.stdout"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		real = append(real, bytes.Split(bytes.TrimSpace(data), []byte("\n"))...)
	}
	g, _ := benchdata.New(benchdata.Codex)
	inputs := map[string][][]byte{
		"real":    real,
		"agentic": benchTranscript(b),
		"mix":     benchdata.Lines(benchdata.Codex, 2<<20),
		"huge":    {bytes.TrimSuffix(g.HugeLine(8<<20), []byte("\n"))},
	}
	for _, name := range []string{"real", "agentic", "mix", "huge"} {
		b.Run(name, func(b *testing.B) {
			backendtest.BenchParse(b, inputs[name], func() driver.Parser { return newParser(&agentcli.Request{}) })
		})
		b.Run(name+"/oracle", func(b *testing.B) {
			backendtest.BenchParse(b, inputs[name], func() driver.Parser { return newOracleParser(&agentcli.Request{}) })
		})
	}
}

// BenchmarkLinear: the cost per byte of one line is the same at size S and
// 2S, and at depth N and 2N.
func BenchmarkLinear(b *testing.B) {
	p := func() driver.Parser { return newParser(&agentcli.Request{}) }
	backendtest.BenchLinear(b, "output", func(n int) []byte {
		out := strings.Repeat(`ok \"pkg\"\n\tdone é `, n/20)
		return []byte(`{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"c","aggregated_output":"` + out + `","exit_code":0,"status":"completed"}}`)
	}, []int{1 << 20, 2 << 20}, p)
	backendtest.BenchLinear(b, "nested-arguments", func(n int) []byte {
		return []byte(`{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":` +
			strings.Repeat(`{"a":[`, n/2) + strings.Repeat(`]}`, n/2) + `,"status":"completed"}}`)
	}, []int{2500, 5000}, p)
	backendtest.BenchLinear(b, "many-changes", func(n int) []byte {
		c := `{"path":"/repo/a.go","kind":"update"},`
		return []byte(`{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[` + strings.Repeat(c, n/len(c)) + `null],"status":"completed"}}`)
	}, []int{1 << 20, 2 << 20}, p)
}

// BenchmarkStream: a whole run through the public API, the CLI replaced by
// cat playing 64 MiB of benchdata's synthetic stream.
func BenchmarkStream(b *testing.B) {
	backendtest.BenchStream(b, New, benchdata.Stream(benchdata.Codex, 64<<20))
}

// BenchmarkFirstEvent: the time to the first event of a run, against a
// bare os/exec reading the first line of the same CLI.
func BenchmarkFirstEvent(b *testing.B) {
	backendtest.BenchFirstEvent(b, New, benchdata.Stream(benchdata.Codex, 4<<20))
}
