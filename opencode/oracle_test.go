package opencode

// The oracle: the encoding/json parser agentcli shipped before the
// single-pass one (parse.go), kept as it was (identifiers renamed) so
// that FuzzOracle can check the new parser against it.
//
// Differences by design, outside the oracle's domain (lineShape) and each
// pinned by a test in robust_test.go:
//   - Token counts (JSON numbers) are converted saturating: the oracle's
//     int64(float64) turned 1e23 into MinInt64, and its sums wrapped.
//     Negative counts and costs are clamped to 0, costs saturate at
//     MaxFloat64 instead of summing to +Inf (which json.Marshal(Event)
//     refuses), and exit codes are clamped to the int32 range (issue 7).
//   - A field of an unexpected type reads as absent.
//   - Parts of a line no event keeps are not validated (tool inputs,
//     kept as JSON, are).
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

// lineShape is the oracle's domain: what its wire structs decode without
// a type error, keys spelled exactly and given once, token counts whole
// and in range.
var lineShape = func() *backendtest.Shape {
	type m = map[string]*backendtest.Shape
	B, N := backendtest.Obj, backendtest.OrNull
	s, c := backendtest.StrNull, N(backendtest.Count)
	return &backendtest.Shape{Kinds: backendtest.KAny, Fields: m{
		"type": s, "sessionID": s, "reason": s, "rejected": N(backendtest.Arr(s)),
		"error": &backendtest.Shape{Kinds: backendtest.KAny, Fields: m{
			"name": s, "message": s,
			"data": N(B(m{"message": s, "statusCode": N(backendtest.Num), "providerID": s})),
		}},
		"part": N(B(m{
			"id": s, "sessionID": s, "messageID": s, "type": s, "text": s, "callID": s, "tool": s, "reason": s,
			"synthetic": N(backendtest.Bool), "ignored": N(backendtest.Bool),
			"cost":   &backendtest.Shape{Kinds: backendtest.KAny&^backendtest.KAnyNum | backendtest.KCost},
			"tokens": N(B(m{"input": c, "output": c, "reasoning": c, "cache": N(B(m{"read": c, "write": c}))})),
			"state": N(B(m{
				"status": s, "input": backendtest.Any, "output": backendtest.Any, "error": backendtest.Any,
				"metadata": N(B(m{"exit": &backendtest.Shape{Kinds: backendtest.KAny&^backendtest.KAnyNum | backendtest.KInt}})),
			})),
		})),
	}}
}()

// FuzzOracle checks the single-pass parser against the oracle: on streams
// of lines inside the oracle's domain they must yield the same events,
// result and error; on anything at all the new parser must not panic, must
// decide, and must yield events json.Marshal can encode with sane usage.
func FuzzOracle(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "real", "*.stdout"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0, "")
	}
	for _, l := range live {
		f.Add([]byte(l.stdout), l.exit, "")
	}
	for i, l := range benchdata.Lines(benchdata.OpenCode, 64<<10) {
		if i < 40 {
			f.Add(l, 0, "")
		}
	}
	f.Add([]byte(`{"type":"error","error":{"data":{"message":"m","statusCode":429},"name":"APIError","message":"x"}}`), 1, "")
	f.Add([]byte(`{"type":"error","error":{"x":1}}`+"\n"+`{"type":"error","error":"boom"}`+"\n"+`{"type":"error","error":[1]}`), 1, "")
	f.Add([]byte(`{"type":"tool_use","part":{"callID":"c","tool":"bash","state":{"status":"completed","input":{"a":1},"output":{"x":1},"metadata":{"exit":2}}}}`), 0, "")
	f.Add([]byte(`{"type":"done","reason":"stop","rejected":["bash",null]}`), 0, "")
	// Escaped strings decoded in place on lines handed over for keeps
	// (ParseBorrowed): an unknown event keeps its line as printed, a
	// syntax error after such a string, an error line validated as
	// printed, a raw span holding one.
	for _, l := range []string{
		`{"type":"future","part":{"type":"text","text":"a\nb \"q\""}}`,
		`{"type":"text","part":{"type":"text","text":"a\nb" "x"}}`,
		`{"type":"error","error":{"name":"APIError","data":{"message":"a\nb"}}}`,
		`{"type":"error","error":{"data":{"x":"a\nb"}}}`,
	} {
		f.Add([]byte(l), 1, "")
	}
	f.Fuzz(func(t *testing.T, in []byte, code int, stderr string) {
		lines := backendtest.SplitLines(in)
		exit := driver.Exit{Code: code & 0xff, Stderr: stderr}
		all := backendtest.Parse(&spec, newParser(), lines, exit)
		if all.Result == nil && all.Err == nil {
			t.Fatal("End returned neither a result nor an error")
		}
		if err := backendtest.CheckEvents(all); err != nil {
			t.Fatal(err)
		}
		// Every way the kit hands lines to the parser: decoded ahead,
		// borrowed (Request.DropRaw), handed over for keeps.
		backendtest.CheckModes(t, &spec, func() driver.Parser { return newParser() }, lines, exit)
		var dom [][]byte
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) == 0 || backendtest.WellTyped(l, lineShape) {
				dom = append(dom, l)
			}
		}
		want := backendtest.Parse(&spec, newOracleParser(), dom, exit)
		got := backendtest.Parse(&spec, newParser(), dom, exit)
		if d := backendtest.DiffRuns(want, got); d != "" {
			t.Fatalf("the new parser differs from the oracle on\n%s\n%s", bytes.Join(dom, []byte("\n")), d)
		}
	})
}

// Wire structs: the subset of `opencode run --format json` output that
// agentcli reads. Every line is an envelope {type, timestamp, sessionID,
// ...data}. Unknown fields are ignored and unknown line types are kept raw.
// Nothing depends on key order; a field of an unexpected type is dropped
// rather than losing the line.

type oWireLine struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionID"`
	Part      *oWirePart      `json:"part"`
	Error     json.RawMessage `json:"error"`
	// done (builds after 1.18.33)
	Reason   string   `json:"reason"`
	Rejected []string `json:"rejected"`
}

type oWirePart struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
	MessageID string `json:"messageID"`
	Type      string `json:"type"`
	// text, reasoning
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	// tool
	CallID string          `json:"callID"`
	Tool   string          `json:"tool"`
	State  *oWireToolState `json:"state"`
	// step-finish
	Reason string          `json:"reason"`
	Cost   json.RawMessage `json:"cost"`
	Tokens *oWireTokens    `json:"tokens"`
}

type oWireToolState struct {
	Status   string          `json:"status"`
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
	Error    json.RawMessage `json:"error"`
	Metadata *struct {
		Exit json.RawMessage `json:"exit"`
	} `json:"metadata"`
}

type oWireTokens struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

// wireError is the `error` field of an error line: a NamedError
// {name, data{message, statusCode, providerID, ...}}. Errors returned by the
// prompt call itself may have other shapes; those are kept as raw text.
type oWireError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Data    *struct {
		Message    string  `json:"message"`
		StatusCode float64 `json:"statusCode"`
		ProviderID string  `json:"providerID"`
	} `json:"data"`
}

// parser turns `opencode run --format json` lines into events and decides
// the outcome of the run. opencode 1.18.33 prints no terminal event: the run
// succeeded when the CLI exited 0, reported no error and finished its last
// step.
type oracleParser struct {
	outcome
}

func newOracleParser() *oracleParser { return &oracleParser{} }

// Line implements driver.Parser.
func (p *oracleParser) Line(line []byte) []agentcli.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var w oWireLine
	if n := driver.DecodeObject(Name, line, &w); n != nil {
		return n
	}
	raw := json.RawMessage(line)
	sid := w.SessionID
	if sid == "" && w.Part != nil {
		sid = w.Part.SessionID
	}
	var evs []agentcli.Event
	if sid != "" {
		if p.sessionID == "" {
			p.sessionID = sid
		}
		if !p.inited {
			p.inited = true
			evs = append(evs, agentcli.Event{Kind: agentcli.EventInit, SessionID: sid})
		}
	}
	base := agentcli.Event{SessionID: sid, Raw: raw}
	part := w.Part
	if part == nil {
		part = &oWirePart{}
	}
	switch w.Type {
	case "step_start":
		p.step(part.MessageID, true)
		p.open = true
		return evs
	case "text":
		p.step(part.MessageID, false)
		if part.Synthetic || part.Ignored {
			break // not model output
		}
		p.stepText = append(p.stepText, part.Text)
		ev := base
		ev.Kind, ev.Text = agentcli.EventText, part.Text
		return append(evs, ev)
	case "reasoning":
		p.step(part.MessageID, false)
		ev := base
		ev.Kind, ev.Text = agentcli.EventThinking, part.Text
		return append(evs, ev)
	case "tool_use":
		p.step(part.MessageID, false)
		id := part.CallID
		if id == "" {
			id = part.ID
		}
		use := base
		use.Kind = agentcli.EventToolUse
		use.Tool = tools.Use(id, part.Tool, nil)
		evs = append(evs, use)
		st := part.State
		if st == nil {
			return evs
		}
		if len(st.Input) > 0 && string(st.Input) != "null" {
			use.Tool.Input = st.Input
		}
		res := &agentcli.ToolResult{ID: id}
		switch st.Status {
		case "completed":
			res.Output = driver.RawString(st.Output)
		case "error":
			res.Output, res.IsError = driver.RawString(st.Error), true
		default: // pending and running are never printed by `run`
			return evs
		}
		var code float64
		if st.Metadata != nil && oNumber(st.Metadata.Exit, &code) {
			c := int(code)
			res.ExitCode = &c
		}
		ev := base
		ev.Kind, ev.ToolResult = agentcli.EventToolResult, res
		return append(evs, ev)
	case "step_finish":
		p.step(part.MessageID, false)
		p.open = false
		p.steps++
		p.stopReason = part.Reason
		p.lastFinish = raw
		var c float64
		if oNumber(part.Cost, &c) {
			if p.cost != nil {
				c += *p.cost
			}
			p.cost = &c
		}
		if t := part.Tokens; t != nil {
			// opencode's own split has output exclusive of reasoning;
			// agentcli's OutputTokens includes it (see agentcli.Usage).
			p.usage = p.usage.Add(agentcli.Usage{
				InputTokens:      int64(t.Input),
				OutputTokens:     int64(t.Output + t.Reasoning),
				ReasoningTokens:  int64(t.Reasoning),
				CacheReadTokens:  int64(t.Cache.Read),
				CacheWriteTokens: int64(t.Cache.Write),
			})
		}
		u := p.usage
		ev := base
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
		return append(evs, ev)
	case "error":
		e := oDecodeError(w.Error)
		if len(p.errs) < maxErrors {
			p.errs = append(p.errs, e)
		}
		p.errorRaw = raw
		ev := base
		ev.Kind, ev.Text = agentcli.EventNotice, e.String()
		return append(evs, ev)
	case "done":
		p.done, p.doneRaw, p.doneWhy = true, raw, w.Reason
		if len(w.Rejected) > 0 {
			ev := base
			ev.Kind = agentcli.EventNotice
			ev.Text = "opencode rejected permission requests: " + strings.Join(w.Rejected, ", ")
			return append(evs, ev)
		}
		return evs
	}
	ev := base
	ev.Kind = agentcli.EventUnknown
	return append(evs, ev)
}

func oDecodeError(r json.RawMessage) apiError {
	var e apiError
	r = bytes.TrimSpace(r)
	if len(r) == 0 || string(r) == "null" {
		e.message = "unknown error"
		return e
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		e.message = s
		return e
	}
	var w oWireError
	if err := json.Unmarshal(r, &w); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			e.message = string(r)
			return e
		}
	}
	e.name = w.Name
	e.message = w.Message
	if w.Data != nil {
		if w.Data.Message != "" {
			e.message = w.Data.Message
		}
		if c := w.Data.StatusCode; c >= 100 && c <= 999 {
			e.status = int(c)
		}
	}
	if e.name == "" && e.message == "" {
		e.message = string(r)
	}
	return e
}

// number decodes r into f if r is a JSON number.
func oNumber(r json.RawMessage, f *float64) bool {
	r = bytes.TrimSpace(r)
	if len(r) == 0 || r[0] == 'n' {
		return false
	}
	return json.Unmarshal(r, f) == nil
}
