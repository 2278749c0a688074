package agentcli

import (
	"context"
	"encoding/json"
	"iter"
	"time"
)

// Session is a live conversation with one CLI process. Turns run one at a
// time; a Session is safe for use from several goroutines (Interrupt and
// Close in particular may be called while a turn streams).
type Session interface {
	// ID returns the CLI's session id, or "" before the CLI has reported
	// one. Pass it as Request.SessionID to resume the conversation later.
	ID() string

	// Stream sends prompt as the next turn and yields the turn's events,
	// the last of which has Kind EventResult, as Backend.Stream does. An
	// interrupted turn ends with an error matching ErrInterrupted; the
	// session then takes the next prompt. Breaking out of the loop
	// interrupts the turn. Nothing is sent until the sequence is iterated;
	// an empty prompt (or one of white space only) is a *RequestError and
	// is never sent. ctx and Request.Timeout bound the turn even when the
	// CLI stops reading its stdin: the turn then ends with their error,
	// and a session whose CLI took part of the prompt, or did not end an
	// interrupted turn within Options.InterruptGrace (default 10 s), is
	// killed (Err then reports a *ProtocolError).
	Stream(ctx context.Context, prompt string) iter.Seq2[Event, error]

	// Run sends prompt as the next turn and returns its Result, as
	// Backend.Run does.
	Run(ctx context.Context, prompt string) (*Result, error)

	// Interrupt stops the current turn, if any, and returns once the CLI
	// has acknowledged it or ctx is done. Pending permission requests are
	// answered with their default decision. The session survives, unless
	// the CLI does not end the turn within Options.InterruptGrace
	// (default 10 s): it is then killed, and the turn ends all the same.
	Interrupt(ctx context.Context) error

	// Close ends the session: the CLI process and its process group are
	// gone when it returns. It never blocks for longer than the backend's
	// kill grace period plus a second. Close is idempotent.
	Close() error

	// Err returns nil while the session is alive, and afterwards why it
	// ended: ErrSessionClosed after Close, or the typed error of a CLI that
	// crashed (for example an *ExitError).
	Err() error
}

// StartSession starts a live session on b, or on the backend b wraps
// (middleware such as WithRetry and WithLimit keeps it). It runs no turn:
// req.Prompt must be empty (a non-empty Prompt is a *RequestError naming
// it, before anything starts; send the first prompt with Session.Run or
// Session.Stream, which stream its events). It reads every other field of
// req: Timeout bounds each turn, OnText receives each turn's text,
// SessionID resumes an earlier session (of a Run, a Stream or another
// live session), and WireLog records the whole session (see Replay). The
// settings (MCPServers, OutputSchema, Effort, FallbackModel,
// MaxBudgetUSD) hold for every turn, as the backend's Capabilities say;
// MaxBudgetUSD caps the whole session. ctx bounds the start only; the
// session lives until Close. A CLI that breaks its protocol (refuses the
// handshake, answers what it was not asked) fails with a *ProtocolError.
// StartSession fails with an *UnsupportedError when no backend in the
// chain can hold live sessions (Capabilities().Sessions tells
// beforehand).
func StartSession(ctx context.Context, b Backend, req *Request) (Session, error) {
	if s, ok := find[interface {
		StartSession(context.Context, *Request) (Session, error)
	}](b); ok {
		return s.StartSession(ctx, req)
	}
	return nil, &UnsupportedError{Backend: nameOf(b), Feature: "live sessions"}
}

// find returns b, or the first backend in the chain of backends b wraps
// (each one's Unwrap method, as middleware has), that implements T: the
// optional abilities a backend author's package declares (StartSession,
// Replay, Diagnose, Interactive).
func find[T any](b Backend) (T, bool) {
	for x := b; x != nil; {
		if t, ok := x.(T); ok {
			return t, true
		}
		u, ok := x.(interface{ Unwrap() Backend })
		if !ok {
			break
		}
		x = u.Unwrap()
	}
	var zero T
	return zero, false
}

// nameOf returns b's name, or "" for a nil b.
func nameOf(b Backend) string {
	if b == nil {
		return ""
	}
	return b.Name()
}

// PermissionMode says what a run may do without asking. The zero value
// means PermissionDeny: a run refuses whatever would need approval, as
// each CLI does when it runs headless without a bypass flag. Skipping
// every check takes an explicit PermissionBypass.
type PermissionMode string

const (
	// PermissionBypass: every tool call runs without asking (each CLI's
	// skip-permissions or yolo mode). Only for an agent that runs where
	// it can do no harm (a container, a throw-away checkout).
	PermissionBypass PermissionMode = "bypass"
	// PermissionAsk: Request.OnPermission decides every tool call the CLI
	// would ask about.
	PermissionAsk PermissionMode = "ask"
	// PermissionDeny: every tool call the CLI would ask about is refused,
	// and the refusal reaches the model, which goes on without it:
	// reading and searching run, writing files and running commands do
	// not (codex runs commands in its read-only sandbox, where they can
	// read but not write). Tools listed in Request.AllowedTools are
	// approved in advance and run. This is the zero value's meaning.
	PermissionDeny PermissionMode = "deny"
	// PermissionPlan: the CLI's plan (read-only) mode: it may read and
	// plan but not change anything. Only where the CLI has one.
	PermissionPlan PermissionMode = "plan"
)

// PermissionOptionKind is one kind of answer to a permission request, in
// the Agent Client Protocol's vocabulary.
type PermissionOptionKind string

const (
	// AllowOnce allows this one tool call.
	AllowOnce PermissionOptionKind = "allow_once"
	// AllowAlways allows this call and the same kind of call for the rest
	// of the session.
	AllowAlways PermissionOptionKind = "allow_always"
	// RejectOnce refuses this one tool call.
	RejectOnce PermissionOptionKind = "reject_once"
	// RejectAlways refuses this call and the same kind of call for the
	// rest of the session.
	RejectAlways PermissionOptionKind = "reject_always"
)

// PermissionOption is one answer the CLI offers to a permission request.
type PermissionOption struct {
	// ID is the CLI's own identifier of the option.
	ID string `json:"id"`
	// Kind classifies the option.
	Kind PermissionOptionKind `json:"kind"`
	// Name is the CLI's label for the option, when it has one.
	Name string `json:"name,omitempty"`
}

// PermissionRequest is a CLI asking whether a tool call may run.
type PermissionRequest struct {
	// SessionID is the CLI session the request belongs to.
	SessionID string `json:"session_id,omitempty"`
	// Tool is the call: canonical name and kind, raw name and the raw
	// input (JSON) the model gave.
	Tool ToolUse `json:"tool"`
	// Title is the CLI's one-line description of the call, when it gives
	// one (for example the command line).
	Title string `json:"title,omitempty"`
	// Options are the answers the CLI offers. Decisions may name a kind
	// the CLI does not offer; the backend then answers with the nearest
	// one it does (allow_always falls back to allow_once, reject_always to
	// reject_once).
	Options []PermissionOption `json:"options"`
}

// PermissionDecision answers a PermissionRequest.
type PermissionDecision struct {
	// Kind is the chosen answer. The zero value means RejectOnce.
	Kind PermissionOptionKind `json:"kind,omitempty"`
	// Input, when non-nil on an allow decision, replaces the tool's input
	// (for example an edited command). Backends that cannot edit input
	// report Capabilities.EditInput false and refuse the call instead of
	// running it unedited.
	Input json.RawMessage `json:"input,omitempty"`
	// Message is shown to the model with a refusal, where the CLI passes
	// one on.
	Message string `json:"message,omitempty"`
}

// Allowed reports whether d allows the call.
func (d PermissionDecision) Allowed() bool {
	return d.Kind == AllowOnce || d.Kind == AllowAlways
}

// PermissionFunc decides a permission request. ctx ends at the request's
// deadline (Request.PermissionTimeout) or when the turn is cancelled or
// interrupted; the backend then answers with the default decision
// (RejectOnce), whatever the function returns later. It is called from a
// goroutine of the backend, one call at a time per session: a call that
// outlives its request's deadline holds the next request's call back
// until it returns (the next request is refused if its own deadline comes
// first). An allow whose Input is not a JSON object is a refusal.
type PermissionFunc func(ctx context.Context, req *PermissionRequest) PermissionDecision

// DefaultPermissionTimeout bounds a permission request when
// Request.PermissionTimeout is zero.
const DefaultPermissionTimeout = 5 * time.Minute
