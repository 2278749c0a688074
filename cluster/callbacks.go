package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/nats-io/nats.go"
)

// The caller's functions that a worker's backend calls, other than
// OnPermission: the handlers of host tools (Request.Tools), OnQuestion
// and the hooks (Request.Hooks). The worker gives its backend a
// stand-in for each (a tool declared with the same name, description,
// schema and Approved), which sends the call to the caller (kindCall) and
// waits for what the caller's function returns (kindReturn) until the
// call's context ends. The worker's backend applies its own rules around
// the stand-ins as around the caller's functions locally: the deadlines
// (Request.PermissionTimeout for questions and hooks), one question or
// hook at a time, the default answer of a call that fails or does not
// answer in time, the PreToolUse check before a host tool runs.

// relayFunc sends a call to the caller and waits for its return; ok is
// false when none came (ctx ended, or the call could not be sent).
type relayFunc func(ctx context.Context, c wireCall) (r wireReturn, ok bool)

// hookNoAnswer is the refusal reason of a PreToolUse call whose caller
// did not answer (as the local backends word it).
const hookNoAnswer = "The call was refused: the host's PreToolUse hook did not answer."

// errNoReturn is the error of a host tool call or a question whose caller
// gave no answer.
var errNoReturn = errors.New("the host program did not answer")

// relay is the stream's relayFunc: the call goes to the stream's caller,
// with a deadline as long as what is left of ctx's (see await).
func (s *stream) relay(ctx context.Context, c wireCall) (wireReturn, bool) {
	if dl, ok := ctx.Deadline(); ok {
		c.Timeout = max(time.Until(dl), time.Millisecond)
	}
	return await(ctx, s, s.returns, kindCall, func(id uint64) ([]byte, error) {
		c.ID = id
		return json.Marshal(c)
	})
}

// returned takes a kindReturn from the caller. A return too large for a
// message is read from the blobs store first, on a goroutine of its own.
func (s *stream) returned(payload []byte) {
	var r wireReturn
	if json.Unmarshal(payload, &r) != nil {
		return
	}
	s.mu.Lock()
	ch := s.returns[r.ID]
	s.mu.Unlock()
	switch {
	case r.Blob == "":
		if ch != nil {
			deliver(ch, r)
		}
	case r.Blob == returnBlob(s.id, r.ID):
		// Read (and so deleted) even when nobody waits any more, and
		// once: a resent return (its reply lost) is the same blob.
		s.mu.Lock()
		seen := s.fetched[r.ID]
		if s.fetched == nil {
			s.fetched = map[uint64]bool{}
		}
		s.fetched[r.ID] = true
		s.mu.Unlock()
		if seen {
			return
		}
		go func() {
			data, err := s.w.readBlob(r.Blob)
			var full wireReturn
			if err == nil {
				err = json.Unmarshal(data, &full)
			}
			if err != nil || full.ID != r.ID || full.Blob != "" {
				full = wireReturn{ID: r.ID, Failed: true} // not left waiting
			}
			if ch != nil {
				deliver(ch, full)
			}
		}()
	}
}

// returnBlob names the object that holds the return of call id of stream
// when it is too large for a message.
func returnBlob(stream string, id uint64) string {
	return stream + "-r" + strconv.FormatUint(id, 10)
}

// standIns installs in req the stand-ins of the host tools, OnQuestion
// and hooks that wr names, each sending its calls through relay.
func standIns(req *agentcli.Request, wr *wireRequest, relay relayFunc) {
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, agentcli.Tool{Name: t.Name, Description: t.Description,
			InputSchema: json.RawMessage(t.InputSchema), Approved: t.Approved, Handler: toolStandIn(t.Name, relay)})
	}
	if wr.OnQuestion {
		req.OnQuestion = func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
			body, err := json.Marshal(q)
			if err != nil {
				return nil, err
			}
			r, ok := relay(ctx, wireCall{Kind: callQuestion, Body: body})
			if !ok || r.Failed {
				return nil, errNoReturn
			}
			var a *agentcli.Answer
			if err := json.Unmarshal(r.Body, &a); err != nil {
				return nil, err
			}
			return a, nil
		}
	}
	if h := wr.Hooks; h != nil {
		req.Hooks = hookStandIns(h, relay)
	}
}

// toolStandIn is the Handler of the host tool name on the worker.
func toolStandIn(name string, relay relayFunc) func(context.Context, json.RawMessage) (string, error) {
	return func(ctx context.Context, input json.RawMessage) (string, error) {
		c := wireCall{Kind: callTool, Tool: name, Body: input}
		if !json.Valid(input) {
			c.Body, c.InputB = nil, input
		}
		r, ok := relay(ctx, c)
		if !ok {
			if ctx.Err() != nil {
				return "", context.Cause(ctx)
			}
			return "", errNoReturn
		}
		if r.Failed {
			return "", errNoReturn
		}
		var tr wireToolReturn
		if err := json.Unmarshal(r.Body, &tr); err != nil {
			return "", fmt.Errorf("the host's answer: %w", err)
		}
		if tr.IsErr {
			return "", errors.New(tr.Err)
		}
		return tr.Text, nil
	}
}

// hookStandIns returns the stand-ins of the hooks h names.
func hookStandIns(h *wireHooks, relay relayFunc) *agentcli.Hooks {
	out := &agentcli.Hooks{}
	if h.PreToolUse {
		out.PreToolUse = hookStandIn(relay, callPreToolUse, preInput,
			agentcli.PreToolUseOutput{Deny: true, Reason: hookNoAnswer})
	}
	if h.PostToolUse {
		out.PostToolUse = hookStandIn(relay, callPostToolUse, postInput, agentcli.PostToolUseOutput{})
	}
	if h.UserPromptSubmit {
		out.UserPromptSubmit = hookStandIn[agentcli.UserPromptSubmitInput](relay, callUserPromptSubmit, nil, agentcli.UserPromptSubmitOutput{})
	}
	if h.Stop {
		out.Stop = hookStandIn[agentcli.StopInput](relay, callStop, nil, agentcli.StopOutput{})
	}
	return out
}

// preInput and postInput point to the tool input of a hook's input.
func preInput(in *agentcli.PreToolUseInput) *json.RawMessage   { return &in.Tool.Input }
func postInput(in *agentcli.PostToolUseInput) *json.RawMessage { return &in.Tool.Input }

// hookStandIn returns the stand-in of a hook of kind: it relays each call
// (the tool input that input points to, when not JSON, as bytes) and
// returns the caller's output, or failed when none came.
func hookStandIn[In, Out any](relay relayFunc, kind string, input func(*In) *json.RawMessage, failed Out) func(context.Context, *In) Out {
	return func(ctx context.Context, in *In) Out {
		cp := *in
		var inputB []byte
		if input != nil {
			if p := input(&cp); len(*p) > 0 && !json.Valid(*p) {
				inputB, *p = *p, nil
			}
		}
		var o Out
		if !hookRelay(ctx, relay, kind, &cp, inputB, &o) {
			return failed
		}
		return o
	}
}

// hookRelay sends a hook's call (in, with its tool input as inputB when
// that is not JSON) and decodes what the caller's hook returned into out.
// It reports false when the hook gave nothing: no return in time, or it
// failed (panicked).
func hookRelay(ctx context.Context, relay relayFunc, kind string, in any, inputB []byte, out any) bool {
	body, err := json.Marshal(in)
	if err != nil {
		return false
	}
	r, ok := relay(ctx, wireCall{Kind: kind, Body: body, InputB: inputB})
	if !ok || r.Failed || json.Unmarshal(r.Body, out) != nil {
		return false
	}
	if pre, isPre := out.(*agentcli.PreToolUseOutput); isPre && r.InputB != nil {
		pre.Input = r.InputB
	}
	return true
}

// The caller's side.

// callLocked starts the caller's function for a call from the worker:
// its context ends at the call's deadline, when the worker stops waiting
// (kindPermitEnd), or when the run ends. A call of a function the
// request does not have fails at once. c.mu is held.
func (c *call) callLocked(payload []byte) {
	var w wireCall
	if json.Unmarshal(payload, &w) != nil {
		return
	}
	f := c.function(&w)
	if f == nil {
		// Nothing here to call (not one of the request's functions):
		// failed at once, rather than left to wait on.
		f = func(context.Context) wireReturn { return wireReturn{Failed: true} }
	}
	ctx, cancel := context.WithCancel(c.permCtx)
	if w.Timeout > 0 {
		ctx, cancel = context.WithTimeout(c.permCtx, w.Timeout)
	}
	c.perms[w.ID] = cancel
	go c.answer(ctx, cancel, w.ID, w.Kind, f)
}

// function returns the caller's function a call from the worker asks
// for, bound to the call's input, or nil when there is none.
func (c *call) function(w *wireCall) func(ctx context.Context) wireReturn {
	req := c.req
	switch w.Kind {
	case callTool:
		for _, t := range req.Tools {
			if t.Name == w.Tool && t.Handler != nil {
				input := json.RawMessage(w.Body)
				if w.InputB != nil {
					input = w.InputB
				}
				return func(ctx context.Context) wireReturn { return runTool(ctx, t, input) }
			}
		}
	case callQuestion:
		var q agentcli.Question
		if req.OnQuestion == nil || json.Unmarshal(w.Body, &q) != nil {
			return nil
		}
		return func(ctx context.Context) wireReturn {
			a, err := askQuestion(ctx, req.OnQuestion, &q)
			if err != nil {
				return wireReturn{Failed: true}
			}
			body, err := json.Marshal(a)
			if err != nil {
				return wireReturn{Failed: true}
			}
			return wireReturn{Body: body}
		}
	case callPreToolUse, callPostToolUse, callUserPromptSubmit, callStop:
		if req.Hooks != nil {
			return hookFunction(req.Hooks, w)
		}
	}
	return nil
}

// runTool runs a call of the host tool t; a panic is an error, worded
// as the local backends word it.
func runTool(ctx context.Context, t agentcli.Tool, input json.RawMessage) (r wireReturn) {
	defer func() {
		if recover() != nil {
			r = toolReturn("", fmt.Errorf("the tool %s failed (it panicked)", t.Name))
		}
	}()
	return toolReturn(t.Handler(ctx, input))
}

func toolReturn(text string, err error) wireReturn {
	tr := wireToolReturn{Text: text}
	if err != nil {
		tr = wireToolReturn{Err: err.Error(), IsErr: true}
	}
	body, _ := json.Marshal(tr) // strings only
	return wireReturn{Body: body}
}

// askQuestion calls OnQuestion; a panic is an error.
func askQuestion(ctx context.Context, f agentcli.QuestionFunc, q *agentcli.Question) (a *agentcli.Answer, err error) {
	defer func() {
		if recover() != nil {
			a, err = nil, errors.New("OnQuestion panicked")
		}
	}()
	return f(ctx, q)
}

// hookFunction returns the hook of hs that w calls, bound to its input,
// or nil when hs does not have it.
func hookFunction(hs *agentcli.Hooks, w *wireCall) func(ctx context.Context) wireReturn {
	switch w.Kind {
	case callPreToolUse:
		return bindHook(hs.PreToolUse, w, preInput)
	case callPostToolUse:
		return bindHook(hs.PostToolUse, w, postInput)
	case callUserPromptSubmit:
		return bindHook(hs.UserPromptSubmit, w, nil)
	case callStop:
		return bindHook(hs.Stop, w, nil)
	}
	return nil
}

// bindHook returns the hook f bound to w's input (its tool input, which
// input points to, from w.InputB when set), or nil when f is nil or the
// input does not decode.
func bindHook[In, Out any](f func(context.Context, *In) Out, w *wireCall, input func(*In) *json.RawMessage) func(context.Context) wireReturn {
	var in In
	if f == nil || json.Unmarshal(w.Body, &in) != nil {
		return nil
	}
	if input != nil && w.InputB != nil {
		*input(&in) = w.InputB
	}
	return func(ctx context.Context) wireReturn {
		return hookReturn(func() any { return f(ctx, &in) })
	}
}

// hookReturn calls a hook and encodes its output; a panic, or a
// PreToolUse Input that is not JSON, is sent as it is: failed, or as
// bytes, for the worker's backend to judge as it judges local hooks.
func hookReturn(call func() any) (r wireReturn) {
	defer func() {
		if recover() != nil {
			r = wireReturn{Failed: true}
		}
	}()
	out := call()
	if pre, ok := out.(agentcli.PreToolUseOutput); ok && len(pre.Input) > 0 && !json.Valid(pre.Input) {
		r.InputB, pre.Input = pre.Input, nil
		out = pre
	}
	body, err := json.Marshal(out)
	if err != nil {
		return wireReturn{Failed: true}
	}
	r.Body = body
	return r
}

// answer runs f and sends what it returned to the worker, through the
// blobs store when it is too large for a message, until ctx ends.
func (c *call) answer(ctx context.Context, cancel context.CancelFunc, id uint64, kind string, f func(ctx context.Context) wireReturn) {
	defer cancel()
	r := f(ctx)
	c.mu.Lock()
	delete(c.perms, id)
	ctl := c.ctl
	c.mu.Unlock()
	if ctx.Err() != nil {
		return // the worker has stopped waiting
	}
	r.ID = id
	payload, err := json.Marshal(r)
	if err != nil {
		return
	}
	if len(payload) > c.b.inlineLimit() {
		name := returnBlob(c.id, id)
		if err := c.b.putBlob(ctx, name, payload); err != nil {
			// Too large even for the store, or the store failed: the
			// worker gets a failure rather than waiting on.
			r = wireReturn{ID: id, Failed: true}
			if kind == callTool {
				r = toolReturn("", fmt.Errorf("its output (%d bytes) could not be passed on: %w", len(payload), err))
				r.ID = id
			}
			payload, _ = json.Marshal(r)
		} else {
			payload, _ = json.Marshal(wireReturn{ID: id, Blob: name})
		}
	}
	c.send(ctx, ctl, newFrame(kindReturn, 0, payload))
}

// send sends a request to the worker's control subject of the call until
// the worker answers or ctx ends.
func (c *call) send(ctx context.Context, ctl string, frame []byte) {
	for ctx.Err() == nil {
		wait := min(2*c.b.opts.Heartbeat, time.Until(deadlineOf(ctx)))
		msg, err := c.b.nc.Request(ctl, frame, max(wait, time.Millisecond))
		if err == nil {
			_, _ = parseReply(msg.Data)
			return
		}
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionClosed) {
			return
		}
	}
}
