package copilot

import (
	"path/filepath"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
)

// BenchmarkParse runs the parser and the oracle (oracle_test.go) on the
// transcripts and on one huge tool result:
//
//	go test -run '^$' -bench Parse -benchmem ./copilot/
func BenchmarkParse(b *testing.B) {
	backendtest.BenchVsOracle(b, filepath.Join("testdata", "real", "*.stdout"),
		`{"type":"tool.execution_complete","data":{"toolCallId":"c","success":true,"result":{"content":BIG}},"id":"i"}`,
		newTestParser, func() driver.Parser { return newOracleParser("m", false) })
}
