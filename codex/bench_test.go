package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/agentcli/agentcli"
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

func BenchmarkParse(b *testing.B) {
	lines := benchTranscript(b)
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		p := newParser(&agentcli.Request{})
		for _, l := range lines {
			p.Line(l)
		}
	}
}

// BenchmarkUnmarshal is the floor: plain json.Unmarshal of the same lines
// into the wire structs, item included, with no normalization.
func BenchmarkUnmarshal(b *testing.B) {
	lines := benchTranscript(b)
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			var w wireEvent
			json.Unmarshal(l, &w) //nolint:errcheck
			if len(w.Item) > 0 {
				var it wireItem
				json.Unmarshal(w.Item, &it) //nolint:errcheck
			}
		}
	}
}
