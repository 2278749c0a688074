package drivertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// ReplayRoundTrip runs req on b with a wire log (Request.WireLog), as a
// Stream (or, when stream is false, with Run, which asks the CLI for no
// deltas), and replays the log with agentcli.Replay: the replayed events
// must equal the live ones (with Run: the result and error),
// Result.Duration aside, or the test fails. It returns the live events and
// error. b must implement driver.Replayer.
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
	replayed, replayErr := CollectSeq(agentcli.Replay(b, bytes.NewReader(log.Bytes())))
	if !stream && replayErr == nil && len(replayed) > 0 {
		replayed = replayed[len(replayed)-1:]
	} else if !stream {
		replayed = nil
	}
	if got, want := DescribeRun(replayed, replayErr), DescribeRun(live, liveErr); got != want {
		t.Errorf("replay differs from the live run\nlive:\n%s\nreplay:\n%s\nlog:\n%s", want, got, log.String())
	}
	return live, liveErr
}

// CollectSeq drains seq, a stream of events such as agentcli.Replay's,
// and returns its events and the error that ended it (nil when it ran
// to the end). It blocks until seq ends.
func CollectSeq(seq iter.Seq2[agentcli.Event, error]) ([]agentcli.Event, error) {
	var evs []agentcli.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// DescribeRun renders a run's events and error as text to compare runs
// by: one JSON line an event (json.Marshal of the Event, its
// Result.Duration zeroed), then the error's type and message, if any.
// Two runs that yield the same events and error describe the same.
func DescribeRun(evs []agentcli.Event, err error) string {
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
