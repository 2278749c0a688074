package driver

import (
	"encoding/json"
	"errors"

	"github.com/agentcli/agentcli/driver/jsonscan"
)

// The helpers below read the values a wire type's Decode (see Wire) meets
// in every CLI's output: JSON an event keeps (a tool's input, a
// structured answer), text that is a string or any JSON value, arrays of
// strings, and the error Decode reports of a line whose kept JSON is not
// valid. Strings share the line's memory by the rules of Wire.

// ErrInvalidJSON is the error Decode reports (see CheckJSON) of a line a
// part of which events keep as JSON (a tool's input, the line kept as
// Result.Raw) is not valid JSON.
var ErrInvalidJSON = errors.New("invalid JSON")

// CheckJSON returns what Decode reports of the line it has just read from
// d: ErrInvalidJSON when bad (a part events keep as JSON was not valid,
// see RawJSON) or when whole (the line may become Result.Raw) and the line
// is not valid JSON; nil otherwise. Parts no event keeps are not
// validated.
func CheckJSON(d *jsonscan.Decoder, bad, whole bool) error {
	if bad || whole && !d.ValidInput() {
		return ErrInvalidJSON
	}
	return nil
}

// RawJSON reads the value at d's position as JSON an event keeps (a
// tool's input) and sets *bad when it is not valid JSON; nil when there
// is no value.
func RawJSON(d *jsonscan.Decoder, bad *bool) json.RawMessage {
	raw := d.Raw()
	*bad = *bad || raw != nil && !json.Valid(raw)
	return raw
}

// JSONValue reads the value at d's position when it is valid JSON other
// than null (a structured answer); nil otherwise.
func JSONValue(d *jsonscan.Decoder) json.RawMessage {
	if raw := d.Raw(); raw != nil && string(raw) != "null" && json.Valid(raw) {
		return raw
	}
	return nil
}

// StrOrRaw reads the value at d's position as text: a string's value, ""
// for null, and the JSON text of any other value (a field that holds a
// message as a string in one CLI version and as an object in another).
// It is d.StrOrRaw with strings read as d.UnsafeStr reads them.
func StrOrRaw(d *jsonscan.Decoder) string {
	switch d.Kind() {
	case jsonscan.String:
		s, _ := d.UnsafeStr()
		return s
	case jsonscan.Null:
		d.Null()
		return ""
	}
	return string(d.Raw())
}

// Strings reads an array of strings (an element of another kind reads as
// ""): nil for null or a value that is not an array, empty for [].
func Strings(d *jsonscan.Decoder) []string {
	var ss []string
	if d.Kind() == jsonscan.Array {
		ss = []string{}
	}
	for range d.Array() {
		s, _ := d.UnsafeStr()
		ss = append(ss, s)
	}
	return ss
}
