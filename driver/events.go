package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"

	"github.com/agentcli/agentcli"
)

// Notice returns the EventNotice for an output line the backend's parser
// could not understand: a *agentcli.ParseError holding (the first 4 KiB of)
// the line. The run goes on.
func Notice(backend string, line []byte, err error) agentcli.Event {
	return noticeOf(backend, bytes.Clone(line), err)
}

// noticeOf is Notice for a copy of the line that the event may keep.
func noticeOf(backend string, line []byte, err error) agentcli.Event {
	l := line
	if len(l) > 4096 {
		l = l[:4096]
	}
	pe := &agentcli.ParseError{Backend: backend, Line: bytes.Clone(l), Err: err}
	return agentcli.Event{Kind: agentcli.EventNotice, Err: pe, Text: pe.Error(), Raw: json.RawMessage(line)}
}

// RawLimit returns the longest Raw a run of req keeps (see
// Request.MaxRawBytes): -1, none, under Request.DropRaw;
// agentcli.DefaultMaxRawBytes for zero; math.MaxInt, no limit, for a
// negative MaxRawBytes.
func RawLimit(req *agentcli.Request) int {
	switch {
	case req.DropRaw:
		return -1
	case req.MaxRawBytes == 0:
		return agentcli.DefaultMaxRawBytes
	case req.MaxRawBytes < 0:
		return math.MaxInt
	}
	return req.MaxRawBytes
}

// CapRaw empties what a run keeping Raw of at most limit bytes (see
// RawLimit) drops: ev's Raw when it is longer, unless the event has
// nothing else to show (an EventUnknown, or the EventNotice of a line
// that did not parse, with a *agentcli.ParseError), and its Result's Raw
// when that is longer.
func CapRaw(ev *agentcli.Event, limit int) {
	if len(ev.Raw) > limit {
		var pe *agentcli.ParseError
		switch {
		case ev.Kind == agentcli.EventUnknown:
		case ev.Kind == agentcli.EventNotice && errors.As(ev.Err, &pe):
		default:
			ev.Raw = nil
		}
	}
	if ev.Result != nil && len(ev.Result.Raw) > limit {
		ev.Result.Raw = nil
	}
}

// CapRawErr empties the Raw of the Result a *agentcli.ResultError in err
// carries when it is longer than limit (see CapRaw).
func CapRawErr(err error, limit int) {
	var re *agentcli.ResultError
	if errors.As(err, &re) && re.Result != nil && len(re.Result.Raw) > limit {
		re.Result.Raw = nil
	}
}

// DropRaw empties what Request.DropRaw drops: CapRaw with no Raw kept.
func DropRaw(ev *agentcli.Event) { CapRaw(ev, -1) }

// DropRawErr empties the Raw of the Result a *agentcli.ResultError in err
// carries (see DropRaw).
func DropRawErr(err error) { CapRawErr(err, -1) }

// DecodeObject decodes one output line that should hold a JSON object into
// v. It returns nil on success, or the notice event for a line that is not
// a JSON object. A field of an unexpected type does not lose the line: the
// rest is still decoded, so a CLI changing one field's type cannot hide its
// terminal event.
func DecodeObject(backend string, line []byte, v any) []agentcli.Event {
	if len(line) == 0 || line[0] != '{' {
		return []agentcli.Event{Notice(backend, line, errNotObject)}
	}
	if err := json.Unmarshal(line, v); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return []agentcli.Event{Notice(backend, line, err)}
		}
	}
	return nil
}

var errNotObject = errors.New("not a JSON object")

// RawString returns the value of a JSON string, the raw JSON of any other
// value, or "" for null or nothing.
func RawString(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return string(r)
}

// NotObject returns the EventNotice for an output line (or element of a
// line) that is valid JSON but not the object the backend expects.
func NotObject(backend string, line []byte) agentcli.Event {
	return Notice(backend, line, errNotObject)
}
