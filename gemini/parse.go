package gemini

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// Wire structs: the subset of gemini's output (packages/core/src/output/
// types.ts) that agentcli reads. Each stream-json line, and the json
// document once it is complete, is read once, in a single pass
// (driver/jsonscan), into them; stderr's error document is read with
// encoding/json (stderrJSON). Unknown fields are ignored, unknown event
// types are kept raw, and nothing depends on key order. A field of an
// unexpected type reads as absent. Strings share the line's memory when
// they hold no escapes (the line is kept as Event.Raw anyway).

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

	// known reports that the document has one of the members above
	// but warnings: an object without any is not gemini's document but
	// a stray one (a debug line, a lone "{" and "}").
	known bool
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

// streamParser is the state of one run's parsing of stream-json lines,
// which it turns into events (see driver.LineParser).
type streamParser struct {
	evs       []agentcli.Event
	sessionID string
	model     string
	block     joined // text deltas not yet reported as an EventText
	turnText  joined // assistant text since the last tool event
	errMsg    string // last error-severity `error` event
	result    *wireEvent
	resultRaw json.RawMessage
}

var _ driver.LineParser[wireEvent] = (*streamParser)(nil)

// jsonParser turns the pretty-printed json document, which arrives line
// by line, into events: a driver.Parser of its own, since the document
// spans lines.
type jsonParser struct {
	evs []agentcli.Event
	// limit bounds the json document (Options.MaxLineBytes): it is one
	// value, split into lines by the pretty-printer.
	limit     int
	d         jsonscan.Decoder
	sessionID string
	doc       docReader
	jdoc      *wireJSON
	jdocRaw   json.RawMessage
	// stray is what the last document-like output that was not
	// gemini's document went wrong with (the start of it, and why), for
	// the *agentcli.ParseError of a run that printed no document.
	stray    []byte
	strayErr error
}

// newParser returns the driver.Parser of one run printing format f.
func newParser(f format) driver.Parser {
	if f == formatJSON {
		return newJSONParser()
	}
	return driver.Lines(Name, &streamParser{})
}

func newJSONParser() *jsonParser { return &jsonParser{limit: driver.DefaultMaxLine} }

// Line implements driver.Parser.
func (p *jsonParser) Line(line []byte) []agentcli.Event {
	p.evs = p.evs[:0]
	p.jsonLine(line)
	return p.evs
}

// Apply implements driver.LineParser.
func (p *streamParser) Apply(w *wireEvent, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	p.applyEvent(w, line)
	return p.evs
}

// Decode implements driver.Wire.
func (w *wireEvent) Decode(d *jsonscan.Decoder) error {
	return driver.CheckJSON(d, w.decode(d), w.Type == "result")
}

// str reads a string that may share the line's memory ("" for any other
// value).
func str(d *jsonscan.Decoder) string {
	s, _ := d.UnsafeStr()
	return s
}

// optStr reads a string that may be absent: nil for any other value.
func optStr(d *jsonscan.Decoder) *string {
	if s, ok := d.UnsafeStr(); ok {
		return &s
	}
	return nil
}

// count reads a token count, clamped to be non-negative.
func count(d *jsonscan.Decoder) int64 { return driver.Count(d.Int()) }

// optCount reads a token count that may be absent or null.
func optCount(d *jsonscan.Decoder) *int64 {
	n, ok := d.IntOK()
	if !ok {
		return nil
	}
	n = driver.Count(n)
	return &n
}

// decodeError reads an error object; nil for null or any other value.
func decodeError(d *jsonscan.Decoder) *wireError {
	if d.Kind() != jsonscan.Object {
		d.Skip()
		return nil
	}
	e := &wireError{}
	for k := range d.Object() {
		switch string(k) {
		case "type":
			e.Type = str(d)
		case "message":
			e.Message = str(d)
		case "code":
			e.Code = d.Raw()
		}
	}
	return e
}

// decode reads one stream-json line into w, which is zero. It reports
// parameters that are not valid JSON (bad).
func (w *wireEvent) decode(d *jsonscan.Decoder) (bad bool) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			w.Type = str(d)
		case "session_id":
			w.SessionID = str(d)
		case "model":
			w.Model = str(d)
		case "role":
			w.Role = str(d)
		case "content":
			w.Content = str(d)
		case "delta":
			w.Delta = d.LooseBool()
		case "tool_name":
			w.ToolName = str(d)
		case "tool_id":
			w.ToolID = str(d)
		case "parameters":
			w.Parameters = driver.RawJSON(d, &bad)
		case "status":
			w.Status = str(d)
		case "output":
			w.Output = optStr(d)
		case "error":
			w.Error = decodeError(d)
		case "severity":
			w.Severity = str(d)
		case "message":
			w.Message = str(d)
		case "stats":
			w.Stats = nil
			if d.Kind() != jsonscan.Object {
				d.Skip()
				break
			}
			s := &wireStreamStats{}
			for k := range d.Object() {
				switch string(k) {
				case "total_tokens":
					s.TotalTokens = count(d)
				case "input_tokens":
					s.InputTokens = count(d)
				case "output_tokens":
					s.OutputTokens = count(d)
				case "cached":
					s.Cached = count(d)
				case "input":
					s.Input = optCount(d)
				case "tool_calls":
					s.ToolCalls = int(d.Int())
				case "models":
					s.Models = rawMembers(d)
				}
			}
			w.Stats = s
		}
	}
	return bad
}

// applyEvent appends the events of a decoded stream-json line w.
func (p *streamParser) applyEvent(w *wireEvent, line *driver.Line) {
	if w.SessionID != "" && w.Type == "init" {
		p.sessionID = w.SessionID
	}
	base := agentcli.Event{SessionID: p.sessionID, Raw: line.Raw()}
	ev := base
	switch w.Type {
	case "init":
		// Starts the run; anything before it is not part of the answer.
		p.model = w.Model
		p.block.Reset()
		p.turnText.Reset()
		p.errMsg = ""
		ev.Kind, ev.SessionID, ev.Model = agentcli.EventInit, w.SessionID, w.Model
	case "message":
		switch w.Role {
		case "user":
			return // the prompt, echoed once
		case "assistant":
			p.message(w, base)
			return
		}
		ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
	case "tool_use", "tool_result":
		p.endBlock()
		p.turnText.Reset()
		ev = toolEvent(w, base)
	case "error":
		// Non-fatal: loop detected, max session turns, an empty or
		// blocked model stream, agent execution blocked. The result
		// that follows says whether the run failed.
		if w.Severity == "error" {
			p.errMsg = w.Message
		}
		ev.Kind, ev.Text = agentcli.EventNotice, w.Message
		if w.Severity != "" {
			ev.Text = w.Severity + ": " + w.Message
		}
	case "result":
		p.endBlock()
		r := *w
		p.result = &r
		p.resultRaw = base.Raw
		if w.Stats == nil {
			return
		}
		u := streamUsage(w.Stats)
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
	default:
		ev.Kind, ev.Raw = agentcli.EventUnknown, line.UnknownRaw()
	}
	p.evs = append(p.evs, ev)
}

// message appends the event of an assistant message: a text delta, or a
// whole block.
func (p *streamParser) message(w *wireEvent, base agentcli.Event) {
	ev := base
	ev.Text = w.Content
	p.turnText.WriteString(w.Content)
	if w.Delta {
		ev.Kind = agentcli.EventTextDelta
		p.block.WriteString(w.Content)
	} else {
		// gemini 0.61.0 marks every assistant message as a delta; one
		// without the mark is taken as a whole block.
		p.endBlock()
		ev.Kind = agentcli.EventText
	}
	p.evs = append(p.evs, ev)
}

// toolEvent returns the event of a tool_use or tool_result line.
func toolEvent(w *wireEvent, base agentcli.Event) agentcli.Event {
	ev := base
	if w.Type == "tool_use" {
		ev.Kind = agentcli.EventToolUse
		ev.Tool = tools.Use(w.ToolID, w.ToolName, w.Parameters)
		return ev
	}
	tr := &agentcli.ToolResult{ID: w.ToolID, IsError: w.Status == "error"}
	if w.Output != nil {
		tr.Output = *w.Output
	}
	if tr.Output == "" && w.Error != nil {
		tr.Output = w.Error.Message
	}
	ev.Kind, ev.ToolResult = agentcli.EventToolResult, tr
	return ev
}

// joined gathers text pieces. One piece is kept as it is: a huge delta,
// which may share the line's memory, is not copied (twice, for the block
// and for the turn) unless more text follows.
type joined struct {
	one string          // the only piece so far
	b   strings.Builder // the pieces, from the second on
}

func (j *joined) WriteString(s string) {
	switch {
	case s == "":
	case j.one == "" && j.b.Len() == 0:
		j.one = s
	default:
		if j.one != "" {
			j.b.Grow(len(j.one) + len(s))
			j.b.WriteString(j.one)
			j.one = ""
		}
		j.b.WriteString(s)
	}
}

func (j *joined) String() string {
	if j.one != "" {
		return j.one
	}
	return j.b.String()
}

func (j *joined) Len() int { return len(j.one) + j.b.Len() }

func (j *joined) Reset() {
	j.one = ""
	j.b.Reset()
}

// endBlock closes the current run of assistant text deltas, which is then
// reported whole as an EventText.
func (p *streamParser) endBlock() {
	if p.block.Len() == 0 {
		return
	}
	text := p.block.String()
	p.block.Reset()
	p.evs = append(p.evs, agentcli.Event{Kind: agentcli.EventText, SessionID: p.sessionID, Text: text})
}

// docReader follows the json document across lines, in one pass over each
// line: JSON.stringify(…, null, 2) puts the document's opening brace at
// the start of its first line, indents every other line but the closing
// brace, and strings cannot hold raw newlines, so each line starts outside
// any string and the document ends where its brackets balance. The
// document is kept (for its Raw) up to the parser's limit and decoded once,
// when it ends.
type docReader struct {
	buf    []byte
	depth  int
	active bool   // a document is being read
	skip   bool   // a document longer than the limit is being skipped
	first  []byte // the document's first line, for notices
}

// docStatus is what a line does to the document.
type docStatus int

const (
	docMore docStatus = iota // it goes on
	docEnd                   // it ends on this line
	docBad                   // this line cannot be part of a JSON document
)

// Byte classes outside strings.
const (
	cBad = iota
	cOther
	cQuote
	cOpen
	cClose
	cSpace
)

var docClass = func() (t [256]uint8) {
	for _, c := range []byte("0123456789-+.eEtrufalsn,:") {
		t[c] = cOther
	}
	for _, c := range []byte(" \t\r\n") {
		t[c] = cSpace
	}
	t['"'] = cQuote
	t['{'], t['['] = cOpen, cOpen
	t['}'], t[']'] = cClose, cClose
	return t
}()

// scan advances the document's bracket depth over line.
func (r *docReader) scan(line []byte) docStatus {
	depth := r.depth
	for i := 0; i < len(line); i++ {
		switch docClass[line[i]] {
		case cOther, cSpace:
		case cQuote:
			j := jsonscan.StringEnd(line, i+1)
			if j < 0 {
				return docBad // a string cut by the end of the line
			}
			i = j
		case cOpen:
			depth++
		case cClose:
			if depth--; depth < 0 {
				return docBad
			}
			if depth == 0 {
				for _, c := range line[i+1:] {
					if docClass[c] != cSpace {
						return docBad
					}
				}
				r.depth = 0
				return docEnd
			}
		default:
			return docBad
		}
	}
	r.depth = depth
	return docMore
}

var errNotDocument = errors.New("not part of the json document")

// jsonLine reads one line of `-o json` output. Lines outside the document
// are noise and reported as notices; so is a document that is not JSON,
// which is dropped (a later one may follow), and one longer than the
// limit, which is skipped to its end without being kept.
func (p *jsonParser) jsonLine(line []byte) {
	r := &p.doc
	t := bytes.TrimSpace(line)
	start := len(line) > 0 && line[0] == '{' || !r.active && !r.skip && len(t) > 0 && t[0] == '{'
	if start && p.jdoc == nil {
		if r.active {
			// A new document at the start of a line: what came before
			// was not a document's beginning.
			p.strayDoc(r.first, errors.New("json document cut short by the next one"))
		}
		*r = docReader{active: true, buf: r.buf[:0], first: t}
	}
	switch {
	case r.skip:
		if r.scan(line) != docMore {
			*r = docReader{}
		}
		return
	case !r.active:
		if len(t) > 0 {
			p.evs = append(p.evs, driver.Notice(Name, t, errNotDocument))
		}
		return
	}
	st := r.scan(line)
	if st == docBad {
		p.strayDoc(line, errors.New("not JSON: the json document ends here"))
		*r = docReader{}
		return
	}
	if n := len(r.buf) + len(line) + 1; n > p.limit {
		p.strayDoc(r.first, &agentcli.LineTooLongError{Limit: p.limit, Len: n})
		r.buf, r.active, r.skip = nil, false, st == docMore
		return
	}
	r.buf = append(append(r.buf, line...), '\n')
	if st == docMore {
		return
	}
	doc := r.buf
	*r = docReader{}
	p.endDocument(doc)
}

// strayDoc reports document-like output that is not gemini's document
// (a notice) and keeps it for the error of a run that prints none.
func (p *jsonParser) strayDoc(line []byte, err error) {
	p.evs = append(p.evs, driver.Notice(Name, line, err))
	p.stray = append(p.stray[:0], line[:min(len(line), maxStray)]...)
	p.strayErr = err
}

// maxStray bounds what a *agentcli.ParseError keeps of stray output.
const maxStray = 4 << 10

// errNotGemini is the error of a complete JSON object, among gemini's
// output, that has none of the document's members.
var errNotGemini = errors.New("a JSON object that is not gemini's json document (no session_id, response, error or stats)")

// endDocument decodes a complete json document: gemini's, or a stray
// one, which is reported and skipped so that gemini's, later, is still
// found.
func (p *jsonParser) endDocument(doc []byte) {
	raw := bytes.TrimSpace(doc)
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		p.strayDoc(raw, err)
		return
	}
	d := &p.d
	d.Reset(raw)
	w := decodeDocument(d)
	err := d.Finish()
	d.Reset(nil)
	if err != nil { // cannot happen: the document is valid
		p.strayDoc(raw, err)
		return
	}
	if !w.known {
		p.strayDoc(raw, errNotGemini)
		return
	}
	p.jdoc = w
	p.jdocRaw = raw
	if w.SessionID != "" {
		p.sessionID = w.SessionID
	}
	for _, warn := range w.Warnings {
		p.evs = append(p.evs, agentcli.Event{Kind: agentcli.EventNotice, SessionID: p.sessionID, Text: warn})
	}
	if w.Response != nil && *w.Response != "" {
		p.evs = append(p.evs, agentcli.Event{Kind: agentcli.EventText, SessionID: p.sessionID, Text: *w.Response})
	}
	if w.Stats != nil {
		u := jsonUsage(w.Stats)
		p.evs = append(p.evs, agentcli.Event{Kind: agentcli.EventUsage, SessionID: p.sessionID, Usage: &u})
	}
	if len(p.evs) > 0 {
		p.evs[len(p.evs)-1].Raw = p.jdocRaw
	}
}

// decodeDocument reads the json document.
func decodeDocument(d *jsonscan.Decoder) *wireJSON {
	w := &wireJSON{}
	for k := range d.Object() {
		switch string(k) {
		case "session_id", "response", "stats", "error":
			w.known = true
		}
		switch string(k) {
		case "session_id":
			w.SessionID = str(d)
		case "response":
			w.Response = optStr(d)
		case "stats":
			w.Stats = nil
			if d.Kind() != jsonscan.Object {
				d.Skip()
				break
			}
			w.Stats = &wireStats{}
			for k := range d.Object() {
				if string(k) != "models" {
					continue
				}
				w.Stats.Models = nil
				if d.Kind() == jsonscan.Object {
					w.Stats.Models = map[string]wireModelStats{}
				}
				for name := range d.Object() {
					w.Stats.Models[string(name)] = decodeModelStats(d)
				}
			}
		case "error":
			w.Error = decodeError(d)
		case "warnings":
			w.Warnings = driver.Strings(d)
		}
	}
	return w
}

func decodeModelStats(d *jsonscan.Decoder) wireModelStats {
	var m wireModelStats
	for k := range d.Object() {
		switch string(k) {
		case "tokens":
			for k := range d.Object() {
				t := &m.Tokens
				switch string(k) {
				case "input":
					t.Input = optCount(d)
				case "prompt":
					t.Prompt = count(d)
				case "candidates":
					t.Candidates = count(d)
				case "cached":
					t.Cached = count(d)
				case "thoughts":
					t.Thoughts = count(d)
				}
			}
		case "roles":
			m.Roles = rawMembers(d)
		}
	}
	return m
}

// rawMembers reads an object's members as their JSON by name (a name
// given again keeps its last value): nil for a value that is not an
// object.
func rawMembers(d *jsonscan.Decoder) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if d.Kind() == jsonscan.Object {
		m = map[string]json.RawMessage{}
	}
	for k := range d.Object() {
		m[string(k)] = d.Raw()
	}
	return m
}

// End implements driver.LineParser.
func (p *streamParser) End(exit driver.Exit) driver.Outcome {
	w := p.result
	if w == nil {
		return noResult(exit, p.sessionID, p.model)
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
		return succeeded(res, exit)
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
	return failed(res, exit, subtype, msg, status)
}

// End implements driver.Parser: it decides from the json document. A
// document still open when the output ended (cut short) counts as none. A run whose output had
// something like a document but not gemini's (cut short, not JSON, a
// stray object) and exits 0 is an *agentcli.ParseError: never a success
// without the answer gemini printed.
func (p *jsonParser) End(exit driver.Exit) driver.Outcome {
	w := p.jdoc
	if w == nil {
		if p.doc.active {
			p.stray = append(p.stray[:0], p.doc.first[:min(len(p.doc.first), maxStray)]...)
			p.strayErr = errors.New("json document cut short by the end of the output")
		}
		o := noResult(exit, p.sessionID, "")
		if o.Result == nil && p.strayErr != nil {
			o.Unparsed = bytes.Clone(p.stray)
			o.UnparsedErr = fmt.Errorf("no json document from gemini in its output: %w", p.strayErr)
		}
		return o
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
		return succeeded(res, exit)
	}
	// An empty, thinking-only or blocked model stream: exit 0 with
	// error.type INVALID_STREAM.
	return failed(res, exit, w.Error.Type, w.Error.Message, codeStatus(w.Error.Code))
}

// noResult handles a run that printed no terminal result. With -o json a
// fatal error is a JSON document on stderr; otherwise stderr has a message.
func noResult(exit driver.Exit, sessionID, model string) driver.Outcome {
	if w, raw := stderrJSON(exit.Stderr); w != nil {
		res := &agentcli.Result{SessionID: cmp.Or(w.SessionID, sessionID), Model: model, Raw: raw}
		return failed(res, exit, w.Error.Type, w.Error.Message, codeStatus(w.Error.Code))
	}
	return driver.Outcome{Kind: exitKind(exit.Code)}
}

// succeeded is the outcome of a run whose result reports success: a
// failure all the same when the CLI exited with a non-zero status.
func succeeded(res *agentcli.Result, exit driver.Exit) driver.Outcome {
	if exit.Code == 0 {
		return driver.Outcome{Result: res}
	}
	return failed(res, exit, "", "CLI exited with a non-zero status after a successful result", 0)
}

// failed is the outcome of a run that ended in error.
func failed(res *agentcli.Result, exit driver.Exit, subtype, msg string, status int) driver.Outcome {
	if status == 0 {
		status = messageStatus(msg)
	}
	if status == 0 && subtype != "" {
		status = exitStatus(exit.Code)
	}
	o := driver.Outcome{Result: res, Failed: true, Subtype: subtype, APIStatus: status, Message: msg}
	switch {
	case exit.Code == exitTurnLimit || subtype == "FatalTurnLimitedError":
		o.Subtype, o.TerminalReason = "error_max_turns", "max_turns"
	case status != 0:
		o.TerminalReason = "api_error"
	}
	res.Subtype, res.TerminalReason = o.Subtype, o.TerminalReason
	o.Kind = driver.ClassifyStatus(status)
	if o.Kind == nil {
		o.Kind = exitKind(exit.Code)
	}
	return o
}

// exitKind maps gemini's exit statuses to error kinds: 41 is an
// authentication failure, and API errors exit with their HTTP status mod 256.
func exitKind(code int) error {
	if code == exitAuth {
		return agentcli.ErrAuth
	}
	return driver.ClassifyStatus(exitStatus(code))
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

// streamUsage converts stream-json result stats (counts already clamped).
// InputTokens counts prompt tokens not read from cache, like the other
// backends; gemini's own input_tokens includes the cached ones.
// stream-json reports no thought count (its output_tokens is the sum of
// candidates only), so there OutputTokens leaves reasoning out and
// ReasoningTokens is 0; the json format reports both.
func streamUsage(s *wireStreamStats) agentcli.Usage {
	u := agentcli.Usage{OutputTokens: s.OutputTokens, CacheReadTokens: s.Cached}
	if s.Input != nil {
		u.InputTokens = *s.Input
	} else {
		u.InputTokens = driver.SubCount(s.InputTokens, s.Cached)
	}
	return u
}

// jsonUsage sums the per-model json stats (the router's utility calls
// included); counts are already clamped, and sums saturate.
func jsonUsage(s *wireStats) agentcli.Usage {
	var u agentcli.Usage
	for _, m := range s.Models {
		t := m.Tokens
		in := driver.SubCount(t.Prompt, t.Cached)
		if t.Input != nil {
			in = *t.Input
		}
		// candidates excludes thoughts; agentcli's OutputTokens includes
		// reasoning.
		u = u.Add(agentcli.Usage{
			InputTokens:     in,
			OutputTokens:    driver.AddCount(t.Candidates, t.Thoughts),
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
