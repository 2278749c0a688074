package driver

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
)

// Hooks (agentcli.Request.Hooks) reach a CLI one of two ways. A backend
// whose CLI has a hook protocol of its own calls them itself
// (Spec.NativeHooks: claude's control protocol). For the others the
// runner builds them from what every live session has:
//
//   - PreToolUse from the permission path: the backend makes its CLI ask
//     about every call it can (RunHooks.AskAll), and the live session
//     (live.Host.Ask) calls PreToolUse with each request before the
//     tool lists and the permission mode decide it; a refusal's reason
//     reaches the model where the protocol can carry one (a Proto that
//     implements live.HookDenier);
//   - PostToolUse and Stop from the event stream: each EventToolResult
//     with its EventToolUse, each turn's result with its text (Stop
//     only observes there);
//   - UserPromptSubmit, on every backend, before each prompt is sent: its
//     Context is added to the prompt.
//
// Host tools (Request.Tools) call PreToolUse in agentcli's MCP server, on
// every backend, so a native hook protocol must leave their calls alone.

// NativeHooks says which of a request's hooks a backend calls itself.
type NativeHooks struct {
	// PreToolUse, PostToolUse and Stop: the backend calls the hook,
	// through its CLI's own hook protocol.
	PreToolUse, PostToolUse, Stop bool
}

// RunHooks calls the hooks of a run or live session with agentcli's
// rules: one call at a time, each bounded by Request.PermissionTimeout
// and by its context, a panic contained.
type RunHooks struct {
	h       agentcli.Hooks
	timeout time.Duration
	sem     chan struct{}
	native  NativeHooks
	logger  *slog.Logger
	backend string

	mu   sync.Mutex
	uses map[string]agentcli.ToolUse // announced tool uses, for PostToolUse
}

// Hooks returns the run's hooks, or nil when the request has none.
func (r *Run) Hooks() *RunHooks { return r.hooks }

// newRunHooks returns the hooks of req, or nil.
func newRunHooks(backend string, req *agentcli.Request, native NativeHooks, logger *slog.Logger) *RunHooks {
	if req.Hooks == nil {
		return nil
	}
	h := &RunHooks{h: *req.Hooks, timeout: req.PermissionTimeout, sem: make(chan struct{}, 1), native: native,
		logger: logger, backend: backend, uses: map[string]agentcli.ToolUse{}}
	if h.timeout <= 0 {
		h.timeout = agentcli.DefaultPermissionTimeout
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	return h
}

// AsksAll reports that req's PreToolUse goes through the permission path
// on a backend with no hook protocol of its own (see RunHooks.AskAll). It
// is pure, for a backend's pure functions of a request.
func AsksAll(req *agentcli.Request) bool { return req.Hooks != nil && req.Hooks.PreToolUse != nil }

// HasPreToolUse reports whether the request has a PreToolUse hook.
func (h *RunHooks) HasPreToolUse() bool { return h != nil && h.h.PreToolUse != nil }

// HasPostToolUse reports whether the request has a PostToolUse hook.
func (h *RunHooks) HasPostToolUse() bool { return h != nil && h.h.PostToolUse != nil }

// HasStop reports whether the request has a Stop hook.
func (h *RunHooks) HasStop() bool { return h != nil && h.h.Stop != nil }

// AskAll reports that PreToolUse goes through the permission path: the
// backend must make its CLI ask about every call it can, in every
// permission mode, and pass the hooks to its live session
// (live.Config.Hooks).
func (h *RunHooks) AskAll() bool { return h.HasPreToolUse() && !h.native.PreToolUse }

// Native returns what the backend calls itself.
func (h *RunHooks) Native() NativeHooks {
	if h == nil {
		return NativeHooks{}
	}
	return h.native
}

// call runs f with the hooks' rules; def is the answer when it fails.
func hookCall[T any](h *RunHooks, ctx context.Context, name string, def T, f func(ctx context.Context) T) T {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	return callBounded(ctx, h.sem, def, func(ctx context.Context) T {
		defer func() {
			if r := recover(); r != nil {
				h.logger.Warn("agentcli: a hook panicked", "backend", h.backend, "hook", name, "panic", fmt.Sprint(r))
				panic(r) // callBounded answers def
			}
		}()
		return f(ctx)
	})
}

// hookFailed is the refusal reason of a PreToolUse that failed.
const hookFailed = "The call was refused: the host's PreToolUse hook did not answer."

// PreToolUse calls the PreToolUse hook about tool (nil hooks or none:
// the zero output). A hook that fails or does not answer in time
// refuses the call. An Input that is not a JSON object refuses it too.
func (h *RunHooks) PreToolUse(ctx context.Context, sessionID string, tool agentcli.ToolUse, title string) agentcli.PreToolUseOutput {
	if !h.HasPreToolUse() {
		return agentcli.PreToolUseOutput{}
	}
	in := &agentcli.PreToolUseInput{SessionID: sessionID, Tool: tool, Title: title}
	out := hookCall(h, ctx, "PreToolUse", agentcli.PreToolUseOutput{Deny: true, Reason: hookFailed}, func(ctx context.Context) agentcli.PreToolUseOutput {
		return h.h.PreToolUse(ctx, in)
	})
	if out.Deny && out.Reason == "" {
		out.Reason = "The call was refused by the host's PreToolUse hook."
	}
	if !out.Deny && out.Input != nil && !isObject(out.Input) {
		return agentcli.PreToolUseOutput{Deny: true, Reason: "The call was refused: the host's PreToolUse hook changed its input to something that is not a JSON object."}
	}
	if out.Deny {
		out.Input = nil
	}
	return out
}

// RewriteRefused is the refusal reason of a call whose input PreToolUse
// changed, where the CLI cannot run a call with changed input.
const RewriteRefused = "The call was refused: the host's PreToolUse hook changed its input, which this CLI cannot apply."

// PostToolUse calls the PostToolUse hook (nil hooks or none: the zero
// output; a failure is ignored).
func (h *RunHooks) PostToolUse(ctx context.Context, sessionID string, tool agentcli.ToolUse, res agentcli.ToolResult) agentcli.PostToolUseOutput {
	if !h.HasPostToolUse() {
		return agentcli.PostToolUseOutput{}
	}
	in := &agentcli.PostToolUseInput{SessionID: sessionID, Tool: tool, Result: res}
	return hookCall(h, ctx, "PostToolUse", agentcli.PostToolUseOutput{}, func(ctx context.Context) agentcli.PostToolUseOutput {
		return h.h.PostToolUse(ctx, in)
	})
}

// Stop calls the Stop hook (nil hooks or none: the zero output; a
// failure is ignored).
func (h *RunHooks) Stop(ctx context.Context, in agentcli.StopInput) agentcli.StopOutput {
	if !h.HasStop() {
		return agentcli.StopOutput{}
	}
	return hookCall(h, ctx, "Stop", agentcli.StopOutput{}, func(ctx context.Context) agentcli.StopOutput {
		return h.h.Stop(ctx, &in)
	})
}

// Prompt calls the UserPromptSubmit hook with prompt and returns the
// prompt to send: with the hook's Context, when it gives one, as a
// paragraph after it.
func (h *RunHooks) Prompt(ctx context.Context, sessionID, prompt string) string {
	if h == nil || h.h.UserPromptSubmit == nil {
		return prompt
	}
	in := &agentcli.UserPromptSubmitInput{SessionID: sessionID, Prompt: prompt}
	out := hookCall(h, ctx, "UserPromptSubmit", agentcli.UserPromptSubmitOutput{}, func(ctx context.Context) agentcli.UserPromptSubmitOutput {
		return h.h.UserPromptSubmit(ctx, in)
	})
	if out.Context == "" {
		return prompt
	}
	return prompt + "\n\n" + out.Context
}

// Wrap returns yield with the hooks the runner builds from the event
// stream: PostToolUse at each EventToolResult of an announced call,
// Stop at each result (unless the backend calls them itself). They run
// on the goroutine that yields, before the event is passed on.
func (h *RunHooks) Wrap(ctx context.Context, yield func(agentcli.Event, error) bool) func(agentcli.Event, error) bool {
	if h == nil || (h.native.PostToolUse || !h.HasPostToolUse()) && (h.native.Stop || !h.HasStop()) {
		return yield
	}
	return func(ev agentcli.Event, err error) bool {
		if err != nil {
			return yield(ev, err)
		}
		switch {
		case ev.Kind == agentcli.EventToolUse && ev.Tool != nil && !h.native.PostToolUse:
			h.mu.Lock()
			if len(h.uses) < 4096 {
				h.uses[ev.Tool.ID] = *ev.Tool
			}
			h.mu.Unlock()
		case ev.Kind == agentcli.EventToolResult && ev.ToolResult != nil && !h.native.PostToolUse && h.HasPostToolUse():
			h.mu.Lock()
			use, ok := h.uses[ev.ToolResult.ID]
			delete(h.uses, ev.ToolResult.ID)
			h.mu.Unlock()
			if ok {
				h.PostToolUse(ctx, ev.SessionID, use, *ev.ToolResult)
			}
		case ev.Kind == agentcli.EventResult && ev.Result != nil && !h.native.Stop && h.HasStop():
			h.Stop(ctx, agentcli.StopInput{SessionID: ev.Result.SessionID, Text: ev.Result.Text})
		}
		return yield(ev, err)
	}
}

// attachHooks readies r's hooks (see newRunHooks); oneShot is false for
// a live session.
func (b *Backend) attachHooks(r *Run, oneShot bool) {
	var native NativeHooks
	if b.spec.NativeHooks != nil && r.Req.Hooks != nil {
		live := !oneShot || b.spec.StartSession != nil &&
			(Mode(r.Req) == agentcli.PermissionAsk || b.spec.LiveRun != nil && b.spec.LiveRun(r.Req))
		native = b.spec.NativeHooks(r.Req, live)
	}
	r.hooks = newRunHooks(b.spec.Name, r.Req, native, r.Logger)
	if r.host != nil {
		r.host.hooks = r.hooks
	}
}

// checkHooks fails with an *agentcli.UnsupportedError for a hook caps
// does not carry.
func checkHooks(backend string, caps agentcli.Capabilities, req *agentcli.Request) error {
	h := req.Hooks
	if h == nil {
		return nil
	}
	c := caps.Hooks
	for _, u := range []struct {
		set, ok bool
		name    string
	}{
		{h.PreToolUse != nil, c.PreToolUse != agentcli.HookNone, "PreToolUse"},
		{h.PostToolUse != nil, c.PostToolUse, "PostToolUse"},
		{h.UserPromptSubmit != nil, c.UserPromptSubmit, "UserPromptSubmit"},
		{h.Stop != nil, c.Stop, "Stop"},
	} {
		if u.set && !u.ok {
			return &agentcli.UnsupportedError{Backend: backend, Feature: "hook " + u.name}
		}
	}
	return nil
}

// prompted returns req with its prompt passed through the
// UserPromptSubmit hook (req itself without one).
func (h *RunHooks) prompted(ctx context.Context, req *agentcli.Request) *agentcli.Request {
	if h == nil || h.h.UserPromptSubmit == nil {
		return req
	}
	c := *req
	c.Prompt = h.Prompt(ctx, req.SessionID, req.Prompt)
	return &c
}

// extrasSession is a live session with host tools or hooks: each turn's
// events pass their wrappers (HostTools.Wrap, RunHooks.Wrap), and each
// prompt the UserPromptSubmit hook.
type extrasSession struct {
	agentcli.Session
	host    *HostTools
	hooks   *RunHooks
	backend string
}

// wrapExtras returns s with the host tools' and hooks' part in every
// turn, or s itself when there is neither.
func wrapExtras(s agentcli.Session, backend string, host *HostTools, hooks *RunHooks) agentcli.Session {
	if host == nil && hooks == nil {
		return s
	}
	return &extrasSession{Session: s, host: host, hooks: hooks, backend: backend}
}

func (s *extrasSession) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return s.turn(ctx, prompt, func(prompt string) iter.Seq2[agentcli.Event, error] {
		return s.Session.Stream(ctx, prompt)
	})
}

// turn runs one turn: the host tools' turn begins, the prompt goes
// through the UserPromptSubmit hook, send starts the wrapped session's
// turn with what came out, and its events go through the hooks and the
// host tools; the turn ends at the first error.
func (s *extrasSession) turn(ctx context.Context, prompt string,
	send func(prompt string) iter.Seq2[agentcli.Event, error]) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		end := s.host.BeginTurn(ctx)
		defer end()
		if CheckPrompt(s.backend, prompt) == nil {
			prompt = s.hooks.Prompt(ctx, s.Session.ID(), prompt)
		}
		stop := false
		y := s.hooks.Wrap(ctx, s.host.Wrap(func(ev agentcli.Event, err error) bool {
			if err != nil {
				stop = true
			}
			return yield(ev, err)
		}))
		for ev, err := range send(prompt) {
			if !y(ev, err) || stop {
				return
			}
		}
	}
}

func (s *extrasSession) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	return Collect(s.backend, s.Stream(ctx, prompt))
}
