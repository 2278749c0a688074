package driver

import (
	"bytes"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// DecodedLine is one stdout line as a single-pass parser's LineDecoder
// leaves it for Apply: the wire value W decoded from it, or why the line
// yields no more than a notice. The four backends' parsers share it.
type DecodedLine[W any] struct {
	W   W
	Raw []byte // the line, trimmed
	// Err is why the line is a notice (NotObject: it is not a JSON
	// object).
	Err       error
	NotObject bool
	Empty     bool // a blank line: no events
	// InPlace records the strings decoded in place in Raw, when the line
	// was handed over for keeps (see OwnParser): Original rebuilds it.
	InPlace jsonscan.InPlace
}

// KeepInPlace records what d, done with the line, decoded in place in it.
func (dl *DecodedLine[W]) KeepInPlace(d *jsonscan.Decoder) {
	dl.InPlace = append(dl.InPlace[:0], d.InPlace()...)
}

// Original returns a copy of the line as it was printed, trimmed: of Raw,
// rebuilt where strings were decoded in place in it.
func (dl *DecodedLine[W]) Original() []byte {
	return dl.InPlace.Original(nil, dl.Raw)
}

// ReuseLine returns into, an earlier result of the same parser's
// decoders, for reuse, or a new DecodedLine when there is none.
func ReuseLine[W any](into Decoded) *DecodedLine[W] {
	if dl, ok := into.(*DecodedLine[W]); ok && dl != nil {
		return dl
	}
	return new(DecodedLine[W])
}

// Begin starts decoding line: it records the line, trimmed, and returns
// it with ok true when it holds a JSON object for the parser to decode
// into W.
func (dl *DecodedLine[W]) Begin(line []byte) (t []byte, ok bool) {
	t = bytes.TrimSpace(line)
	dl.Raw, dl.Err, dl.InPlace = t, nil, dl.InPlace[:0]
	dl.Empty = len(t) == 0
	dl.NotObject = !dl.Empty && t[0] != '{'
	return t, !dl.Empty && !dl.NotObject
}

// Settled appends to evs what the line yields when it is not for the
// parser to apply (nothing for a blank line, a notice for one that is not
// an object or did not decode) and reports whether it was such a line.
func (dl *DecodedLine[W]) Settled(backend string, evs []agentcli.Event) ([]agentcli.Event, bool) {
	switch {
	case dl.Empty:
	case dl.NotObject:
		evs = append(evs, NotObject(backend, dl.Raw))
	case dl.Err != nil:
		evs = append(evs, noticeOf(backend, dl.Original(), dl.Err))
	default:
		return evs, false
	}
	return evs, true
}

// Release drops what dl holds of its line, so that it can be reused.
func (dl *DecodedLine[W]) Release() {
	var zero W
	dl.W = zero
	dl.Raw, dl.Err, dl.InPlace = nil, nil, dl.InPlace[:0]
}

// LineRaw returns what the events of a decoded line keep as Raw: the line
// as printed, or nil when the parser borrows lines (see BorrowParser) or
// strings were decoded in place in it (ip, see OwnParser), which leaves it
// no longer as printed. An EventUnknown, which has nothing else to show,
// takes UnknownRaw instead.
func LineRaw(line []byte, borrow bool, ip jsonscan.InPlace) []byte {
	if borrow || len(ip) > 0 {
		return nil
	}
	return line
}

// UnknownRaw returns the Raw of an EventUnknown of line, given what the
// line's other events keep (raw, from LineRaw): raw, or when that is nil a
// copy of the line as printed, rebuilt where strings were decoded in place
// in it.
func UnknownRaw(raw, line []byte, ip jsonscan.InPlace) []byte {
	if raw != nil {
		return raw
	}
	return ip.Original(nil, line)
}
