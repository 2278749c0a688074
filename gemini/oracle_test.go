package gemini

// The oracle: the encoding/json parser agentcli shipped before the
// single-pass one (parse.go), kept as it was (identifiers renamed) so
// that FuzzOracle and FuzzOracleJSON can check the new parser against it.
//
// Differences by design, outside the oracle's domain and each pinned by a
// test in robust_test.go:
//   - The json document (issue 7): a stray line starting with "{" that is
//     not JSON no longer swallows the document that follows (the oracle
//     ended such runs in NoResultError); a document longer than
//     Options.MaxLineBytes is reported and skipped instead of buffered
//     without limit; the document is decoded once, when its brackets
//     balance (the oracle re-parsed the whole buffer on every line that
//     was a lone "}": 270 KB of such lines cost 12 s). A document that is
//     not JSON is a notice, and a later one is still read.
//   - Token counts are clamped to be non-negative and sums saturate.
//   - A field of an unexpected type reads as absent (the oracle kept a
//     half-decoded value: an "error" that is a string became an empty
//     error object).
//   - Parts of a line no event keeps are not validated (tool parameters
//     and the result line, kept as JSON, are).
//   - Keys match exactly; the oracle matched them case-insensitively.
//   - Notices carry jsonscan's syntax errors, not encoding/json's.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/backendtest"
	"github.com/agentcli/agentcli/internal/benchdata"
)

type shapes = map[string]*backendtest.Shape

var (
	sn, cn   = backendtest.StrNull, backendtest.OrNull(backendtest.Count)
	errShape = backendtest.OrNull(backendtest.Obj(shapes{"type": sn, "message": sn, "code": backendtest.Any}))

	// lineShape is the stream-json oracle's domain: what its wire structs
	// decode without a type error, keys spelled exactly and given once.
	lineShape = &backendtest.Shape{Kinds: backendtest.KAny, Fields: shapes{
		"type": sn, "session_id": sn, "model": sn, "role": sn, "content": sn, "tool_name": sn, "tool_id": sn,
		"status": sn, "severity": sn, "message": sn, "output": sn, "delta": backendtest.OrNull(backendtest.Bool),
		"parameters": backendtest.Any, "error": errShape,
		"stats": backendtest.OrNull(backendtest.Obj(shapes{
			"total_tokens": cn, "input_tokens": cn, "output_tokens": cn, "cached": cn, "input": cn,
			"tool_calls": backendtest.IntNull, "models": backendtest.OrNull(backendtest.Map(nil)),
		})),
	}}

	// docShape is the json oracle's domain.
	docShape = backendtest.Obj(shapes{
		"session_id": sn, "response": sn, "error": errShape, "warnings": backendtest.OrNull(backendtest.Arr(sn)),
		"stats": backendtest.OrNull(backendtest.Obj(shapes{
			"models": backendtest.OrNull(backendtest.Map(backendtest.OrNull(backendtest.Obj(shapes{
				"tokens": backendtest.OrNull(backendtest.Obj(shapes{"input": cn, "prompt": cn, "candidates": cn, "cached": cn, "thoughts": cn})),
				"roles":  backendtest.OrNull(backendtest.Map(nil)),
			})))),
		})),
	})
)

// oneMain reports whether at most one model of a document has the main
// role: with several, the oracle picked one at random (map order).
func oneMain(doc []byte) bool {
	var w wireJSON
	if json.Unmarshal(doc, &w) != nil {
		return false
	}
	n := 0
	if w.Stats != nil {
		for _, m := range w.Stats.Models {
			if _, ok := m.Roles["main"]; ok {
				n++
			}
		}
	}
	return n <= 1
}

// checkNew runs the new parser on anything: it must not panic, must
// decide, and must yield events json.Marshal can encode with sane usage.
func checkNew(t *testing.T, f format, lines [][]byte, exit driver.Exit) {
	all := backendtest.Parse(&spec, newParser(f), lines, exit)
	if all.Result == nil && all.Err == nil {
		t.Fatal("End returned neither a result nor an error")
	}
	if err := backendtest.CheckEvents(all); err != nil {
		t.Fatal(err)
	}
	// Every way the kit hands lines to the parser: decoded ahead,
	// borrowed (Request.DropRaw), handed over for keeps.
	backendtest.CheckModes(t, &spec, func() driver.Parser { return newParser(f) }, lines, exit)
}

// FuzzOracle checks the stream-json parser against the oracle on streams
// of well-typed lines, and the new parser alone on anything.
func FuzzOracle(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "real", "*-stream.stdout"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0, "")
	}
	for name, c := range captured {
		if strings.HasSuffix(name, "-stream") {
			f.Add([]byte(c.stdout), c.exit, c.stderr)
		}
	}
	for i, l := range benchdata.Lines(benchdata.Gemini, 64<<10) {
		if i < 40 {
			f.Add(l, 0, "")
		}
	}
	f.Add([]byte(`{"type":"result","status":"error","error":{"type":"T","message":"m","code":429}}`), 173, "")
	f.Add([]byte(`{"type":"tool_result","tool_id":"t","status":"error","output":null,"error":{"message":"bad"}}`), 0, "")
	// Escaped strings decoded in place on lines handed over for keeps
	// (ParseBorrowed): an unknown event keeps its line as printed, a
	// syntax error after such a string, a result line validated as
	// printed.
	for _, l := range []string{
		`{"type":"future","role":"assistant","content":"a\nb \"q\""}`,
		`{"type":"message","role":"assistant","content":"a\nb" "x"}`,
		`{"type":"result","status":"error","error":{"type":"T","message":"a\nb"}}`,
	} {
		f.Add([]byte(l), 1, "")
	}
	f.Fuzz(func(t *testing.T, in []byte, code int, stderr string) {
		lines := backendtest.SplitLines(in)
		exit := driver.Exit{Code: code & 0xff, Stderr: stderr}
		checkNew(t, formatStream, lines, exit)
		var dom [][]byte
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) == 0 || backendtest.WellTyped(l, lineShape) {
				dom = append(dom, l)
			}
		}
		want := backendtest.Parse(&spec, newOracleParser(formatStream), dom, exit)
		got := backendtest.Parse(&spec, newParser(formatStream), dom, exit)
		if d := backendtest.DiffRuns(want, got); d != "" {
			t.Fatalf("the new parser differs from the oracle on\n%s\n%s", bytes.Join(dom, []byte("\n")), d)
		}
	})
}

// FuzzOracleJSON checks the json-document parser against the oracle on
// output made of noise lines, one well-typed document (pretty-printed as
// gemini prints it, or compact) and more noise, and the new parser alone on
// the raw input.
func FuzzOracleJSON(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "real", "*-json.stdout"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte("Loading…"), b, true, []byte("{after}"), 0, "")
	}
	for name, c := range captured {
		if strings.HasSuffix(name, "-json") {
			f.Add([]byte(nil), []byte(c.stdout), false, []byte(nil), c.exit, c.stderr)
		}
	}
	// A document cut short by the next one: the notice names the first
	// document's first line, read lines earlier (kept, under DropRaw, past
	// the memory of its line).
	f.Add([]byte("{ \"cut\": 1,\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n"), []byte(`{"response":"ok"}`), true, []byte(nil), 0, "")
	f.Fuzz(func(t *testing.T, before, doc []byte, pretty bool, after []byte, code int, stderr string) {
		exit := driver.Exit{Code: code & 0xff, Stderr: stderr}
		checkNew(t, formatJSON, backendtest.SplitLines(append(append(bytes.Clone(before), doc...), after...)), exit)
		// Lines starting with "{" are noise only once the document is
		// read: before it, the oracle took them for its start.
		var out []byte
		noise := func(in []byte) {
			for _, l := range backendtest.SplitLines(in) {
				if t := bytes.TrimSpace(l); len(t) == 0 || t[0] != '{' {
					out = append(append(out, l...), '\n')
				}
			}
		}
		noise(before)
		if backendtest.WellTyped(doc, docShape) && oneMain(doc) {
			var b bytes.Buffer
			if pretty {
				json.Indent(&b, doc, "", "  ") //nolint:errcheck // valid
			} else {
				json.Compact(&b, doc) //nolint:errcheck // valid
			}
			out = append(append(out, bytes.TrimSpace(b.Bytes())...), '\n')
			out = append(out, after...)
		} else {
			noise(after)
		}
		lines := backendtest.SplitLines(out)
		want := backendtest.Parse(&spec, newOracleParser(formatJSON), lines, exit)
		got := backendtest.Parse(&spec, newParser(formatJSON), lines, exit)
		if d := backendtest.DiffRuns(want, got); d != "" {
			t.Fatalf("the new parser differs from the oracle on\n%s\n%s", out, d)
		}
	})
}

// Wire structs: the subset of gemini's output (packages/core/src/output/
// types.ts) that agentcli reads. Unknown fields are ignored, unknown event
// types are kept raw, and nothing depends on key order.

// parser turns gemini output — stream-json lines or the pretty-printed json
// document, which arrives line by line — into events.
type oracleParser struct {
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

func newOracleParser(f format) *oracleParser { return &oracleParser{format: f} }

// Line implements driver.Parser.
func (p *oracleParser) Line(line []byte) []agentcli.Event {
	if p.format == formatJSON {
		return p.jsonLine(line)
	}
	return p.streamLine(line)
}

func (p *oracleParser) streamLine(line []byte) []agentcli.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var w wireEvent
	if n := driver.DecodeObject(Name, line, &w); n != nil {
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
			u := oStreamUsage(w.Stats)
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
func (p *oracleParser) endBlock() []agentcli.Event {
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
func (p *oracleParser) jsonLine(line []byte) []agentcli.Event {
	if !p.inDoc {
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			return nil
		}
		if t[0] != '{' || p.jdoc != nil {
			return []agentcli.Event{driver.Notice(Name, t, errors.New("not part of the json document"))}
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
		u := oJSONUsage(w.Stats)
		evs = append(evs, agentcli.Event{Kind: agentcli.EventUsage, SessionID: p.sessionID, Usage: &u})
	}
	if len(evs) > 0 {
		evs[len(evs)-1].Raw = p.jdocRaw
	}
	return evs
}

// End implements driver.Parser.
// End implements driver.Parser.
func (p *oracleParser) End(exit driver.Exit) driver.Outcome {
	if p.format == formatJSON {
		return p.endJSON(exit)
	}
	return p.endStream(exit)
}

func (p *oracleParser) endStream(exit driver.Exit) driver.Outcome {
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
		res.Usage = oStreamUsage(w.Stats)
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

func (p *oracleParser) endJSON(exit driver.Exit) driver.Outcome {
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
		res.Usage = oJSONUsage(w.Stats)
		res.Model = oMainModel(w.Stats)
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
func (p *oracleParser) noResult(exit driver.Exit) driver.Outcome {
	if w, raw := oStderrJSON(exit.Stderr); w != nil {
		sess := w.SessionID
		if sess == "" {
			sess = p.sessionID
		}
		res := &agentcli.Result{SessionID: sess, Model: p.model, Raw: raw}
		return failed(res, exit, w.Error.Type, w.Error.Message, codeStatus(w.Error.Code))
	}
	return driver.Outcome{Kind: exitKind(exit.Code)}
}

// stderrJSON finds the last JSON document with an "error" object in stderr:
// with -o json, gemini prints fatal errors there as
// {"session_id": …, "error": {"type", "message", "code"}}, pretty-printed,
// after whatever else it logged (stack traces, warnings), sometimes twice,
// the second time behind "[ERROR] ".
func oStderrJSON(stderr string) (*wireJSON, json.RawMessage) {
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
func oStreamUsage(s *wireStreamStats) agentcli.Usage {
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
func oJSONUsage(s *wireStats) agentcli.Usage {
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
func oMainModel(s *wireStats) string {
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
