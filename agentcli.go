// Package agentcli runs coding-agent CLIs — Claude Code (claude), OpenAI Codex
// (codex), Gemini CLI (gemini) and OpenCode (opencode) — behind one [Backend]
// interface.
//
// A program asks a [Backend] to run a [Request]; it gets back either a final
// [Result] ([Backend.Run]) or a stream of normalized [Event] values
// ([Backend.Stream]): text and text deltas, thinking, tool use and results
// (with canonical tool names such as [ToolNameBash]), usage, retries and the
// final result. Which CLI is underneath does not matter to the caller.
//
// Backends register themselves by name when their package is imported, in the
// style of database/sql drivers:
//
//	import (
//		"github.com/agentcli/agentcli"
//		_ "github.com/agentcli/agentcli/claude"
//	)
//
//	b, err := agentcli.Open("claude", nil)
//
// Every backend shares one process layer: each CLI runs in its own process
// group, stdin always has an end, stderr is drained into a bounded tail,
// stdout lines have no 64 KiB limit, and cancellation or a timeout terminates
// the whole group (SIGTERM, a grace period, then SIGKILL). Errors are typed;
// see [ErrTimeout], [ErrResult] and friends.
package agentcli

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"time"
)

// Backend runs prompts on one coding-agent CLI.
//
// Implementations are safe for concurrent use: each Run or Stream starts its
// own CLI process. The interface is kept small so it can stay fixed: further
// abilities, such as a multi-turn session handle, are separate optional
// interfaces a Backend may also implement (checked with a type assertion,
// like io.WriterTo), and further per-run inputs, such as a permission
// (approval) callback, are new Request fields whose zero value keeps
// today's behaviour.
type Backend interface {
	// Name reports the registry name of the backend, such as "claude".
	Name() string

	// Run runs req to completion and returns its final Result. It blocks
	// until the run is over and its processes are reaped (see the README's
	// reliability section for exactly what is reaped). A nil req is an
	// empty Request, which fails: the prompt is required.
	//
	// When the run fails after the CLI produced a result (for example an API
	// error reported in the CLI's terminal event), Run returns that Result
	// together with a non-nil error, like os/exec's Output.
	Run(ctx context.Context, req *Request) (*Result, error)

	// Stream starts req and yields its normalized events as they arrive.
	// Nothing runs until the sequence is iterated, and each iteration is
	// a new run: ranging over the same sequence twice runs the CLI twice.
	// The last event of a successful run has Kind EventResult. A non-nil
	// error is always the last element of the sequence; once ctx is done
	// (or Request.Timeout expires) no further event is yielded, only that
	// error. Breaking out of the loop stops the CLI (its whole process
	// group) and reaps it before the loop statement returns. Text deltas
	// (EventTextDelta) add up to all of the assistant's text on every
	// backend, so a caller that prints only them prints the answer once.
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]

	// Check reports whether the CLI is reachable: the binary resolves on PATH
	// (or at the configured path) and is executable. The error is a
	// *BinaryError naming the backend and path. Check does not start the CLI.
	Check(ctx context.Context) error

	// Capabilities describes what the backend supports.
	Capabilities() Capabilities
}

// Request describes one prompt to run. The zero value of every field except
// Prompt means "the CLI's own default".
//
// A backend reads the Request when the run starts (when Run is called, or
// when a Stream's iteration begins) and validates it then: an empty prompt,
// a Dir that does not exist, a NUL byte where the CLI could not carry it or
// an id or tool rule the CLI would misread fails with an *RequestError
// before any process starts. It does not keep or modify the Request; the
// callbacks (OnText, OnPermission) are called during the run only. Changing
// a Request while a run that uses it is starting is a data race.
type Request struct {
	// Prompt is the user message. It is passed to the CLI so that it can
	// never be read as a flag, and may be larger than the kernel's limit on
	// a single argument.
	Prompt string

	// Attachments are images and text files sent with the prompt
	// (Capabilities.Attachments says which kinds the backend takes; see
	// Attachment for the checks and limits). A live session takes them
	// per turn (StreamTurn), not here: StartSession refuses them.
	Attachments []Attachment

	// SystemPrompt is extra system-level instruction. How each CLI carries it
	// is reported by Capabilities().SystemPrompt.
	SystemPrompt string

	// SessionID resumes an earlier session (a Result.SessionID) when set.
	SessionID string

	// ForkSession, with SessionID or Continue, resumes that session into
	// a new session (a new id, reported as usual) that starts with its
	// history; the original session stays as it was
	// (Capabilities.ForkSession). Without either it is a *RequestError.
	ForkSession bool
	// Continue resumes the most recently updated session of Dir (the
	// first one ListSessions reports) (Capabilities.ContinueSession).
	// With none there, the run fails before the CLI starts with an error
	// matching ErrNoSession. With SessionID it is a *RequestError.
	Continue bool
	// NewSessionID is the id the new session gets instead of one the CLI
	// makes up: a UUID not in use yet (Capabilities.NewSessionID). With
	// SessionID or Continue it is a *RequestError, unless ForkSession
	// names the fork's id this way where the CLI allows it.
	NewSessionID string

	// Model selects the model, in the backend's own naming.
	Model string

	// MaxTurns limits agentic turns; 0 means the CLI's default. A backend
	// that cannot enforce it (Capabilities.MaxTurns) refuses the run with
	// an *UnsupportedError.
	MaxTurns int

	// AllowedTools, when not empty, is the complete list of tools the
	// agent may use, in every permission mode, one-shot and live: a tool
	// that is not listed is not offered to the model (or, where a CLI
	// cannot take it away, every call of it is refused). A listed tool is
	// approved in advance: it runs without asking (under PermissionPlan
	// the CLI's plan mode still decides).
	//
	// A rule is a tool name, canonical (ToolNameBash, ToolNameRead, ...;
	// any case) or the CLI's own ("run_shell_command"), or an MCP tool as
	// "mcp__SERVER__TOOL" (every tool of a server: "mcp__SERVER"). A
	// rule may limit the calls it approves with a pattern in
	// parentheses, in Claude Code's syntax: "Bash(git *)" approves
	// commands that start with "git"; the tool's other calls are then
	// refused, or asked about under PermissionAsk. Which rules a backend
	// can enforce differs (claude takes every rule it knows; see the
	// backend's documentation): a rule it cannot enforce fails the run
	// with an *UnsupportedError before anything starts.
	AllowedTools []string
	// DisallowedTools lists tools that never run, in every permission
	// mode (PermissionBypass included), even when AllowedTools lists
	// them too; same syntax as AllowedTools.
	DisallowedTools []string

	// Dir is the working directory of the CLI process; empty means the
	// current directory.
	Dir string

	// Env holds extra "KEY=value" entries added to the CLI's environment.
	// They override inherited variables of the same name.
	Env []string

	// ReplaceEnv makes the CLI's environment exactly Options.Env followed
	// by Env, with nothing inherited from this process (os/exec's Cmd.Env
	// semantics). A hermetic test uses it so that no API key or base URL
	// of the developer's reaches the CLI. agentcli may still add variables
	// of its own (a run tag, a private config file).
	ReplaceEnv bool

	// Timeout bounds the whole run; 0 means no limit beyond ctx. When it
	// expires the run fails with an error matching ErrTimeout.
	Timeout time.Duration

	// OnText, if set, is called with each piece of assistant text as it
	// streams (text deltas where the CLI reports them, whole text blocks
	// otherwise). It is called from the goroutine that consumes the run and
	// must not block for long.
	OnText func(text string)

	// ExtraArgs are appended to the CLI's arguments before the prompt, as an
	// escape hatch for flags agentcli does not model.
	ExtraArgs []string

	// WireLog, if set, receives a lossless record of the run's traffic:
	// every line the CLI wrote to stdout and every message agentcli wrote
	// to its stdin, byte-exact and in order, then how the CLI ended. Replay
	// turns it back into the run's events. For a live session
	// (StartSession, or a run with a permission mode that goes through
	// one) it records the whole session, handshake and every turn, with
	// where each turn began and why one ended early; Replay turns it back
	// into each turn's events. The format is NDJSON, one record per line
	// (documented on Replay). The writer is used from the run's
	// goroutines, one write per record; a write error stops the log, not
	// the run. Like any capture of a CLI's output, the log holds what the
	// model and tools printed, and the prompts, unredacted: store it
	// accordingly.
	WireLog io.Writer

	// DropRaw leaves Event.Raw and Result.Raw empty, except on events that
	// carry nothing else: EventUnknown, and the EventNotice of a line that
	// did not parse. Raw keeps every output line alive next to what was
	// decoded from it; without it a run allocates about half as much and
	// streams large outputs markedly faster, with the same events
	// otherwise. WireLog still records every line.
	DropRaw bool

	// MaxRawBytes bounds Raw: an event whose Raw would be longer than
	// MaxRawBytes has none, and a Result whose Raw would be has none,
	// with the same exceptions as DropRaw (an EventUnknown, or the
	// EventNotice of a line that did not parse, keeps its Raw whatever
	// its length). A line that long (a tool's whole output) then costs
	// about its own size in memory instead of twice that: its long
	// strings are decoded in the line's memory, which Raw would have to
	// keep as printed. Zero means DefaultMaxRawBytes; a negative value
	// keeps every Raw. WireLog records every line whatever its length.
	MaxRawBytes int

	// Permission says what the run may do without asking; the zero value
	// is PermissionDeny (whatever would need approval is refused).
	// Capabilities.PermissionModes lists the modes a backend supports;
	// any other fails the run before the CLI starts with an
	// *UnsupportedError.
	Permission PermissionMode

	// OnPermission decides the tool calls the CLI asks about under
	// PermissionAsk (required then, ignored otherwise).
	OnPermission PermissionFunc

	// PermissionTimeout bounds each permission request; when it expires
	// the request is refused. Zero means DefaultPermissionTimeout.
	PermissionTimeout time.Duration

	// The settings below are carried by each CLI's own mechanism (see the
	// backend's package documentation). A backend that cannot honour one
	// ignores it with a warning, or fails the run with an
	// *UnsupportedError under Options.Strict; Capabilities tells which it
	// honours. A limit it cannot enforce (MaxTurns, MaxBudgetUSD) always
	// fails the run with an *UnsupportedError.

	// MCPServers are Model Context Protocol servers the run's agent may
	// use, on top of the CLI's built-in tools (Capabilities.MCP). They
	// reach the CLI through a private (0600) configuration file, never
	// through its arguments, so that Env and Headers, which often hold
	// credentials, are not visible to other local users. Whether the
	// servers the user configured for the CLI stay available too differs
	// by CLI; see the backend's documentation.
	//
	// Every backend's CLI waits for the servers to start before its first
	// model request, so that a server which takes seconds to start is
	// offered from the first turn (within the CLI's startup timeout: 60 s
	// for codex, set by agentcli, and for droid). A server that does
	// not start fails the run on codex (*ProtocolError, or *ExitError with
	// ExtraArgs, naming it) and on droid's one-shot runs (*ExitError with
	// a Hint); the other CLIs, and droid's sessions, run without its
	// tools. Where the CLI says so (claude, qwen, and copilot's one-shot
	// runs), such a server is an EventNotice whose Text names it (`MCP
	// server "NAME" did not start (STATUS); its tools are not
	// available`), once per run or session; gemini, opencode and the
	// sessions of copilot and droid do not report it.
	MCPServers []MCPServer

	// Tools are host tools: functions of this program the agent may call
	// (Capabilities.HostTools), served to the CLI by an MCP server of the
	// run's own (see Tool). They are the host's own: AllowedTools does
	// not take them away (an allow list that does not name them leaves
	// them offered) and cannot name them; a DisallowedTools rule that
	// names one, by its Name or as "mcp__agentcli__NAME" ("mcp__agentcli"
	// for every one), leaves it out of the run. Tool.Approved approves one
	// in advance; the others are decided by the permission mode.
	Tools []Tool

	// OnQuestion answers the questions the agent asks the user
	// (Capabilities.Questions), each CLI's own way of asking or, where a
	// CLI has none, agentcli's own question tool. Nil means no one is
	// there to ask: a question the CLI still puts is answered with
	// NotAvailableMessage, never left waiting or answered empty.
	OnQuestion QuestionFunc

	// Hooks, if set, are called before and after tool calls, when a
	// prompt is submitted and when a turn ends (Capabilities.Hooks says
	// how each backend carries them). A run with hooks goes through a
	// live session where the CLI needs one.
	Hooks *Hooks

	// OutputSchema, if set, is a JSON Schema (a JSON object) that the
	// final answer must follow (Capabilities.StructuredOutput). The
	// answer's JSON value is then Result.StructuredOutput, and a run whose
	// final answer is not a JSON value fails with a *ResultError.
	OutputSchema json.RawMessage

	// Effort sets how much the model reasons before it answers; the zero
	// value is the CLI's default. Capabilities.Efforts lists the levels a
	// backend supports.
	Effort Effort

	// FallbackModel is a model to switch to when Model is overloaded or
	// unavailable, in the backend's own naming (Capabilities.FallbackModel).
	FallbackModel string

	// MaxBudgetUSD, if positive, is the most the run may spend on API
	// calls, in US dollars, as the CLI computes its cost
	// (Capabilities.MaxBudget). A run that reaches it fails with a
	// *ResultError whose TerminalReason is "budget_exhausted". A backend
	// that cannot enforce it refuses the run with an *UnsupportedError.
	MaxBudgetUSD float64
}

// Options configure a Backend. A nil *Options means defaults everywhere.
type Options struct {
	// Path is the CLI binary, as a path or a name looked up on PATH. Empty
	// means the backend's default name ("claude", "codex", ...).
	Path string

	// Args are the arguments that start the CLI in the mode the backend
	// speaks, for a backend that runs whatever command it is given: the
	// generic "acp" backend (package acpagent) runs Path with Args as an
	// Agent Client Protocol agent, for example Path "qwen" with Args
	// ["--acp"], or Path "npx" with Args ["@zed-industries/codex-acp"].
	// For a known ACP agent ("qwen-acp", ...), non-empty Args replace the
	// agent's own. Every other backend ignores them (Request.ExtraArgs is
	// their escape hatch). They are passed as given, never to a shell.
	Args []string

	// Env holds "KEY=value" entries added to every run's environment
	// (before Request.Env).
	Env []string

	// Logger receives the backend's log records: warnings (an option
	// the backend does not support), one record per run at info level
	// and, at debug level, what was started and how long it took. Nil
	// means none: agentcli logs nothing unless given a logger.
	Logger *slog.Logger

	// KillGrace is how long the CLI's process group has between SIGTERM and
	// SIGKILL when a run is cancelled or times out. Zero means 3 seconds.
	KillGrace time.Duration

	// InterruptGrace is how long a live session's CLI has to end a turn
	// after the turn is interrupted (Session.Interrupt, the turn's
	// context ending, Request.Timeout, a Stream loop left early) before
	// the session is killed as unresponsive: the turn ends all the same,
	// and Session.Err reports a *ProtocolError. A CLI on a busy machine
	// can take seconds to end a turn; Session.Interrupt and a cancelled
	// turn wait for it that long at most. Zero means 10 seconds.
	InterruptGrace time.Duration

	// MaxLineBytes caps one line of CLI output. A longer line is skipped and
	// reported as an EventNotice carrying a *LineTooLongError; reading goes
	// on at the next line. Zero means 64 MiB.
	MaxLineBytes int

	// StderrTailBytes is how much of the end of the CLI's stderr is kept for
	// error messages. Zero means 8 KiB.
	StderrTailBytes int

	// Strict turns a Request option the backend does not support (see
	// Capabilities) from a logged warning into an *UnsupportedError naming
	// the backend and the option, returned before anything starts. A limit
	// (Request.MaxTurns, MaxBudgetUSD) the backend cannot enforce is that
	// error without Strict too.
	Strict bool
}

// Capabilities describes what a backend supports. Options a backend does not
// support are ignored with a warning on the backend's logger (once per
// backend and option, not on every run).
type Capabilities struct {
	// TextDeltas reports whether text arrives in pieces (EventTextDelta)
	// while the model is still writing.
	TextDeltas bool `json:"text_deltas"`
	// Thinking reports whether the CLI reports model reasoning (EventThinking).
	Thinking bool `json:"thinking"`
	// Resume reports whether Request.SessionID is supported.
	Resume bool `json:"resume"`
	// SystemPrompt tells how Request.SystemPrompt reaches the model.
	SystemPrompt SystemPromptMode `json:"system_prompt"`
	// MaxTurns reports whether Request.MaxTurns is enforced by the CLI.
	MaxTurns bool `json:"max_turns"`
	// ToolFilter reports whether AllowedTools/DisallowedTools are
	// enforced. A backend without it fails a request that sets them with
	// an *UnsupportedError.
	ToolFilter bool `json:"tool_filter"`
	// Cost reports whether the CLI reports a cost in USD.
	Cost bool `json:"cost"`
	// CumulativeUsage reports that the CLI reports usage summed over the
	// whole session, resumed turns included, rather than per run.
	CumulativeUsage bool `json:"cumulative_usage"`
	// Sessions reports that StartSession works on the backend (live
	// sessions, several prompts to one CLI process).
	Sessions bool `json:"sessions"`
	// Interrupt reports that a live session's turn can be interrupted
	// without ending the session.
	Interrupt bool `json:"interrupt"`
	// PermissionModes lists the Request.Permission values the backend
	// supports (PermissionBypass always among them).
	PermissionModes []PermissionMode `json:"permission_modes"`
	// EditInput reports that a permission decision may replace a tool
	// call's input.
	EditInput bool `json:"edit_input"`
	// Interactive reports that the backend can hand a terminal to its
	// CLI's own interactive UI (Interactive).
	Interactive bool `json:"interactive"`
	// PortableSessions reports that ExportSession and ImportSession move
	// the backend's sessions between machines.
	PortableSessions bool `json:"portable_sessions"`

	// MCP reports that Request.MCPServers is supported.
	MCP bool `json:"mcp"`
	// StructuredOutput reports that Request.OutputSchema is supported and
	// Result.StructuredOutput is set.
	StructuredOutput bool `json:"structured_output"`
	// Efforts lists the Request.Effort levels the backend supports; empty
	// means none.
	Efforts []Effort `json:"efforts"`
	// FallbackModel reports that Request.FallbackModel is supported.
	FallbackModel bool `json:"fallback_model"`
	// MaxBudget reports that Request.MaxBudgetUSD is enforced by the CLI.
	MaxBudget bool `json:"max_budget"`
	// HostTools reports that Request.Tools is supported, one-shot and
	// live, in every permission mode the backend has.
	HostTools bool `json:"host_tools"`
	// Questions reports that the agent can ask the user questions that
	// reach Request.OnQuestion.
	Questions bool `json:"questions"`
	// Hooks describes how Request.Hooks are carried.
	Hooks HookSupport `json:"hooks"`
	// Attachments lists the kinds of Request.Attachments (and of a live
	// session's Turn) the backend takes, one-shot and live: "image" (PNG,
	// JPEG, GIF and WebP), the media types of the image formats it takes
	// when not all, and "text"; empty means none.
	Attachments []AttachmentKind `json:"attachments"`

	// ForkSession says where Request.ForkSession works; elsewhere it
	// fails with an *UnsupportedError before anything starts.
	ForkSession SessionModes `json:"fork_session"`
	// ContinueSession says where Request.Continue works.
	ContinueSession SessionModes `json:"continue_session"`
	// NewSessionID says where Request.NewSessionID works.
	NewSessionID SessionModes `json:"new_session_id"`
	// ListSessions reports that ListSessions works.
	ListSessions bool `json:"list_sessions"`

	// ContextUsage reports that the CLI reports how full the context
	// window is (EventContextUsage).
	ContextUsage bool `json:"context_usage"`
	// Compaction reports that the CLI reports compactions of the
	// conversation (EventCompaction).
	Compaction bool `json:"compaction"`
	// RateLimits reports that the CLI reports the state of the account's
	// rate limits (EventRateLimit) in some runs; see the backend's
	// documentation for which (claude: with subscription credentials
	// only; codex: live sessions only).
	RateLimits bool `json:"rate_limits"`
	// RateLimitReset reports that a rate-limited run's *RateLimitError
	// can carry the time the limit resets (RateLimitError.ResetsAt), in
	// the cases the backend's documentation lists.
	RateLimitReset bool `json:"rate_limit_reset"`

	// SetModel reports that SetModel switches a live session's model.
	SetModel bool `json:"set_model"`
	// SetPermission lists the modes SetPermission can switch a live
	// session to; empty means none (see the backend's documentation for
	// a backend that can switch only between some of them).
	SetPermission []PermissionMode `json:"set_permission"`
	// Steer tells how Steer reaches a live session's running turn
	// (SteerNone: it cannot).
	Steer SteerMode `json:"steer"`
}

// SystemPromptMode tells how a backend delivers Request.SystemPrompt.
type SystemPromptMode string

const (
	// SystemPromptNone: the backend has no way to carry a system prompt.
	SystemPromptNone SystemPromptMode = "none"
	// SystemPromptAppend: appended to the CLI's own system prompt.
	SystemPromptAppend SystemPromptMode = "append"
	// SystemPromptDeveloper: sent as a developer-role message.
	SystemPromptDeveloper SystemPromptMode = "developer"
	// SystemPromptPrepend: prepended to the user prompt text.
	SystemPromptPrepend SystemPromptMode = "prepend"
)

// EventKind classifies an Event.
type EventKind string

const (
	// EventInit: the CLI started a session; SessionID and Model are set.
	EventInit EventKind = "init"
	// EventTextDelta: a piece of assistant text; Text is set.
	EventTextDelta EventKind = "text_delta"
	// EventText: a complete block of assistant text; Text is set.
	EventText EventKind = "text"
	// EventThinking: model reasoning; Text is set (a delta when Delta is true).
	EventThinking EventKind = "thinking"
	// EventToolUse: the model called a tool; Tool is set.
	EventToolUse EventKind = "tool_use"
	// EventToolResult: a tool finished; ToolResult is set.
	EventToolResult EventKind = "tool_result"
	// EventUsage: token usage so far; Usage is set.
	EventUsage EventKind = "usage"
	// EventRetry: the CLI is retrying a failed API call; Retry is set. The
	// run goes on.
	EventRetry EventKind = "retry"
	// EventResult: the run finished; Result is set. Always the last event of
	// a successful run.
	EventResult EventKind = "result"
	// EventNotice: something non-fatal went wrong reading output (a line too
	// long, a line that is not JSON, a non-fatal error the CLI reported); Err
	// or Text is set. The run goes on.
	EventNotice EventKind = "notice"
	// EventUnknown: a line the backend does not know; Raw holds it.
	EventUnknown EventKind = "unknown"
)

// Event is one normalized event of a run.
//
// An event's strings and Raw may share memory with the CLI output line it
// came from, so an event kept alive keeps that line alive with it. A
// program that keeps a small part of
// many events for long (a text, a tool id) and drops the rest should copy
// that part ([strings.Clone], [bytes.Clone]). The Result of a run
// (Backend.Run, Backend.Stream) and its events' session ids have memory
// of their own.
type Event struct {
	// Kind says which of the fields below are set.
	Kind EventKind `json:"kind"`
	// SessionID is the CLI's session id when the line carried one.
	SessionID string `json:"session_id,omitempty"`
	// Text is the text of text, text delta, thinking and notice events.
	Text string `json:"text,omitempty"`
	// Delta marks a thinking event that is a piece rather than a block.
	Delta bool `json:"delta,omitempty"`
	// Model is set on init events when the CLI reports it.
	Model string `json:"model,omitempty"`
	// Version is the CLI's version, on init events of CLIs that report
	// it.
	Version string `json:"version,omitempty"`
	// Tool is the call of an EventToolUse.
	Tool *ToolUse `json:"tool,omitempty"`
	// ToolResult is the outcome of an EventToolResult.
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	// Usage is the token usage so far of an EventUsage.
	Usage *Usage `json:"usage,omitempty"`
	// Retry describes the API retry of an EventRetry.
	Retry *Retry `json:"retry,omitempty"`
	// Result is the final result of an EventResult.
	Result *Result `json:"result,omitempty"`
	// ContextUsage is the context window's fill of an EventContextUsage.
	ContextUsage *ContextUsage `json:"context_usage,omitempty"`
	// Compaction describes the compaction of an EventCompaction.
	Compaction *Compaction `json:"compaction,omitempty"`
	// RateLimit is the rate limit state of an EventRateLimit.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	// Err is the non-fatal error of a notice event.
	Err error `json:"-"`
	// Subagent is the id of the tool call (a sub-agent task) this event
	// belongs to, when the CLI nests sub-agent traffic; empty on the main
	// thread.
	Subagent string `json:"subagent,omitempty"`
	// Raw is the CLI output line the event came from; empty under
	// Request.DropRaw and for a line longer than Request.MaxRawBytes.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// DefaultMaxRawBytes is the longest Raw an event or Result keeps when
// Request.MaxRawBytes is zero: 1 MiB.
const DefaultMaxRawBytes = 1 << 20

// MarshalJSON encodes the event with Err as an "error" string. Raw is
// included only when it is valid JSON.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	out := struct {
		plain
		Error string `json:"error,omitempty"`
	}{plain: plain(e)}
	if e.Err != nil {
		out.Error = e.Err.Error()
	}
	if len(e.Raw) > 0 && !json.Valid(e.Raw) {
		out.Raw = nil
	}
	return json.Marshal(out)
}

// ToolUse is a tool call made by the model.
type ToolUse struct {
	// ID identifies the call; the matching ToolResult has the same ID.
	ID string `json:"id"`
	// Name is the canonical tool name (one of the ToolName constants,
	// such as ToolNameBash, or the raw name of a tool that has none).
	Name string `json:"name"`
	// RawName is the tool name as the CLI reported it.
	RawName string `json:"raw_name"`
	// Kind is the tool's kind in the Agent Client Protocol vocabulary.
	Kind ToolKind `json:"kind"`
	// Input is the tool input as JSON.
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolResult is the outcome of a tool call.
type ToolResult struct {
	// ID is the ToolUse.ID of the call.
	ID string `json:"id"`
	// Output is the tool's output as text (an error message when IsError).
	Output string `json:"output"`
	// IsError reports that the tool failed or was refused.
	IsError bool `json:"is_error"`
	// ExitCode is the exit code of a shell command, when known.
	ExitCode *int `json:"exit_code,omitempty"`
}

// Retry describes an API retry the CLI is making.
type Retry struct {
	// Attempt is the number of the retry, from 1.
	Attempt int `json:"attempt,omitempty"`
	// MaxRetries is how many retries the CLI makes at most, when known.
	MaxRetries int `json:"max_retries,omitempty"`
	// Delay is how long the CLI waits before this retry, when known.
	Delay time.Duration `json:"delay_ns,omitempty"`
	// Status is the HTTP status of the failed call, when known.
	Status int `json:"status,omitempty"`
	// Message is the error that made the CLI retry.
	Message string `json:"message,omitempty"`
}
