package qwen

import (
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// BenchmarkParse runs the parser and the oracle (oracle_test.go) on the
// transcripts and on one huge tool result:
//
//	go test -run '^$' -bench Parse -benchmem ./qwen/
func BenchmarkParse(b *testing.B) {
	backendtest.BenchVsOracle(b, filepath.Join("testdata", "*.jsonl"),
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":BIG}]},"session_id":"s"}`,
		newParser, func() driver.Parser { return newOracleParser() })
}
