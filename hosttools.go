package agentcli

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// HostServerName is the name of agentcli's own MCP server, which serves
// Request.Tools (and, where a CLI has no way of its own to ask the user,
// the question tool): the model sees a host tool "now" as
// "mcp__agentcli__now" (claude), "now" in the namespace "mcp__agentcli"
// (codex), "mcp_agentcli_now" (gemini) or "agentcli_now" (opencode). A
// request with host tools or OnQuestion cannot have an MCP server of its
// own under this name, or under a name that starts with "agentcli_".
const HostServerName = "agentcli"

// Tool is a tool written in the host program, offered to the agent for
// one run or live session (Request.Tools). The CLI calls it through an
// MCP server agentcli runs in this process for the run (loopback HTTP,
// with a secret of the run's own), which is gone when the run ends or the
// session closes.
//
// NewTool builds one from a typed function, deriving the input schema
// from the input type. A Tool built by hand gives InputSchema itself and a
// Handler that takes the raw input.
//
// Events report a call of a host tool as EventToolUse with Tool.Name the
// tool's Name and Tool.Kind ToolOther (Tool.RawName is the name the CLI
// gave it), and its outcome as EventToolResult.
type Tool struct {
	// Name identifies the tool: 1 to 64 ASCII letters, digits, "_" and
	// "-", starting with a letter, unique within the request (ignoring
	// case).
	Name string
	// Description tells the model what the tool does and when to use
	// it.
	Description string
	// InputSchema is the JSON Schema of the tool's input, an object
	// schema ({"type":"object",...}). Nil means an object with any
	// properties.
	InputSchema json.RawMessage
	// Handler runs a call of the tool with the input the model gave (a
	// JSON object) and returns the text the model receives. An error
	// reaches the model as the tool's error, its message in the text
	// ("error: " and the message), and so does a panic (the message then
	// says only that the tool failed). ctx is cancelled when the call is
	// no longer wanted: the turn ended (interrupted, cancelled, timed
	// out), the run ended or the session closed, or the CLI gave up on
	// the call. Calls may run concurrently.
	//
	// A call may run as long as the run does (a build, a test suite):
	// agentcli raises each CLI's own time limit for one MCP tool call
	// (60 s to 10 minutes by default) for its server, and keeps a long
	// call's response alive (SSE comments, and progress notifications
	// where the CLI asks for them) so that the CLI's HTTP client does not
	// give up on a silent response. The exception: a live session of
	// gemini (its MCP servers travel in ACP's session/new, which has no
	// such setting) gives up on a call after gemini's default of 10
	// minutes, and the model is told the call failed.
	Handler func(ctx context.Context, input json.RawMessage) (string, error)
	// Approved approves the tool in advance: it runs without asking, in
	// every permission mode. Otherwise a call is decided like any tool
	// call that would need approval: it runs under PermissionBypass, is
	// asked about (Request.OnPermission, with the tool's Name in the
	// request) under PermissionAsk, and is refused, with the refusal
	// told to the model, under PermissionDeny and PermissionPlan.
	Approved bool

	// err is the error of a NewTool whose input type has no JSON schema;
	// the run fails with it.
	err error
}

// NewTool returns a host tool named name whose handler is fn. The input
// schema is derived from In, which must be a struct (or a map with string
// keys): its exported fields are the input's properties, named as
// encoding/json names them; a field without "omitempty" or "omitzero" in
// its json tag is required; a `jsonschema:"..."` tag is the property's
// description. The model's input is checked against the schema and
// decoded into an In before fn runs: input that does not fit is the tool's
// error, and fn is not called. A type that has no JSON schema (a channel,
// a function) makes a run with the tool fail with an *RequestError.
func NewTool[In any](name, description string, fn func(ctx context.Context, in In) (string, error)) Tool {
	t := Tool{Name: name, Description: description}
	schema, err := jsonschema.For[In](nil)
	if err == nil && schema.Type != "object" {
		err = fmt.Errorf("the input type %v is not a struct or a map with string keys (its schema's type is %q, not \"object\")", reflect.TypeFor[In](), schema.Type)
	}
	var resolved *jsonschema.Resolved
	if err == nil {
		resolved, err = schema.Resolve(nil)
	}
	if err == nil {
		t.InputSchema, err = json.Marshal(schema)
	}
	if err != nil {
		t.err = fmt.Errorf("no JSON schema for %v: %w", reflect.TypeFor[In](), err)
		return t
	}
	if fn == nil {
		return t // the request check reports the missing handler
	}
	t.Handler = func(ctx context.Context, input json.RawMessage) (string, error) {
		var v any
		if err := json.Unmarshal(input, &v); err != nil {
			return "", fmt.Errorf("the input is not JSON: %w", err)
		}
		if err := resolved.Validate(v); err != nil {
			return "", fmt.Errorf("invalid input: %w", err)
		}
		var in In
		if err := json.Unmarshal(input, &in); err != nil {
			return "", fmt.Errorf("invalid input: %w", err)
		}
		return fn(ctx, in)
	}
	return t
}

// Err reports why the tool cannot be used (an input type of NewTool that
// has no JSON schema), or nil.
func (t Tool) Err() error { return t.err }

// QuestionFunc answers the agent's questions to the user (see
// Request.OnQuestion). ctx ends at the question's deadline
// (Request.PermissionTimeout) or when the turn ends; the model is then
// told the user did not answer. A nil Answer or an error is told to the
// model the same way ("the user did not answer"; the error's text is not
// passed on). It is called from a goroutine of the backend, one call at a
// time per run or session.
type QuestionFunc func(ctx context.Context, q *Question) (*Answer, error)

// Question is the agent asking the user one or more questions at once,
// each with a short header, the question's text and, usually, options to
// choose from. Which CLI asked how is the backend's business: the same
// Question comes from every CLI (see Capabilities.Questions).
type Question struct {
	// SessionID is the CLI session the question belongs to, when known.
	SessionID string `json:"session_id,omitempty"`
	// ID identifies the tool call that asks, when known.
	ID string `json:"id,omitempty"`
	// Items are the questions, at least one.
	Items []QuestionItem `json:"items"`
}

// QuestionItem is one question.
type QuestionItem struct {
	// ID is the CLI's id of the question, when it has one.
	ID string `json:"id,omitempty"`
	// Header is a short label for the question ("Color"), when given.
	Header string `json:"header,omitempty"`
	// Text is the question itself.
	Text string `json:"text"`
	// Options are the answers the model suggests; the user may also
	// answer in words of their own.
	Options []QuestionOption `json:"options,omitempty"`
	// MultiSelect reports that several options may be chosen.
	MultiSelect bool `json:"multi_select,omitempty"`
}

// QuestionOption is one suggested answer.
type QuestionOption struct {
	// Label is the answer as the user would pick it.
	Label string `json:"label"`
	// Description explains the option, when given.
	Description string `json:"description,omitempty"`
}

// Answer answers a Question.
type Answer struct {
	// Answers holds the answer to each of Question.Items, in order: the
	// labels of the options chosen (several for a MultiSelect item), or
	// text of the user's own. An item without an answer (Answers shorter
	// than Items, or an empty entry) is reported to the model as not
	// answered.
	Answers [][]string `json:"answers"`
}

// NotAvailableMessage is what the model is told when a question cannot be
// put to anyone: the request has no OnQuestion.
const NotAvailableMessage = "The user is not available to answer questions; decide on your own and say which assumptions you made."

// NoAnswerMessage is what the model is told when OnQuestion gave no
// answer: it failed, returned nil, or did not answer in time.
const NoAnswerMessage = "The user did not answer; decide on your own and say which assumptions you made."
