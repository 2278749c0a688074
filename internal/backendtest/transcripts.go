package backendtest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// TranscriptScript returns the fake CLI script that plays a captured
// transcript back: its stdout lines, its stderr and its exit status.
func TranscriptScript(tr Transcript) []string {
	var script []string
	out := string(tr.Stdout)
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		switch {
		case i < len(lines)-1:
			script = append(script, "out "+l)
		case l != "":
			script = append(script, "outraw "+l) // a last line without newline
		}
	}
	for _, l := range strings.Split(strings.TrimRight(string(tr.Stderr), "\n"), "\n") {
		if l != "" {
			script = append(script, "err "+l)
		}
	}
	return append(script, fmt.Sprintf("exit %d", tr.Exit))
}

// ReplayTranscripts round-trips every transcript in testdata/real through
// a live run of the fake CLI (with a wire log) and Replay. shape decides,
// per transcript name, whether it is run as a Stream or with Run.
func ReplayTranscripts(t *testing.T, k Kit, stream func(name string) bool) {
	names, _ := filepath.Glob(filepath.Join("testdata", "real", "*.stdout"))
	if len(names) == 0 {
		t.Fatal("no transcripts in testdata/real")
	}
	for _, n := range names {
		name := strings.TrimSuffix(filepath.Base(n), ".stdout")
		t.Run(name, func(t *testing.T) {
			b, _ := k.Setup(t, nil, TranscriptScript(ReadTranscript(t, name))...)
			evs, err := ReplayRoundTrip(t, b, &agentcli.Request{Prompt: "replay"}, stream(name))
			if len(evs) == 0 && err == nil {
				t.Fatal("the live run yielded nothing")
			}
		})
	}
}
