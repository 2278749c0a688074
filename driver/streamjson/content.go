package streamjson

import (
	"encoding/json"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// Block is one content block of a message line (type "assistant" or
// "user"): text, thinking, tool_use, tool_result, or a type of the future
// (Type says which; the fields of other types are empty).
type Block struct {
	Type      string
	Text      string
	Thinking  string
	ID        string
	Name      string
	Input     json.RawMessage
	ToolUseID string
	// Content is a tool result's content as text: a string, or the text
	// blocks of an array joined.
	Content string
	IsError bool
}

// StreamEvent is the event of a stream_event line (--include-partial-messages):
// content_block_delta events carry a text or thinking delta.
type StreamEvent struct {
	Type     string
	HasDelta bool
	Delta    struct {
		Type     string
		Text     string
		Thinking string
	}
}

// DeltaEvent returns base as the event of a content_block_delta's text
// delta (agentcli.EventTextDelta) or thinking delta (agentcli.EventThinking
// with Delta set), and false for any other stream event, which has
// nothing to normalize (message_start, input_json_delta, ...).
func (e *StreamEvent) DeltaEvent(base agentcli.Event) (agentcli.Event, bool) {
	if e.Type != "content_block_delta" || !e.HasDelta {
		return base, false
	}
	ev := base
	switch e.Delta.Type {
	case "text_delta":
		ev.Kind, ev.Text = agentcli.EventTextDelta, e.Delta.Text
	case "thinking_delta":
		ev.Kind, ev.Text, ev.Delta = agentcli.EventThinking, e.Delta.Thinking, true
	default:
		return base, false
	}
	return ev, true
}

// str reads a string that may share the line's memory ("" for any other
// value).
func str(d *jsonscan.Decoder) string {
	s, _ := d.UnsafeStr()
	return s
}

// Decode reads a stream event at d's position into e; a value of another
// kind reads as the zero StreamEvent. Strings follow the rules of
// driver.Wire's Decode, which calls it.
func (e *StreamEvent) Decode(d *jsonscan.Decoder) {
	*e = StreamEvent{}
	for k := range d.Object() {
		switch string(k) {
		case "type":
			e.Type = str(d)
		case "delta":
			e.HasDelta = d.Kind() == jsonscan.Object
			for k := range d.Object() {
				switch string(k) {
				case "type":
					e.Delta.Type = str(d)
				case "text":
					e.Delta.Text = str(d)
				case "thinking":
					e.Delta.Thinking = str(d)
				}
			}
		}
	}
}

// DecodeContent reads a message's content at d's position, a string (one
// text block) or an array of blocks, and appends its blocks to dst. An
// element that is null counts as an empty block; one of another type is
// left out; a field of an unexpected type reads as absent (is_error
// "true", a string, as true). It sets *bad when a tool input is not valid
// JSON: the line is then not one whose events can keep it (driver.Wire).
// Strings follow the rules of driver.Wire's Decode, which calls it.
func DecodeContent(d *jsonscan.Decoder, dst []Block, bad *bool) []Block {
	switch d.Kind() {
	case jsonscan.String:
		return append(dst, Block{Type: "text", Text: str(d)})
	case jsonscan.Array:
	default:
		d.Skip()
		return dst
	}
	for range d.Array() {
		switch d.Kind() {
		case jsonscan.Object:
		case jsonscan.Null:
			d.Null()
			dst = append(dst, Block{})
			continue
		default:
			continue
		}
		var b Block
		for k := range d.Object() {
			switch string(k) {
			case "type":
				b.Type = str(d)
			case "text":
				b.Text = str(d)
			case "thinking":
				b.Thinking = str(d)
			case "id":
				b.ID = str(d)
			case "name":
				b.Name = str(d)
			case "input":
				b.Input = d.Raw()
				if b.Input != nil && !json.Valid(b.Input) {
					*bad = true
				}
			case "tool_use_id":
				b.ToolUseID = str(d)
			case "content":
				b.Content = toolResultText(d)
			case "is_error":
				b.IsError = d.LooseBool()
			}
		}
		dst = append(dst, b)
	}
	return dst
}

// toolResultText reads a tool result's content as text: a string, or the text
// of the "text" blocks of an array, joined. Nested content is skipped.
func toolResultText(d *jsonscan.Decoder) string {
	if d.Kind() == jsonscan.String {
		return str(d)
	}
	var first string
	var b strings.Builder
	n := 0
	for range d.Array() {
		var typ []byte
		var text string
		for k := range d.Object() {
			switch string(k) {
			case "type":
				typ, _ = d.StrBytes()
			case "text":
				text = str(d)
			}
		}
		if string(typ) != "text" || text == "" {
			continue
		}
		switch n++; n {
		case 1:
			first = text
		case 2:
			b.WriteString(first)
			fallthrough
		default:
			b.WriteString(text)
		}
	}
	if n > 1 {
		return b.String()
	}
	return first
}
