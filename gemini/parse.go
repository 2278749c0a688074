package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/runner"
)

// Wire structs: the subset of gemini's output (packages/core/src/output/
// types.ts) that agentcli reads. Unknown fields are ignored, unknown event
// types are kept raw, and nothing depends on key order.

// wireEvent is one stream-json line.
type wireEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`

	// message
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`

	// tool_use
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`

	// tool_result
	Status string     `json:"status"` // also result
	Output *string    `json:"output"`
	Error  *wireError `json:"error"` // also result

	// error
	Severity string `json:"severity"`
	Message  string `json:"message"`

	// result
	Stats *wireStreamStats `json:"stats"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Code is a number (an exit code or HTTP status) or a string (a tool
	// error type); kept raw.
	Code json.RawMessage `json:"code"`
}

type wireStreamStats struct {
	TotalTokens  int64 `json:"total_tokens"`
	InputTokens  int64 `json:"input_tokens"` // prompt tokens, cached included
	OutputTokens int64 `json:"output_tokens"`
	Cached       int64 `json:"cached"`
	// Input is the prompt tokens not served from cache (since 0.21);
	// nil when absent.
	Input     *int64                     `json:"input"`
	ToolCalls int                        `json:"tool_calls"`
	Models    map[string]json.RawMessage `json:"models"`
}

// wireJSON is the single `-o json` document, on stdout on success and on
// stderr (only session_id and error) on a fatal error.
type wireJSON struct {
	SessionID string     `json:"session_id"`
	Response  *string    `json:"response"`
	Stats     *wireStats `json:"stats"`
	Error     *wireError `json:"error"`
	Warnings  []string   `json:"warnings"`
}

type wireStats struct {
	Models map[string]wireModelStats `json:"models"`
}

type wireModelStats struct {
	Tokens struct {
		Input      *int64 `json:"input"`  // prompt − cached
		Prompt     int64  `json:"prompt"` // cached included
		Candidates int64  `json:"candidates"`
		Cached     int64  `json:"cached"`
		Thoughts   int64  `json:"thoughts"`
	} `json:"tokens"`
	Roles map[string]json.RawMessage `json:"roles"`
}

// Exit statuses of gemini 0.61.0 (packages/core/src/utils/exitCodes.ts).
const (
	exitAuth      = 41 // FatalAuthenticationError
	exitInput     = 42 // FatalInputError: no input, bad @ include, session not found
	exitTurnLimit = 53 // FatalTurnLimitedError (model.maxSessionTurns)
	exitUntrusted = 55 // FatalUntrustedWorkspaceError
)

// parser turns gemini output — stream-json lines or the pretty-printed json
// document, which arrives line by line — into events.
type parser struct {
	format format

	sessionID string
	model     string

	// stream-json
	block     strings.Builder // text deltas not yet reported as an EventText
	turnText  strings.Builder // assistant text since the last tool event
	errMsg    string          // last error-severity `error` event
	result    *wireEvent
	resultRaw json.RawMessage

	// json
	doc     bytes.Buffer // the document being accumulated
	inDoc   bool
	jdoc    *wireJSON
	jdocRaw json.RawMessage
}

func newParser(f format) *parser { return &parser{format: f} }

// Line implements runner.Parser.
func (p *parser) Line(line []byte) []agentcli.Event {
	if p.format == formatJSON {
		return p.jsonLine(line)
	}
	return p.streamLine(line)
}

func (p *parser) streamLine(line []byte) []agentcli.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var w wireEvent
	if n := runner.DecodeObject(Name, line, &w); n != nil {
		return n
	}
	raw := json.RawMessage(line)
	if w.SessionID != "" && w.Type == "init" {
		p.sessionID = w.SessionID
	}
	base := agentcli.Event{SessionID: p.sessionID, Raw: raw}
	switch w.Type {
	case "init":
		// Starts the run; anything before it is not part of the answer.
		p.model = w.Model
		p.block.Reset()
		p.turnText.Reset()
		p.errMsg = ""
		ev := base
		ev.Kind, ev.SessionID, ev.Model = agentcli.EventInit, w.SessionID, w.Model
		return []agentcli.Event{ev}
	case "message":
		switch w.Role {
		case "user":
			return nil // the prompt, echoed once
		case "assistant":
			ev := base
			ev.Text = w.Content
			p.turnText.WriteString(w.Content)
			if w.Delta {
				ev.Kind = agentcli.EventTextDelta
				p.block.WriteString(w.Content)
				return []agentcli.Event{ev}
			}
			// gemini 0.61.0 marks every assistant message as a delta;
			// one without the mark is taken as a whole block.
			evs := p.endBlock()
			ev.Kind = agentcli.EventText
			return append(evs, ev)
		}
	case "tool_use":
		evs := p.endBlock()
		p.turnText.Reset()
		ev := base
		ev.Kind = agentcli.EventToolUse
		ev.Tool = tools.Use(w.ToolID, w.ToolName, w.Parameters)
		return append(evs, ev)
	case "tool_result":
		evs := p.endBlock()
		p.turnText.Reset()
		ev := base
		ev.Kind = agentcli.EventToolResult
		tr := &agentcli.ToolResult{ID: w.ToolID, IsError: w.Status == "error"}
		if w.Output != nil {
			tr.Output = *w.Output
		}
		if tr.Output == "" && w.Error != nil {
			tr.Output = w.Error.Message
		}
		ev.ToolResult = tr
		return append(evs, ev)
	case "error":
		// Non-fatal: loop detected, max session turns, an empty or
		// blocked model stream, agent execution blocked. The result
		// that follows says whether the run failed.
		if w.Severity == "error" {
			p.errMsg = w.Message
		}
		ev := base
		ev.Kind = agentcli.EventNotice
		ev.Text = w.Message
		if w.Severity != "" {
			ev.Text = w.Severity + ": " + w.Message
		}
		return []agentcli.Event{ev}
	case "result":
		evs := p.endBlock()
		p.result = &w
		p.resultRaw = raw
		if w.Stats != nil {
			ev := base
			ev.Kind = agentcli.EventUsage
			u := streamUsage(w.Stats)
			ev.Usage = &u
			evs = append(evs, ev)
		}
		return evs
	}
	ev := base
	ev.Kind = agentcli.EventUnknown
	return []agentcli.Event{ev}
}

// endBlock closes the current run of assistant text deltas, which is then
// reported whole as an EventText.
func (p *parser) endBlock() []agentcli.Event {
	if p.block.Len() == 0 {
		return nil
	}
	text := p.block.String()
	p.block.Reset()
	return []agentcli.Event{{Kind: agentcli.EventText, SessionID: p.sessionID, Text: text}}
}

// jsonLine accumulates the json document. JSON.stringify(…, null, 2) puts
// the top-level closing brace alone on a line, and strings cannot hold raw
// newlines, so the document ends at a line that is just "}". A one-line
// (compact) document is accepted too. Lines outside the document are noise
// and reported as notices.
func (p *parser) jsonLine(line []byte) []agentcli.Event {
	if !p.inDoc {
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			return nil
		}
		if t[0] != '{' || p.jdoc != nil {
			return []agentcli.Event{runner.Notice(Name, t, errors.New("not part of the json document"))}
		}
		p.inDoc = true
		p.doc.Reset()
	}
	p.doc.Write(line)
	p.doc.WriteByte('\n')
	// Only the top-level closing brace is unindented; nested ones are not
	// worth a decoding attempt (that would make a large document
	// quadratic).
	end := bytes.Equal(bytes.TrimRight(line, " \t\r"), []byte("}"))
	if !end && !(p.doc.Len() == len(line)+1 && json.Valid(line)) {
		return nil
	}
	var w wireJSON
	if err := json.Unmarshal(p.doc.Bytes(), &w); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil // not complete yet (or broken); End decides
		}
	}
	p.inDoc = false
	p.jdoc = &w
	p.jdocRaw = json.RawMessage(bytes.TrimSpace(p.doc.Bytes()))
	p.doc.Reset()
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	var evs []agentcli.Event
	for _, warn := range w.Warnings {
		evs = append(evs, agentcli.Event{Kind: agentcli.EventNotice, SessionID: p.sessionID, Text: warn})
	}
	if w.Response != nil && *w.Response != "" {
		evs = append(evs, agentcli.Event{Kind: agentcli.EventText, SessionID: p.sessionID, Text: *w.Response})
	}
	if w.Stats != nil {
		u := jsonUsage(w.Stats)
		evs = append(evs, agentcli.Event{Kind: agentcli.EventUsage, SessionID: p.sessionID, Usage: &u})
	}
	if len(evs) > 0 {
		evs[len(evs)-1].Raw = p.jdocRaw
	}
	return evs
}

// End implements runner.Parser.
func (p *parser) End(exit runner.Exit) (*agentcli.Result, error) {
	if p.format == formatJSON {
		return p.endJSON(exit)
	}
	return p.endStream(exit)
}

func (p *parser) endStream(exit runner.Exit) (*agentcli.Result, error) {
	w := p.result
	if w == nil {
		return p.noResult(exit)
	}
	res := &agentcli.Result{
		SessionID: p.sessionID,
		Model:     p.model,
		Raw:       p.resultRaw,
	}
	if w.Stats != nil {
		res.Usage = streamUsage(w.Stats)
		if len(w.Stats.Models) == 1 {
			for m := range w.Stats.Models {
				res.Model = m
			}
		}
	}
	if w.Status != "error" {
		// The last turn's text, like json's "response".
		res.Text = p.turnText.String()
		if exit.Code == 0 {
			return res, nil
		}
		return p.failed(res, exit, "", "CLI exited with a non-zero status after a successful result", 0)
	}
	// Without an error object the model stream was empty, thinking-only
	// or blocked (json mode calls this INVALID_STREAM); the `error` event
	// before the result has the message.
	subtype, msg, status := "INVALID_STREAM", p.errMsg, 0
	if w.Error != nil {
		subtype = w.Error.Type
		if w.Error.Message != "" {
			msg = w.Error.Message
		}
		status = codeStatus(w.Error.Code)
	}
	return p.failed(res, exit, subtype, msg, status)
}

func (p *parser) endJSON(exit runner.Exit) (*agentcli.Result, error) {
	if p.jdoc == nil && p.inDoc {
		// The last line of the document may have been cut off; try what
		// arrived.
		var w wireJSON
		if json.Unmarshal(p.doc.Bytes(), &w) == nil {
			p.jdoc = &w
			p.jdocRaw = json.RawMessage(bytes.TrimSpace(p.doc.Bytes()))
			if w.SessionID != "" {
				p.sessionID = w.SessionID
			}
		}
	}
	w := p.jdoc
	if w == nil {
		return p.noResult(exit)
	}
	res := &agentcli.Result{SessionID: p.sessionID, Raw: p.jdocRaw}
	if w.Stats != nil {
		res.Usage = jsonUsage(w.Stats)
		res.Model = mainModel(w.Stats)
	}
	if w.Error == nil {
		if w.Response != nil {
			res.Text = *w.Response
		}
		if exit.Code == 0 {
			return res, nil
		}
		return p.failed(res, exit, "", "CLI exited with a non-zero status after a successful result", 0)
	}
	// An empty, thinking-only or blocked model stream: exit 0 with
	// error.type INVALID_STREAM.
	return p.failed(res, exit, w.Error.Type, w.Error.Message, codeStatus(w.Error.Code))
}

// noResult handles a run that printed no terminal result. With -o json a
// fatal error is a JSON document on stderr; otherwise stderr has a message.
func (p *parser) noResult(exit runner.Exit) (*agentcli.Result, error) {
	if w, raw := stderrJSON(exit.Stderr); w != nil {
		sess := w.SessionID
		if sess == "" {
			sess = p.sessionID
		}
		res := &agentcli.Result{SessionID: sess, Model: p.model, Raw: raw}
		return p.failed(res, exit, w.Error.Type, w.Error.Message, codeStatus(w.Error.Code))
	}
	if k := exitKind(exit.Code); k != nil {
		return nil, &agentcli.ExitError{Code: exit.Code, Kind: k}
	}
	return nil, nil
}

// failed builds the *ResultError for a run that ended in error.
func (p *parser) failed(res *agentcli.Result, exit runner.Exit, subtype, msg string, status int) (*agentcli.Result, error) {
	res.IsError = true
	res.Subtype = subtype
	if status == 0 {
		status = messageStatus(msg)
	}
	if status == 0 && subtype != "" {
		status = exitStatus(exit.Code)
	}
	re := &agentcli.ResultError{
		Subtype:   subtype,
		APIStatus: status,
		Message:   msg,
		ExitCode:  exit.Code,
		Result:    res,
	}
	switch {
	case exit.Code == exitTurnLimit || subtype == "FatalTurnLimitedError":
		re.Subtype, re.TerminalReason = "error_max_turns", "max_turns"
	case status != 0:
		re.TerminalReason = "api_error"
	}
	res.Subtype, res.TerminalReason = re.Subtype, re.TerminalReason
	re.Kind = runner.ClassifyStatus(status)
	if re.Kind == nil {
		re.Kind = exitKind(exit.Code)
	}
	return res, re
}

// exitKind maps gemini's exit statuses to error kinds: 41 is an
// authentication failure, and API errors exit with their HTTP status mod 256.
func exitKind(code int) error {
	if code == exitAuth {
		return agentcli.ErrAuth
	}
	return runner.ClassifyStatus(exitStatus(code))
}

// exitStatus recovers the HTTP status from an API error's exit status:
// gemini calls process.exit(status), which the OS truncates to 8 bits, so
// 400–511 arrive as 144–255. Nothing else gemini does exits in that range
// (signals give 129–143 at most for the common ones).
func exitStatus(code int) int {
	if code >= 144 && code <= 255 {
		return code + 256
	}
	return 0
}

// codeStatus returns error.code when it is an HTTP status.
func codeStatus(raw json.RawMessage) int {
	n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || n < 100 || n > 599 {
		return 0
	}
	return n
}

// statusRe finds the status of an API error embedded in a message, e.g.
// `[API Error: {"error":{"code":400,…}}]` or `{"error":{"code":401,…}}`.
var statusRe = regexp.MustCompile(`"code"\s*:\s*([1-5][0-9][0-9])\b`)

func messageStatus(msg string) int {
	if m := statusRe.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// stderrJSON finds the last JSON document with an "error" object in stderr:
// with -o json, gemini prints fatal errors there as
// {"session_id": …, "error": {"type", "message", "code"}}, pretty-printed,
// after whatever else it logged (stack traces, warnings), sometimes twice,
// the second time behind "[ERROR] ".
func stderrJSON(stderr string) (*wireJSON, json.RawMessage) {
	// Try candidate starts from the end, so the last document wins; a
	// bounded number of attempts keeps pathological stderr linear.
	tries := 0
	for i := len(stderr) - 1; i >= 0 && tries < 64; i-- {
		if stderr[i] != '{' || !(i == 0 || stderr[i-1] == '\n' || strings.HasSuffix(stderr[:i], "] ")) {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(stderr[i:]))
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			continue
		}
		var w wireJSON
		if json.Unmarshal(raw, &w) != nil || w.Error == nil || (w.Error.Message == "" && w.Error.Type == "") {
			continue
		}
		return &w, raw
	}
	return nil, nil
}

// streamUsage converts stream-json result stats. InputTokens counts prompt
// tokens not read from cache, like the other backends; gemini's own
// input_tokens includes the cached ones.
// stream-json reports no thought count (its output_tokens is the sum of
// candidates only), so there OutputTokens leaves reasoning out and
// ReasoningTokens is 0; the json format reports both.
func streamUsage(s *wireStreamStats) agentcli.Usage {
	u := agentcli.Usage{OutputTokens: s.OutputTokens, CacheReadTokens: s.Cached}
	if s.Input != nil {
		u.InputTokens = *s.Input
	} else {
		u.InputTokens = max(0, s.InputTokens-s.Cached)
	}
	return u
}

// jsonUsage sums the per-model json stats (the router's utility calls
// included).
func jsonUsage(s *wireStats) agentcli.Usage {
	var u agentcli.Usage
	for _, m := range s.Models {
		t := m.Tokens
		in := max(0, t.Prompt-t.Cached)
		if t.Input != nil {
			in = *t.Input
		}
		// candidates excludes thoughts; agentcli's OutputTokens includes
		// reasoning.
		u = u.Add(agentcli.Usage{
			InputTokens:     in,
			OutputTokens:    t.Candidates + t.Thoughts,
			CacheReadTokens: t.Cached,
			ReasoningTokens: t.Thoughts,
		})
	}
	return u
}

// mainModel returns the model that served the main conversation: the one
// with a "main" role, else the only one.
func mainModel(s *wireStats) string {
	for name, m := range s.Models {
		if _, ok := m.Roles["main"]; ok {
			return name
		}
	}
	if len(s.Models) == 1 {
		for name := range s.Models {
			return name
		}
	}
	return ""
}
