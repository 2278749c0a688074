package toy

// The parser of toyagent's output, on driver's simplest seam
// (driver.Parser: Line and End), kept in this one file.

import (
	"encoding/json"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// line is one toyagent output line; which fields are set depends on Type.
type line struct {
	Type     string          `json:"type"`
	ID       string          `json:"id"`
	Model    string          `json:"model"`
	Text     string          `json:"text"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Output   string          `json:"output"`
	ExitCode *int            `json:"exit_code"`
	Denied   bool            `json:"denied"`
	Session  string          `json:"session"`
	Turns    int             `json:"turns"`
	InTok    int64           `json:"input_tokens"`
	OutTok   int64           `json:"output_tokens"`
	Error    *struct {
		Kind    string `json:"kind"`
		Status  int    `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

// parser turns one run's lines into events, and decides its outcome from
// the terminal line ("done" or "failed") and the exit status.
type parser struct {
	session string
	usage   agentcli.Usage
	end     *line           // the terminal line, once seen
	raw     json.RawMessage // its text
	evs     []agentcli.Event
}

func newParser() *parser { return &parser{} }

// Line implements driver.Parser.
func (p *parser) Line(b []byte) []agentcli.Event {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return append(p.evs[:0], driver.Notice(Name, b, err))
	}
	raw := json.RawMessage(b) // the runner gives a plain Parser lines to keep
	ev := agentcli.Event{Kind: agentcli.EventUnknown, SessionID: p.session, Raw: raw}
	switch l.Type {
	case "session":
		p.session = l.ID
		ev.Kind, ev.SessionID, ev.Model = agentcli.EventInit, l.ID, l.Model
	case "thinking":
		ev.Kind, ev.Text = agentcli.EventThinking, l.Text
	case "message":
		ev.Kind, ev.Text = agentcli.EventText, l.Text
	case "tool_call":
		ev.Kind, ev.Tool = agentcli.EventToolUse, spec.Tools.Use(l.ID, l.Name, l.Input)
	case "tool_result":
		ev.Kind = agentcli.EventToolResult
		ev.ToolResult = &agentcli.ToolResult{ID: l.ID, Output: l.Output, IsError: l.Denied, ExitCode: l.ExitCode}
	case "usage":
		p.usage = agentcli.Usage{InputTokens: l.InTok, OutputTokens: l.OutTok}
		u := p.usage
		ev.Kind, ev.Usage = agentcli.EventUsage, &u
	case "done", "failed":
		if p.end == nil {
			p.end, p.raw = &l, raw
		}
		return p.evs[:0]
	}
	return append(p.evs[:0], ev)
}

// End implements driver.Parser.
func (p *parser) End(e driver.Exit) driver.Outcome {
	if p.end == nil {
		return driver.Outcome{} // the kit reports the exit
	}
	res := &agentcli.Result{Text: p.end.Text, SessionID: p.end.Session, Usage: p.usage, Turns: p.end.Turns, Raw: p.raw}
	if res.SessionID == "" {
		res.SessionID = p.session
	}
	switch {
	case p.end.Type == "failed" && p.end.Error != nil:
		return driver.Outcome{Result: res, Failed: true, Subtype: p.end.Error.Kind, APIStatus: p.end.Error.Status,
			Message: p.end.Error.Message, Kind: kindOf(p.end.Error.Kind)}
	case p.end.Type == "failed":
		return driver.Outcome{Result: res, Failed: true, Message: "failed"}
	case e.Code != 0: // "done", yet a failure: success needs both
		return driver.Outcome{Result: res, Failed: true, Message: "exited with a non-zero status after done"}
	}
	return driver.Outcome{Result: res}
}

// kindOf maps toyagent's error kinds to agentcli's.
func kindOf(kind string) error {
	switch kind {
	case "session_not_found":
		return agentcli.ErrSessionNotFound
	case "rate_limit":
		return agentcli.ErrRateLimited
	case "auth":
		return agentcli.ErrAuth
	}
	return nil
}

// classify maps toyagent's wording on stderr to agentcli's kinds.
func classify(msg string) error {
	if strings.Contains(msg, "not logged in") {
		return agentcli.ErrAuth
	}
	return nil
}
