package cluster

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentcli/agentcli"
)

// The wire protocol. Every message on a core NATS subject is a frame: a
// kind byte, the frame's sequence number as a uvarint (0 for frames
// outside the ordered stream), then the payload.
//
// Worker to caller, on the caller's subject of a stream:
const (
	kindAccept    = 'A' // handshake (a request): the worker took the job; reply kindGo or kindNo
	kindHeartbeat = 'H' // unsequenced: uvarint last sequence sent
	kindChunk     = 'c' // a piece of the next frame's payload (a large message)
	kindEvent     = 'E' // a wireEvent
	kindWireLog   = 'W' // one record of Request.WireLog
	kindPermit    = 'P' // a permission request (wirePermit)
	kindCall      = 'B' // a call of a host tool, a question or a hook (wireCall)
	kindPermitEnd = 'Q' // uvarint id: the permission request or call no longer waits
	kindEnd       = 'R' // the stream's end (wireEnd); the last frame
)

// Caller to worker, on the worker's control subject of a stream or of a
// live session.
const (
	kindGo        = 'G' // reply to kindAccept: run it
	kindNo        = 'N' // reply to kindAccept: drop it, nobody waits
	kindAck       = 'K' // uvarint received, uvarint consumed, flags byte
	kindCancel    = 'X' // a request; one byte: cancelCtx, cancelBreak or cancelTimeout
	kindDecision  = 'D' // a request: a wireDecision
	kindReturn    = 'Y' // a request: a wireReturn
	kindTurn      = 'U' // a request to a session: a wireTurn
	kindInterrupt = 'I' // a request to a session: uvarint timeout in ms
	kindClose     = 'Z' // a request to a session
	replyOK       = 'o' // reply: done (payload optional)
	replyErr      = 'e' // reply: a wireError
)

// Reasons of a kindCancel.
const (
	cancelCtx     = 1 // the caller's context ended
	cancelBreak   = 2 // the caller broke out of its loop
	cancelTimeout = 3 // the caller's backstop for Request.Timeout fired
)

// ackGap flags an ack sent because a frame was missing: the worker
// retransmits at once.
const ackGap = 1

// The versions of the job format. Version 2 carries host tools,
// OnQuestion and hooks (wireRequest's Tools, OnQuestion and Hooks, and
// kindCall), ForkSession and NewSessionID: a job that has any is sent as
// version 2, which a worker of version 1 refuses rather than running it
// without them; any other job is sent as version 1, which every worker
// takes.
const (
	protocolVersion   = 2
	protocolVersionV1 = 1
)

// jobVersion returns the version a job of r is sent as.
func jobVersion(r *wireRequest) int {
	if len(r.Tools) > 0 || r.OnQuestion || r.Hooks != nil || r.ForkSession || r.NewSessionID != "" {
		return protocolVersion
	}
	return protocolVersionV1
}

// appendFrame appends the frame header to dst.
func appendFrame(dst []byte, kind byte, seq uint64) []byte {
	dst = append(dst, kind)
	return binary.AppendUvarint(dst, seq)
}

// newFrame returns a whole frame.
func newFrame(kind byte, seq uint64, payload []byte) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(payload))
	b = appendFrame(b, kind, seq)
	return append(b, payload...)
}

var errBadFrame = errors.New("malformed frame")

// parseFrame splits a frame.
func parseFrame(b []byte) (kind byte, seq uint64, payload []byte, err error) {
	if len(b) < 2 {
		return 0, 0, nil, errBadFrame
	}
	seq, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return 0, 0, nil, errBadFrame
	}
	return b[0], seq, b[1+n:], nil
}

// wireRequest is an agentcli.Request as it crosses the wire. The
// callbacks and the writer become flags: the worker calls back over the
// wire and the caller runs them (see Backend).
type wireRequest struct {
	Prompt            string               `json:"prompt,omitempty"`
	SystemPrompt      string               `json:"system_prompt,omitempty"`
	SessionID         string               `json:"session_id,omitempty"`
	ForkSession       bool                 `json:"fork_session,omitempty"`
	NewSessionID      string               `json:"new_session_id,omitempty"`
	Model             string               `json:"model,omitempty"`
	MaxTurns          int                  `json:"max_turns,omitempty"`
	AllowedTools      []string             `json:"allowed_tools,omitempty"`
	DisallowedTools   []string             `json:"disallowed_tools,omitempty"`
	Dir               string               `json:"dir,omitempty"`
	Env               []string             `json:"env,omitempty"`
	ReplaceEnv        bool                 `json:"replace_env,omitempty"`
	Timeout           time.Duration        `json:"timeout,omitempty"`
	OnText            bool                 `json:"on_text,omitempty"`
	ExtraArgs         []string             `json:"extra_args,omitempty"`
	WireLog           bool                 `json:"wire_log,omitempty"`
	DropRaw           bool                 `json:"drop_raw,omitempty"`
	MaxRawBytes       int                  `json:"max_raw_bytes,omitempty"`
	Permission        string               `json:"permission,omitempty"`
	OnPermission      bool                 `json:"on_permission,omitempty"`
	PermissionTimeout time.Duration        `json:"permission_timeout,omitempty"`
	MCPServers        []agentcli.MCPServer `json:"mcp_servers,omitempty"`
	Tools             []wireTool           `json:"tools,omitempty"`
	OnQuestion        bool                 `json:"on_question,omitempty"`
	Hooks             *wireHooks           `json:"hooks,omitempty"`
	OutputSchema      []byte               `json:"output_schema,omitempty"`
	Effort            string               `json:"effort,omitempty"`
	FallbackModel     string               `json:"fallback_model,omitempty"`
	MaxBudgetUSD      float64              `json:"max_budget_usd,omitempty"`
	Attachments       []wireAttachment     `json:"attachments,omitempty"`
}

// wireAttachment is an agentcli.Attachment as it crosses the wire: its
// content only. A Path names a file on the caller's machine, which the
// caller reads before anything is sent (see Backend); the wire has no
// field for one, so a path in a message is dropped, and the attachment
// arrives without content, which the worker's backend refuses.
type wireAttachment struct {
	Name      string `json:"name,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data"`
}

// toWireAttachments returns the wire form of atts, their paths left out.
func toWireAttachments(atts []agentcli.Attachment) []wireAttachment {
	if len(atts) == 0 {
		return nil
	}
	out := make([]wireAttachment, len(atts))
	for i, a := range atts {
		out[i] = wireAttachment{Name: a.Name, MediaType: a.MediaType, Data: a.Data}
	}
	return out
}

// fromWireAttachments returns the attachments of a message, each with
// Data only: never a Path.
func fromWireAttachments(w []wireAttachment) []agentcli.Attachment {
	if len(w) == 0 {
		return nil
	}
	out := make([]agentcli.Attachment, len(w))
	for i, a := range w {
		out[i] = agentcli.Attachment{Name: a.Name, MediaType: a.MediaType, Data: a.Data}
	}
	return out
}

// toWire returns the wire form of req.
func toWire(req *agentcli.Request) *wireRequest {
	return &wireRequest{
		Prompt:            req.Prompt,
		SystemPrompt:      req.SystemPrompt,
		SessionID:         req.SessionID,
		ForkSession:       req.ForkSession,
		NewSessionID:      req.NewSessionID,
		Model:             req.Model,
		MaxTurns:          req.MaxTurns,
		AllowedTools:      req.AllowedTools,
		DisallowedTools:   req.DisallowedTools,
		Dir:               req.Dir,
		Env:               req.Env,
		ReplaceEnv:        req.ReplaceEnv,
		Timeout:           req.Timeout,
		OnText:            req.OnText != nil,
		ExtraArgs:         req.ExtraArgs,
		WireLog:           req.WireLog != nil,
		DropRaw:           req.DropRaw,
		MaxRawBytes:       req.MaxRawBytes,
		Permission:        string(req.Permission),
		OnPermission:      req.OnPermission != nil,
		PermissionTimeout: req.PermissionTimeout,
		MCPServers:        req.MCPServers,
		Tools:             toWireTools(req.Tools),
		OnQuestion:        req.OnQuestion != nil,
		Hooks:             toWireHooks(req.Hooks),
		OutputSchema:      req.OutputSchema,
		Effort:            string(req.Effort),
		FallbackModel:     req.FallbackModel,
		MaxBudgetUSD:      req.MaxBudgetUSD,
		Attachments:       toWireAttachments(req.Attachments),
	}
}

// wireTool is an agentcli.Tool as it crosses the wire: its declaration.
// Its Handler stays with the caller, which runs each call (kindCall).
type wireTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema []byte `json:"input_schema,omitempty"`
	Approved    bool   `json:"approved,omitempty"`
}

func toWireTools(ts []agentcli.Tool) []wireTool {
	if len(ts) == 0 {
		return nil
	}
	out := make([]wireTool, len(ts))
	for i, t := range ts {
		out[i] = wireTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Approved: t.Approved}
	}
	return out
}

// wireHooks says which of Request.Hooks are set.
type wireHooks struct {
	PreToolUse       bool `json:"pre,omitempty"`
	PostToolUse      bool `json:"post,omitempty"`
	UserPromptSubmit bool `json:"prompt,omitempty"`
	Stop             bool `json:"stop,omitempty"`
}

func toWireHooks(h *agentcli.Hooks) *wireHooks {
	if h == nil {
		return nil
	}
	return &wireHooks{PreToolUse: h.PreToolUse != nil, PostToolUse: h.PostToolUse != nil,
		UserPromptSubmit: h.UserPromptSubmit != nil, Stop: h.Stop != nil}
}

// The kinds of a wireCall.
const (
	callTool             = "tool"
	callQuestion         = "question"
	callPreToolUse       = "pre_tool_use"
	callPostToolUse      = "post_tool_use"
	callUserPromptSubmit = "user_prompt_submit"
	callStop             = "stop"
)

// wireCall is the payload of kindCall: the worker's backend called the
// stand-in of a host tool's Handler, of OnQuestion or of a hook, whose
// caller runs the real one and returns what it gave (kindReturn).
type wireCall struct {
	ID   uint64 `json:"id"` // shared with the permission requests' ids
	Kind string `json:"kind"`
	// Tool names the host tool of a callTool.
	Tool string `json:"tool,omitempty"`
	// Body is the call's input: a host tool's input, a
	// *agentcli.Question, or the hook's input.
	Body json.RawMessage `json:"body,omitempty"`
	// InputB is the tool input of a hook's input when it is not JSON
	// (the body then carries none).
	InputB []byte `json:"input_b,omitempty"`
	// Timeout is what is left until the call's deadline; 0 for none but
	// the run's (a host tool's call).
	Timeout time.Duration `json:"timeout,omitempty"`
}

// wireReturn is the payload of kindReturn.
type wireReturn struct {
	ID uint64 `json:"id"`
	// Body is what the caller's function returned: a wireToolReturn, an
	// *agentcli.Answer (null for none), or the hook's output.
	Body json.RawMessage `json:"body,omitempty"`
	// InputB is a PreToolUseOutput's Input when it is not JSON.
	InputB []byte `json:"input_b,omitempty"`
	// Failed reports that the function failed (it panicked, or
	// OnQuestion returned an error): the worker answers as a local
	// backend answers a failed call.
	Failed bool `json:"failed,omitempty"`
	// Blob names the object (in the blobs store) that holds this
	// wireReturn when it was too large for a message.
	Blob string `json:"blob,omitempty"`
}

// wireToolReturn is the body of a host tool call's wireReturn.
type wireToolReturn struct {
	Text string `json:"text,omitempty"`
	Err  string `json:"err,omitempty"`
	// IsErr reports that the handler returned an error (Err its text).
	IsErr bool `json:"is_err,omitempty"`
}

// request returns the agentcli.Request w describes, without its callbacks
// and writer (the worker installs its own).
func (w *wireRequest) request() agentcli.Request {
	r := agentcli.Request{
		Prompt:            w.Prompt,
		SystemPrompt:      w.SystemPrompt,
		SessionID:         w.SessionID,
		ForkSession:       w.ForkSession,
		NewSessionID:      w.NewSessionID,
		Model:             w.Model,
		MaxTurns:          w.MaxTurns,
		AllowedTools:      w.AllowedTools,
		DisallowedTools:   w.DisallowedTools,
		Dir:               w.Dir,
		Env:               w.Env,
		ReplaceEnv:        w.ReplaceEnv,
		Timeout:           w.Timeout,
		ExtraArgs:         w.ExtraArgs,
		DropRaw:           w.DropRaw,
		MaxRawBytes:       w.MaxRawBytes,
		Permission:        agentcli.PermissionMode(w.Permission),
		PermissionTimeout: w.PermissionTimeout,
		MCPServers:        w.MCPServers,
		Effort:            agentcli.Effort(w.Effort),
		FallbackModel:     w.FallbackModel,
		MaxBudgetUSD:      w.MaxBudgetUSD,
		Attachments:       fromWireAttachments(w.Attachments),
	}
	if w.OutputSchema != nil {
		r.OutputSchema = json.RawMessage(w.OutputSchema)
	}
	return r
}

// Bounds of a request or a turn stored in the blobs store (see job.Blob
// and wireTurn.Blob): maxBlobBytes is the attachments of one prompt at
// their limit (agentcli.MaxAttachmentBytes, base64 in JSON) and
// maxRequestBytes for the rest (the prompt, the environment, a schema).
// A caller refuses a larger one before anything is queued, and a worker
// reads no more.
const (
	maxRequestBytes = 16 << 20
	maxBlobBytes    = (agentcli.MaxAttachmentBytes+2)/3*4 + maxRequestBytes
)

// job is the message on the work queue.
type job struct {
	V         int           `json:"v"`
	ID        string        `json:"id"`
	Kind      string        `json:"kind"` // jobRun or jobSession
	Heartbeat time.Duration `json:"hb"`   // the caller's heartbeat interval
	Window    window        `json:"window"`
	Req       *wireRequest  `json:"req,omitempty"`
	// Blob names the object (in the blobs store) that holds Req when it
	// was too large for a message: the job's ID.
	Blob string `json:"blob,omitempty"`
}

const (
	jobRun     = "run"
	jobSession = "session"
)

// wireAccept is the payload of kindAccept.
type wireAccept struct {
	Worker    string        `json:"worker"`
	Heartbeat time.Duration `json:"hb"`
}

// wireTurn is the payload of kindTurn.
type wireTurn struct {
	Stream      string           `json:"stream"`
	Prompt      string           `json:"prompt"`
	Attachments []wireAttachment `json:"attachments,omitempty"`
	Heartbeat   time.Duration    `json:"hb"`
	Window      window           `json:"window"`
	// Blob names the object (in the blobs store, named by Stream) that
	// holds the turn's Prompt and Attachments, as a wireTurn, when they
	// were too large for a message.
	Blob string `json:"blob,omitempty"`
}

// window is the flow-control window a caller grants (Options.Window).
type window struct {
	Frames int `json:"frames"`
	Bytes  int `json:"bytes"`
}

// wireEnd is the payload of kindEnd.
type wireEnd struct {
	Err *wireError `json:"err,omitempty"`
	// Session describes the live session a session job started.
	Session *wireSession `json:"session,omitempty"`
	// SessionDead reports that the live session whose turn this was has
	// ended (its CLI died); Err says why.
	SessionDead bool `json:"session_dead,omitempty"`
	// SessionID is the session's id after the turn, when known.
	SessionID string `json:"session_id,omitempty"`
	// SaveErr is a *SessionNotSavedError: the session could not be
	// saved to the object store after the run.
	SaveErr *wireError `json:"save_err,omitempty"`
}

// wireSession describes a live session hosted by a worker.
type wireSession struct {
	ID string `json:"id"`
	// Subject is the session's control subject on the worker.
	Subject string `json:"subject"`
	Worker  string `json:"worker"`
}

// wirePermit is the payload of kindPermit.
type wirePermit struct {
	ID      uint64                     `json:"id"`
	Req     agentcli.PermissionRequest `json:"req"`
	InputB  []byte                     `json:"input_b,omitempty"` // Tool.Input when it is not JSON
	Timeout time.Duration              `json:"timeout"`           // left until the request's deadline
}

// wireDecision is the payload of kindDecision.
type wireDecision struct {
	ID       uint64                      `json:"id"`
	Decision agentcli.PermissionDecision `json:"decision"`
	InputB   []byte                      `json:"input_b,omitempty"`
}

// plainResult is agentcli.Result without methods.
type plainResult agentcli.Result

// wireResult is an agentcli.Result as it crosses the wire: Raw and
// StructuredOutput that are not valid JSON travel as bytes.
type wireResult struct {
	plainResult
	RawB        []byte `json:"raw_b,omitempty"`
	StructuredB []byte `json:"structured_b,omitempty"`
}

func toWireResult(r *agentcli.Result) *wireResult {
	w := &wireResult{plainResult: plainResult(*r)}
	if len(w.Raw) > 0 && !json.Valid(w.Raw) {
		w.RawB, w.Raw = w.Raw, nil
	}
	if len(w.StructuredOutput) > 0 && !json.Valid(w.StructuredOutput) {
		w.StructuredB, w.StructuredOutput = w.StructuredOutput, nil
	}
	return w
}

func (w *wireResult) result() *agentcli.Result {
	r := agentcli.Result(w.plainResult)
	if w.RawB != nil {
		r.Raw = w.RawB
	}
	if w.StructuredB != nil {
		r.StructuredOutput = w.StructuredB
	}
	return &r
}

// plainEvent is agentcli.Event without its MarshalJSON.
type plainEvent agentcli.Event

// wireEvent is an agentcli.Event as it crosses the wire, with the
// OnText calls the worker saw just before it.
type wireEvent struct {
	plainEvent
	Result *wireResult `json:"result,omitempty"`
	Err    *wireError  `json:"err,omitempty"`
	RawB   []byte      `json:"raw_b,omitempty"`
	InputB []byte      `json:"input_b,omitempty"`
	// Texts are the pieces OnText received since the previous event;
	// SameText stands for one piece equal to the event's Text.
	Texts    []string `json:"ot,omitempty"`
	SameText bool     `json:"ott,omitempty"`
}

// encodeEvent returns the payload of a kindEvent frame.
func encodeEvent(ev agentcli.Event, texts []string) ([]byte, error) {
	w := wireEvent{plainEvent: plainEvent(ev)}
	w.plainEvent.Result = nil
	if ev.Result != nil {
		w.Result = toWireResult(ev.Result)
	}
	w.Err = encodeError(ev.Err)
	if len(texts) == 1 && texts[0] == ev.Text {
		w.SameText = true
	} else {
		w.Texts = texts
	}
	b, err := json.Marshal(&w)
	if err == nil {
		return b, nil
	}
	// A Raw or a tool input that is not JSON: send those as bytes.
	if len(w.Raw) > 0 && !json.Valid(w.Raw) {
		w.RawB, w.Raw = w.Raw, nil
	}
	if w.Tool != nil && len(w.Tool.Input) > 0 && !json.Valid(w.Tool.Input) {
		t := *w.Tool
		w.InputB, t.Input = t.Input, nil
		w.Tool = &t
	}
	return json.Marshal(&w)
}

// decodeEvent decodes the payload of a kindEvent frame.
func decodeEvent(b []byte) (agentcli.Event, *wireEvent, error) {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return agentcli.Event{}, nil, err
	}
	ev := agentcli.Event(w.plainEvent)
	if w.Result != nil {
		ev.Result = w.Result.result()
	}
	ev.Err = decodeError(w.Err)
	if w.RawB != nil {
		ev.Raw = w.RawB
	}
	if w.InputB != nil && ev.Tool != nil {
		ev.Tool.Input = w.InputB
	}
	return ev, &w, nil
}

// onTexts returns the OnText pieces that precede ev.
func (w *wireEvent) onTexts(ev agentcli.Event) []string {
	if w.SameText {
		return []string{ev.Text}
	}
	return w.Texts
}

// marshalPermit encodes a permission request, tool input that is not
// JSON as bytes.
func marshalPermit(p wirePermit) ([]byte, error) {
	if len(p.Req.Tool.Input) > 0 && !json.Valid(p.Req.Tool.Input) {
		p.InputB, p.Req.Tool.Input = p.Req.Tool.Input, nil
	}
	return json.Marshal(p)
}

func unmarshalPermit(b []byte) (wirePermit, error) {
	var p wirePermit
	if err := json.Unmarshal(b, &p); err != nil {
		return p, err
	}
	if p.InputB != nil {
		p.Req.Tool.Input = p.InputB
	}
	return p, nil
}

func marshalDecision(d wireDecision) ([]byte, error) {
	if len(d.Decision.Input) > 0 && !json.Valid(d.Decision.Input) {
		d.InputB, d.Decision.Input = d.Decision.Input, nil
	}
	return json.Marshal(d)
}

func unmarshalDecision(b []byte) (wireDecision, error) {
	var d wireDecision
	if err := json.Unmarshal(b, &d); err != nil {
		return d, err
	}
	if d.InputB != nil {
		d.Decision.Input = d.InputB
	}
	return d, nil
}

// replyError returns the reply frame of a failed request.
func replyError(err error) []byte {
	b, _ := json.Marshal(encodeError(err))
	return newFrame(replyErr, 0, b)
}

// parseReply returns the payload of a reply, or the error it carries.
func parseReply(b []byte) ([]byte, error) {
	kind, _, payload, err := parseFrame(b)
	if err != nil {
		return nil, err
	}
	switch kind {
	case replyOK:
		return payload, nil
	case replyErr:
		var w wireError
		if err := json.Unmarshal(payload, &w); err != nil {
			return nil, err
		}
		return nil, decodeError(&w)
	}
	return nil, errBadFrame
}
