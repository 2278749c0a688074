package backendtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// ReplayRoundTrip runs req on b with a wire log, as a Stream (or, when
// stream is false, with Run, which asks the CLI for no deltas) and replays
// the log: the replayed events must equal the live ones (Run: the result
// and error), Result.Duration aside. It returns the live events and error.
func ReplayRoundTrip(t testing.TB, b agentcli.Backend, req *agentcli.Request, stream bool) ([]agentcli.Event, error) {
	t.Helper()
	var log bytes.Buffer
	r := *req
	r.WireLog = &log
	var live []agentcli.Event
	var liveErr error
	if stream {
		live, liveErr = Collect(context.Background(), b, &r)
	} else {
		var res *agentcli.Result
		res, liveErr = b.Run(context.Background(), &r)
		if liveErr == nil {
			live = []agentcli.Event{{Kind: agentcli.EventResult, SessionID: res.SessionID, Result: res, Raw: res.Raw}}
		}
	}
	replayed, replayErr := collectSeq(agentcli.Replay(b, bytes.NewReader(log.Bytes())))
	if !stream && replayErr == nil && len(replayed) > 0 {
		replayed = replayed[len(replayed)-1:]
	} else if !stream {
		replayed = nil
	}
	if got, want := describeRun(replayed, replayErr), describeRun(live, liveErr); got != want {
		t.Errorf("replay differs from the live run\nlive:\n%s\nreplay:\n%s\nlog:\n%s", want, got, log.String())
	}
	return live, liveErr
}

func collectSeq(seq func(func(agentcli.Event, error) bool)) ([]agentcli.Event, error) {
	var evs []agentcli.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

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

// describeRun renders events and error as JSON lines, durations zeroed.
func describeRun(evs []agentcli.Event, err error) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Result != nil {
			r := *ev.Result
			r.Duration = 0
			ev.Result = &r
		}
		j, _ := json.Marshal(ev)
		b.Write(j)
		b.WriteByte('\n')
	}
	if err != nil {
		fmt.Fprintf(&b, "error %T: %v\n", err, err)
	}
	return b.String()
}
