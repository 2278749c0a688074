package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agentcli/agentcli"
)

// fakeSession is a live session whose one turn yields a notice and a
// result carrying text, then the given error.
type fakeSession struct {
	text string
	err  error
}

func (s *fakeSession) ID() string { return "sid" }
func (s *fakeSession) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		if !yield(agentcli.Event{Kind: agentcli.EventNotice, Text: s.text}, nil) {
			return
		}
		if s.err != nil {
			yield(agentcli.Event{}, s.err)
			return
		}
		yield(agentcli.Event{Kind: agentcli.EventResult, Result: &agentcli.Result{Text: "answer", Stderr: s.text}}, nil)
	}
}
func (s *fakeSession) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	if s.err != nil {
		return &agentcli.Result{Stderr: s.text}, s.err
	}
	return &agentcli.Result{Text: "answer", Stderr: s.text}, nil
}
func (s *fakeSession) Interrupt(context.Context) error { return nil }
func (s *fakeSession) Close() error                    { return nil }
func (s *fakeSession) Err() error                      { return s.err }

// liveSpec is a spec whose live sessions record the request they start
// with and print secret (an MCP credential) in everything they report.
func liveSpec(secret string, got *[]*agentcli.Request, mu *sync.Mutex, err error) *Spec {
	spec := testSpec()
	spec.Caps.MCP = true
	spec.Caps.Efforts = []agentcli.Effort{agentcli.EffortLow}
	spec.Caps.PermissionModes = []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny}
	spec.StartSession = func(ctx context.Context, r *Run) (agentcli.Session, error) {
		mu.Lock()
		*got = append(*got, r.Req)
		mu.Unlock()
		return &fakeSession{text: "the CLI said " + secret, err: err}, nil
	}
	return spec
}

// TestLiveSettings: a live session (StartSession, and a one-shot run with
// a permission mode, which is one turn of one) gets every setting the
// backend supports and none it does not (warned about, as for any run, or
// refused under Strict before the CLI starts); what the session reports
// passes the run's redactor, MCP credentials included.
func TestLiveSettings(t *testing.T) {
	const secret = "hdr-S3CRET-value"
	req := &agentcli.Request{Prompt: "p", Effort: agentcli.EffortLow, FallbackModel: "other", Permission: agentcli.PermissionAsk,
		OnPermission: func(context.Context, *agentcli.PermissionRequest) agentcli.PermissionDecision {
			return agentcli.PermissionDecision{}
		},
		MCPServers: []agentcli.MCPServer{{Name: "a", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Key": secret}}}}
	var (
		mu  sync.Mutex
		got []*agentcli.Request
	)
	var logs bytes.Buffer
	b := New(liveSpec(secret, &got, &mu, nil), &agentcli.Options{Path: "/bin/sh", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	// StartSession runs no turn: a prompt is refused before anything
	// starts, naming the field.
	_, err := agentcli.StartSession(context.Background(), b, req)
	var rerr *agentcli.RequestError
	if !errors.As(err, &rerr) || rerr.Field != "Prompt" {
		t.Fatalf("StartSession with a prompt: %v; want a *RequestError naming Prompt", err)
	}
	sreq := *req
	sreq.Prompt = ""
	s, err := agentcli.StartSession(context.Background(), b, &sreq)
	if err != nil {
		t.Fatal(err)
	}
	var evs []agentcli.Event
	for ev, err := range s.Stream(context.Background(), "hi") {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	res, err := s.Run(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	oneShot, err := b.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Effort != agentcli.EffortLow || len(r.MCPServers) != 1 || r.FallbackModel != "" {
			t.Errorf("the session started with effort %q, %d MCP servers, fallback model %q; want the supported settings only",
				r.Effort, len(r.MCPServers), r.FallbackModel)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d sessions started, want 2", len(got))
	}
	if out := logs.String(); strings.Count(out, "level=WARN") != 1 || strings.Count(out, "does not support fallback model") != 1 {
		t.Errorf("want one warning in all (once per backend and option), about the fallback model only:\n%s", out)
	}
	all, _ := json.Marshal([]any{evs, res, oneShot})
	if bytes.Contains(all, []byte(secret)) {
		t.Errorf("the MCP credential reached the caller: %s", all)
	}
	if !bytes.Contains(all, []byte("the CLI said")) {
		t.Errorf("what the session reported is missing: %s", all)
	}

	// An error the session reports is redacted too.
	failing := New(liveSpec(secret, &got, &mu, errors.New("failed with "+secret)), &agentcli.Options{Path: "/bin/sh", Logger: slog.New(slog.DiscardHandler)})
	s, err = agentcli.StartSession(context.Background(), failing, &sreq)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "hi"); err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "failed with") {
		t.Errorf("Run error %v", err)
	}
	if err := s.Err(); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Err() = %v", err)
	}

	// Strict: refused before the CLI starts.
	n := len(got)
	strict := New(liveSpec(secret, &got, &mu, nil), &agentcli.Options{Path: "/bin/sh", Strict: true})
	var ue *agentcli.UnsupportedError
	if _, err := agentcli.StartSession(context.Background(), strict, &sreq); !errors.As(err, &ue) || !strings.Contains(ue.Feature, "fallback model") {
		t.Errorf("strict StartSession: %v", err)
	}
	if _, err := strict.Run(context.Background(), req); !errors.As(err, &ue) || !strings.Contains(ue.Feature, "fallback model") {
		t.Errorf("strict Run: %v", err)
	}
	if len(got) != n {
		t.Errorf("a strict start reached the CLI")
	}
}

// Spec.LiveRun: a bypass run it picks is one turn of a live session (the
// spec's Prepare is never called); one it does not pick is a plain run.
func TestLiveRun(t *testing.T) {
	var (
		mu  sync.Mutex
		got []*agentcli.Request
	)
	spec := liveSpec("x", &got, &mu, nil)
	prepared := 0
	spec.Prepare = func(context.Context, *Run) (*Job, error) {
		prepared++
		return nil, errors.New("prepared")
	}
	spec.LiveRun = func(req *agentcli.Request) bool { return req.SystemPrompt != "" }
	b := New(spec, &agentcli.Options{Path: "/bin/sh"})
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p", SystemPrompt: "private"})
	if err != nil || res.Text != "answer" || len(got) != 1 || got[0].SystemPrompt != "private" || prepared != 0 {
		t.Fatalf("picked: %+v, %v; %d sessions, %d prepared", res, err, len(got), prepared)
	}
	if _, err := b.Run(context.Background(), &agentcli.Request{Prompt: "p"}); err == nil || err.Error() != "prepared" || len(got) != 1 || prepared != 1 {
		t.Fatalf("not picked: %v; %d sessions, %d prepared", err, len(got), prepared)
	}
}
