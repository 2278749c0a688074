package agentclitest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/claude"
	"github.com/agentcli/agentcli/codex"
	"github.com/agentcli/agentcli/gemini"
	"github.com/agentcli/agentcli/opencode"
)

func TestScriptedBackend(t *testing.T) {
	b := agentclitest.NewBackend(
		agentclitest.Reply("hello there", "s1"),
		agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", APIStatus: 429, Kind: agentcli.ErrRateLimited, Result: &agentcli.Result{IsError: true}}},
		agentclitest.Call{Delay: time.Hour},
	)
	var streamed strings.Builder
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p1", OnText: func(s string) { streamed.WriteString(s) }})
	if err != nil || res.Text != "hello there" || res.SessionID != "s1" || streamed.String() != "hello there" {
		t.Fatalf("first call: %+v %v, streamed %q", res, err, streamed.String())
	}
	res, err = b.Run(context.Background(), &agentcli.Request{Prompt: "p2", SessionID: "s1"})
	if !errors.Is(err, agentcli.ErrRateLimited) || res == nil || !res.IsError {
		t.Fatalf("second call: %+v %v", res, err)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: "p3", Timeout: 20 * time.Millisecond})
	if !errors.Is(err, agentcli.ErrTimeout) {
		t.Fatalf("third call: %v", err)
	}
	if _, err = b.Run(context.Background(), &agentcli.Request{Prompt: "p4"}); !errors.Is(err, agentclitest.ErrScriptExhausted) {
		t.Fatalf("exhausted: %v", err)
	}
	var prompts []string
	for _, r := range b.Requests() {
		prompts = append(prompts, r.Prompt)
	}
	if strings.Join(prompts, ",") != "p1,p2,p3,p4" || b.Requests()[1].SessionID != "s1" {
		t.Fatalf("recorded %v", prompts)
	}
}

func TestScriptedBackendConcurrent(t *testing.T) {
	def := agentclitest.Reply("ok", "s")
	b := &agentclitest.Backend{Default: &def}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for range b.Stream(ctx, &agentcli.Request{Prompt: fmt.Sprint(i)}) {
			}
		}()
	}
	wg.Wait()
	if n := len(b.Requests()); n != 20 {
		t.Fatalf("%d requests recorded", n)
	}
}

func TestScriptedBackendCancel(t *testing.T) {
	b := agentclitest.NewBackend(agentclitest.Call{Delay: time.Hour, Events: []agentcli.Event{{Kind: agentcli.EventText}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Run(ctx, &agentcli.Request{Prompt: "p"})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, agentcli.ErrCanceled) {
		t.Fatalf("err = %v", err)
	}
}

// Testing code that uses agentcli without a CLI or model: script the
// backend, run the code under test, then check what it asked.
func ExampleBackend() {
	b := agentclitest.NewBackend(agentclitest.Reply("4", "session-1"))

	// The code under test would normally get b as an agentcli.Backend.
	var backend agentcli.Backend = b
	res, err := backend.Run(context.Background(), &agentcli.Request{Prompt: "2+2?"})
	fmt.Println(res.Text, res.SessionID, err)
	fmt.Println(b.Requests()[0].Prompt)
	// Output:
	// 4 session-1 <nil>
	// 2+2?
}

// Request.DropRaw drops Raw as the real backends do, in runs and in
// sessions, without changing the script.
func TestScriptedBackendDropRaw(t *testing.T) {
	raw := []byte(`{"type":"x"}`)
	call := agentclitest.Call{
		Events: []agentcli.Event{
			{Kind: agentcli.EventText, Text: "hi", Raw: raw},
			{Kind: agentcli.EventUnknown, Raw: raw},
			{Kind: agentcli.EventNotice, Err: &agentcli.ParseError{Backend: "scripted", Line: raw}, Raw: raw},
			{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: "hi", Raw: raw}, Raw: raw},
		},
	}
	failed := agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", Result: &agentcli.Result{IsError: true, Raw: raw}}}
	b := &agentclitest.Backend{Default: &call}
	kept := func(evs []agentcli.Event) (n int) {
		for _, ev := range evs {
			if len(ev.Raw) > 0 || ev.Result != nil && len(ev.Result.Raw) > 0 {
				n++
			}
		}
		return n
	}
	collect := func(req *agentcli.Request) []agentcli.Event {
		var evs []agentcli.Event
		for ev, err := range b.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		return evs
	}
	// text delta, text, unknown, notice, result
	if evs := collect(&agentcli.Request{Prompt: "p", DropRaw: true}); len(evs) != 5 || kept(evs) != 2 ||
		len(evs[2].Raw) == 0 || len(evs[3].Raw) == 0 {
		t.Fatalf("DropRaw: %d of %d events keep Raw, want the unknown and the notice: %+v", kept(evs), len(evs), evs)
	}
	// The synthesized delta has no Raw of its own.
	if evs := collect(&agentcli.Request{Prompt: "p"}); kept(evs) != 4 || len(evs) != 5 || evs[4].Result.Raw == nil {
		t.Fatalf("without DropRaw: %d of %d events keep Raw, want all but the delta (the script must be unchanged)", kept(evs), len(evs))
	}
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", DropRaw: true})
	if err != nil || res.Raw != nil {
		t.Fatalf("Run with DropRaw: %+v, %v", res, err)
	}

	b.Push(failed, failed)
	var re *agentcli.ResultError
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", DropRaw: true}); !errors.As(err, &re) || re.Result.Raw != nil {
		t.Fatalf("DropRaw: error %v keeps its Result's Raw", err)
	}
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p"}); !errors.As(err, &re) || re.Result.Raw == nil {
		t.Fatalf("without DropRaw: error %v lost its Result's Raw", err)
	}

	s, err := b.StartSession(context.Background(), &agentcli.Request{DropRaw: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var evs []agentcli.Event
	for ev, err := range s.Stream(context.Background(), "p") {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if len(evs) != 5 || kept(evs) != 2 {
		t.Fatalf("session with DropRaw: %d of %d events keep Raw, want 2", kept(evs), len(evs))
	}
}

// Request.MaxRawBytes drops a longer Raw as the real backends do (the
// default, DefaultMaxRawBytes, too), in runs and in sessions, without
// changing the script.
func TestScriptedBackendMaxRawBytes(t *testing.T) {
	short, long := []byte(`{"type":"x"}`), []byte(`{"type":"x","pad":"`+strings.Repeat("p", agentcli.DefaultMaxRawBytes)+`"}`)
	call := agentclitest.Call{
		Events: []agentcli.Event{
			{Kind: agentcli.EventText, Text: "a", Raw: short},
			{Kind: agentcli.EventText, Text: "b", Raw: long},
			{Kind: agentcli.EventUnknown, Raw: long},
			{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: "ab", Raw: long}, Raw: short},
		},
	}
	b := &agentclitest.Backend{Default: &call}
	// Raw lengths of the text, unknown and result events, then the
	// result's, from a stream (deltas skipped).
	lens := func(req *agentcli.Request) []int {
		var n []int
		for ev, err := range b.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != agentcli.EventTextDelta {
				n = append(n, len(ev.Raw))
			}
			if ev.Result != nil {
				n = append(n, len(ev.Result.Raw))
			}
		}
		return n
	}
	s, l := len(short), len(long)
	for _, c := range []struct {
		max  int
		want []int
	}{
		{0, []int{s, 0, l, s, 0}},  // DefaultMaxRawBytes
		{-1, []int{s, l, l, s, l}}, // every Raw
		{5, []int{0, 0, l, 0, 0}},
	} {
		if got := lens(&agentcli.Request{Prompt: "p", MaxRawBytes: c.max}); !slices.Equal(got, c.want) {
			t.Errorf("MaxRawBytes %d: Raw lengths %v, want %v", c.max, got, c.want)
		}
	}
	if got := lens(&agentcli.Request{Prompt: "p"}); !slices.Equal(got, []int{s, 0, l, s, 0}) {
		t.Errorf("a second run: Raw lengths %v, the script changed", got)
	}
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p"})
	if err != nil || res.Raw != nil || res.Text != "ab" {
		t.Fatalf("Run: %+v, %v; want the result without its long Raw", res, err)
	}
	b.Push(agentclitest.Call{Err: &agentcli.ResultError{Backend: "scripted", Result: &agentcli.Result{IsError: true, Raw: long}}})
	var re *agentcli.ResultError
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p"}); !errors.As(err, &re) || re.Result.Raw != nil {
		t.Fatalf("error %v keeps its Result's long Raw", err)
	}
	sess, err := b.StartSession(context.Background(), &agentcli.Request{MaxRawBytes: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	kept := 0
	for ev, err := range sess.Stream(context.Background(), "p") {
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Raw) > 0 {
			kept++
		}
	}
	if kept != 1 {
		t.Fatalf("session with MaxRawBytes 5: %d events keep Raw, want the unknown one", kept)
	}
}

// The scripted backend refuses what the real backends refuse, with the
// same error: every request below fails on each of the four backends
// (before any CLI is looked for) and on a scripted backend that has the
// same name and capabilities, identically, one-shot and as a live
// session; and a valid request passes both, so the check can fail.
func TestScriptedValidationParity(t *testing.T) {
	dir := t.TempDir()
	bad := map[string]*agentcli.Request{
		"empty prompt":          {},
		"white-space prompt":    {Prompt: " \n\t"},
		"missing dir":           {Prompt: "p", Dir: dir + "/missing"},
		"NUL in model":          {Prompt: "p", Model: "m\x00"},
		"NUL in extra args":     {Prompt: "p", ExtraArgs: []string{"a\x00"}},
		"env without =":         {Prompt: "p", Env: []string{"NOVALUE"}},
		"negative max turns":    {Prompt: "p", MaxTurns: -1},
		"negative timeout":      {Prompt: "p", Timeout: -time.Second},
		"negative perm timeout": {Prompt: "p", PermissionTimeout: -time.Second},
		"unknown mode":          {Prompt: "p", Permission: "sometimes"},
		"ask without callback":  {Prompt: "p", Permission: agentcli.PermissionAsk},
		"bad MCP name":          {Prompt: "p", MCPServers: []agentcli.MCPServer{{Name: "a b", Command: "x"}}},
		"MCP without command":   {Prompt: "p", MCPServers: []agentcli.MCPServer{{Name: "a"}}},
		"schema not JSON":       {Prompt: "p", OutputSchema: []byte("{")},
		"unknown effort":        {Prompt: "p", Effort: "extreme"},
	}
	backends := []agentcli.Backend{
		claude.New(&agentcli.Options{Path: dir + "/no-such-cli"}),
		codex.New(&agentcli.Options{Path: dir + "/no-such-cli"}),
		gemini.New(&agentcli.Options{Path: dir + "/no-such-cli"}),
		opencode.New(&agentcli.Options{Path: dir + "/no-such-cli"}),
	}
	for _, real := range backends {
		scripted := &agentclitest.Backend{BackendName: real.Name(), Caps: real.Capabilities(), Default: &agentclitest.Call{Result: &agentcli.Result{Text: "ok"}}}
		for name, req := range bad {
			_, want := real.Run(context.Background(), req)
			_, got := scripted.Run(context.Background(), req)
			if want == nil || !errors.Is(want, agentcli.ErrBadRequest) && !errors.Is(want, agentcli.ErrUnsupported) {
				t.Fatalf("%s, %s: the real backend says %v; want a request error", real.Name(), name, want)
			}
			if got == nil || got.Error() != want.Error() || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) {
				t.Errorf("%s, %s: scripted %T %v; real %T %v", real.Name(), name, got, got, want, want)
			}
			if req.Prompt == "" || strings.TrimSpace(req.Prompt) == "" {
				continue // a live session takes its prompts turn by turn
			}
			_, want = agentcli.StartSession(context.Background(), real, req)
			_, got = scripted.StartSession(context.Background(), req)
			if want == nil || got == nil || got.Error() != want.Error() {
				t.Errorf("%s, %s, StartSession: scripted %v; real %v", real.Name(), name, got, want)
			}
		}
		// A valid request gets past the checks of both: the real
		// backend fails only because there is no CLI.
		ok := &agentcli.Request{Prompt: "p", Dir: dir, Permission: agentcli.PermissionAsk,
			OnPermission: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
				return agentcli.PermissionDecision{}
			}}
		if _, err := real.Run(context.Background(), ok); !errors.Is(err, agentcli.ErrNotFound) {
			t.Errorf("%s: a valid request: %v", real.Name(), err)
		}
		if res, err := scripted.Run(context.Background(), ok); err != nil || res.Text != "ok" {
			t.Errorf("%s, scripted: a valid request: %v", real.Name(), err)
		}
	}
	// A turn's prompt is checked as well.
	s, err := agentclitest.NewBackend(agentclitest.Reply("x", "s")).StartSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(context.Background(), " "); !errors.Is(err, agentcli.ErrBadRequest) {
		t.Errorf("an empty turn: %v", err)
	}
}
