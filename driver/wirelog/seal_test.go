package wirelog

import (
	"bytes"
	"strings"
	"testing"
)

// TestSeal: after Seal, no record reaches the writer (a live session's
// CLI that exits after Close returned must not write to the caller's log).
func TestSeal(t *testing.T) {
	var buf bytes.Buffer
	l := NewWriter(&buf, Start{Live: true})
	l.Close()
	before := buf.String()
	l.Seal()
	l.Exit(Exit{Code: 1, Stderr: "late"})
	l.Out([]byte(`{"late":true}`))
	if buf.String() != before {
		t.Fatalf("records after Seal: %q", strings.TrimPrefix(buf.String(), before))
	}
	if !strings.Contains(before, `{"t":"close"}`) {
		t.Fatalf("the close record is missing: %q", before)
	}
}
