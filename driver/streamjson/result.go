package streamjson

import (
	"cmp"
	"encoding/json"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// Result is what a result line (type "result") of stream-json output
// says of the run's outcome, the fields Claude Code's and the CLIs that
// copy its SDK messages (qwen) share: a wire type's Decode fills it, its
// Apply keeps a copy, and End turns it into the run's outcome (Outcome).
type Result struct {
	SessionID string
	Subtype   string
	IsError   bool
	// Text is the "result" string; HasText that the line has one.
	Text    string
	HasText bool
	Turns   int // num_turns
	// Usage is the run's usage (DecodeUsage); HasUsage that the line
	// has one.
	Usage    agentcli.Usage
	HasUsage bool
	// Structured is structured_output (driver.JSONValue), or nil.
	Structured json.RawMessage
	// Error is the message the line gives of a failure (claude's errors,
	// qwen's error.message); HasError that it gives one.
	Error    string
	HasError bool
	// Raw is the line, as Result.Raw keeps it.
	Raw json.RawMessage
}

// Outcome returns the outcome of a run that printed r and exited with
// exit: a success when r is not an error and the CLI exited 0, else a
// failure whose Subtype is r's ("success" says nothing of an error, and is
// left out) and whose Message is r's Error, else its text, else that the
// CLI exited non-zero after a successful result. The result's session is
// r's or else sessionID, its text r's or else (when r is no error)
// lastText, its model model; the caller may add to both.
func (r *Result) Outcome(exit driver.Exit, sessionID, model, lastText string) driver.Outcome {
	res := &agentcli.Result{
		SessionID: cmp.Or(r.SessionID, sessionID),
		IsError:   r.IsError,
		Turns:     r.Turns,
		Model:     model,
		Subtype:   r.Subtype,
		Raw:       r.Raw,
	}
	switch {
	case r.HasText:
		res.Text = r.Text
	case !r.IsError:
		res.Text = lastText
	}
	if r.HasUsage {
		res.Usage = r.Usage
	}
	if r.Structured != nil {
		res.StructuredOutput = r.Structured
	}
	if !r.IsError && exit.Code == 0 {
		return driver.Outcome{Result: res}
	}
	o := driver.Outcome{Result: res, Failed: true}
	if r.Subtype != "success" {
		// An API error arrives as subtype "success" with is_error set.
		o.Subtype = r.Subtype
	}
	switch {
	case r.HasError:
		o.Message = r.Error
	case r.IsError && r.HasText:
		o.Message = r.Text
	case !r.IsError:
		o.Message = "CLI exited with a non-zero status after a successful result"
	}
	return o
}

// DecodeUsage reads a usage object in Anthropic's convention, which is
// agentcli's: input_tokens without cache reads and writes
// (cache_read_input_tokens, cache_creation_input_tokens), output_tokens
// with thinking (output_tokens_details.thinking_tokens). Counts are
// clamped to be non-negative; a value that is not an object reads as zero
// usage.
func DecodeUsage(d *jsonscan.Decoder) agentcli.Usage {
	var u agentcli.Usage
	for k := range d.Object() {
		switch string(k) {
		case "input_tokens":
			u.InputTokens = driver.Count(d.Int())
		case "output_tokens":
			u.OutputTokens = driver.Count(d.Int())
		case "cache_creation_input_tokens":
			u.CacheWriteTokens = driver.Count(d.Int())
		case "cache_read_input_tokens":
			u.CacheReadTokens = driver.Count(d.Int())
		case "output_tokens_details":
			u.ReasoningTokens = 0
			for k := range d.Object() {
				if string(k) == "thinking_tokens" {
					u.ReasoningTokens = driver.Count(d.Int())
				}
			}
		}
	}
	return u
}
