package droid

import (
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// BenchmarkParse runs the parser and the oracle (oracle_test.go) on the
// transcripts and on one huge tool result:
//
//	go test -run '^$' -bench Parse -benchmem ./droid/
func BenchmarkParse(b *testing.B) {
	backendtest.BenchVsOracle(b, filepath.Join("testdata", "*.jsonl"),
		`{"type":"tool_result","id":"t","toolId":"Read","isError":false,"value":BIG,"session_id":"s"}`,
		newParser, func() driver.Parser { return newOracleParser() })
}
