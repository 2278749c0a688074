//go:build unix

package driver

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
)

// lineParser makes one event of every line: its text, as EventText.
type lineParser struct{}

func (lineParser) Line(line []byte) []agentcli.Event {
	return []agentcli.Event{{Kind: agentcli.EventText, Text: string(line), Raw: bytes.Clone(line)}}
}

func (lineParser) End(Exit) Outcome { return Outcome{Result: &agentcli.Result{Text: "end"}} }

// Job.Before lines come first and Job.After lines after the CLI's own,
// through the parser; the wire log records them as stdout, so a replay
// yields the same events. After is not called for a run whose context
// ended.
func TestJobBeforeAfter(t *testing.T) {
	afterCalls := 0
	spec := &Spec{Name: "ba", Binary: "sh", Caps: agentcli.Capabilities{PermissionModes: PermissionModes},
		NewParser: func(*Run) Parser { return lineParser{} },
		Prepare: func(context.Context, *Run) (*Job, error) {
			return &Job{Args: []string{"-c", "echo middle"}, Before: [][]byte{[]byte("first")},
				After: func() [][]byte { afterCalls++; return [][]byte{[]byte("last")} }}, nil
		}}
	b := New(spec, &agentcli.Options{Path: "/bin/sh"})
	var log bytes.Buffer
	texts := func(seq func(func(agentcli.Event, error) bool)) []string {
		var out []string
		for ev, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == agentcli.EventText {
				out = append(out, ev.Text)
			}
		}
		return out
	}
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass, WireLog: &log}
	want := []string{"first", "middle", "last"}
	if got := texts(b.Stream(context.Background(), req)); !slices.Equal(got, want) || afterCalls != 1 {
		t.Fatalf("events %q (After called %d times), want %q", got, afterCalls, want)
	}
	if got := texts(b.(Replayer).Replay(bytes.NewReader(log.Bytes()))); !slices.Equal(got, want) || afterCalls != 1 {
		t.Fatalf("replayed %q, want %q", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range b.Stream(ctx, &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass}) {
		cancel()
	}
	if afterCalls != 1 {
		t.Fatalf("After called for a canceled run")
	}
}
