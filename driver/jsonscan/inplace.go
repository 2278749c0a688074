package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// Owned input (ResetOwned): a Decoder may then keep the input's memory and
// decode long strings in place, so that a huge string costs the line it
// came in and nothing more.
//
// A string is decoded in place only when its escapes are all in the form
// JavaScript's JSON.stringify and serde_json write (`\"`, `\\`, `\b`, `\f`,
// `\n`, `\r`, `\t`, and `\u00xx` in lowercase hex for the other control
// characters) and it holds valid UTF-8: then the decoded string maps back
// to exactly the bytes it came from, and InPlace.Original can rebuild the
// input. Any other string is decoded as for input that is not owned.

// Bounds for decoding in place: a string is decoded in place (or, without
// escapes, shared) when its raw contents are at least inPlaceMin bytes
// and at least a quarter of the input, so that a string kept from an
// owned input keeps at most four times its size alive.
const inPlaceMin = 64 << 10

// inPlaceAll lifts those bounds (SetInPlaceAll).
var inPlaceAll atomic.Bool

// SetInPlaceAll makes every Decoder decode every string of an owned input
// in place, or share it, however short, when it can; it returns a
// function that restores the setting. It is for tests, which exercise the
// in-place path on ordinary lines with it; it must not be changed while a
// Decoder of owned input is in use on another goroutine.
func SetInPlaceAll(all bool) (restore func()) {
	old := inPlaceAll.Swap(all)
	return func() { inPlaceAll.Store(old) }
}

// InPlace records the strings a Decoder decoded in place in its input
// (see Decoder.ResetOwned), in input order.
type InPlace []inPlaceString

// inPlaceString: the raw contents of a string (between its quotes) were
// input[start:end]; its decoded form now starts at start and is n bytes
// long.
type inPlaceString struct{ start, end, n int }

// ResetOwned is ResetValid for input handed over for keeps: nothing but d
// and what d returns reads data afterwards, except through InPlace, and
// nobody reuses its memory. StrOK, Str and UnsafeStr then return a long
// string (see inPlaceMin) as a view of data, even when inputs are
// borrowed (SetBorrowed), and decode its escapes in place, overwriting
// data: InPlace records where, so that the input as it was can be
// rebuilt. Raw likewise returns a long value as a view. Shorter strings
// and values are returned as without ResetOwned.
func (d *Decoder) ResetOwned(data []byte, validUTF8 bool) {
	d.ResetInput(data, validUTF8, true)
}

// ResetInput is ResetOwned when owned is true, and ResetValid otherwise:
// for a caller that is handed some inputs for keeps and others not.
func (d *Decoder) ResetInput(data []byte, validUTF8, owned bool) {
	d.ResetValid(data, validUTF8)
	d.owned = owned
}

// InPlace returns the strings decoded in place in the current input (see
// ResetOwned). The slice is valid until the next Reset.
func (d *Decoder) InPlace() InPlace { return d.inPlace }

// ValidInput reports whether the input, as it was before any string was
// decoded in place in it, is valid JSON (json.Valid).
func (d *Decoder) ValidInput() bool { return d.inPlace.Valid(d.buf) }

// Original appends to dst the input data as it was before the strings of
// ip were decoded in place in it; data must be the slice given to
// ResetOwned. Without strings decoded in place it appends data as it is.
func (ip InPlace) Original(dst, data []byte) []byte {
	dst = slices.Grow(dst, len(data)) // decoding in place keeps the length
	prev := 0
	for _, s := range ip {
		dst = append(dst, data[prev:s.start]...)
		dst = appendCanonical(dst, data[s.start:s.start+s.n])
		prev = s.end
	}
	return append(dst, data[prev:]...)
}

// Valid reports whether data, as it was before the strings of ip were
// decoded in place in it, is valid JSON (json.Valid). The contents of a
// string decoded in place were checked when it was decoded and are valid
// wherever a string is, so it validates data without them.
func (ip InPlace) Valid(data []byte) bool {
	if len(ip) == 0 {
		return json.Valid(data)
	}
	n := len(data)
	for _, s := range ip {
		n -= s.end - s.start
	}
	b := make([]byte, 0, n)
	prev := 0
	for _, s := range ip {
		b = append(b, data[prev:s.start]...)
		prev = s.end
	}
	return json.Valid(append(b, data[prev:]...))
}

// strOwned reads the string whose opening quote is at d.pos in owned input
// as a view of the input, decoding it in place, when it is long enough and
// its escapes are in the canonical form (see above). done is false, with
// nothing consumed, for a string to read as usual.
func (d *Decoder) strOwned() (s string, done bool) {
	buf := d.buf
	start := d.pos + 1
	if !d.keepable(len(buf) - start) {
		return "", false // no room for a string long enough
	}
	end, escaped, ok := canonicalEnd(buf, start, d.utf8)
	if !ok || !d.keepable(end-start) {
		return "", false
	}
	d.pos = end + 1
	n := end - start
	if escaped {
		n = unescapeInPlace(buf[start:end])
		d.inPlace = append(d.inPlace, inPlaceString{start, end, n})
	}
	if n == 0 {
		return "", true
	}
	return unsafe.String(&buf[start], n), true
}

// keepable reports whether n bytes of owned input are long enough to be
// kept in place rather than copied: at least inPlaceMin and a quarter of
// the input (see there), or any length under SetInPlaceAll.
func (d *Decoder) keepable(n int) bool {
	return inPlaceAll.Load() || n >= inPlaceMin && 4*n >= len(d.buf)
}

// canonicalEnd finds the closing quote of the string whose contents start
// at buf[start]: ok reports that there is one, that the contents hold no
// control character and valid UTF-8 (checked unless validUTF8), and that
// every escape is canonical; escaped, that there is an escape.
func canonicalEnd(buf []byte, start int, validUTF8 bool) (end int, escaped, ok bool) {
	high := false
	for i := start; ; {
		j, h := plainEnd(buf, i)
		high = high || h
		if j >= len(buf) {
			return 0, false, false
		}
		switch buf[j] {
		case '"':
			if high && !validUTF8 && !utf8.Valid(buf[start:j]) {
				return 0, false, false
			}
			return j, escaped, true
		case '\\':
			k := canonicalEscape(buf[j:])
			if k == 0 {
				return 0, false, false
			}
			escaped = true
			i = j + k
		default: // a control character
			return 0, false, false
		}
	}
}

// canonicalEscape returns the length of the canonical escape at the start
// of s (which starts with a backslash), or 0 when it is not one.
func canonicalEscape(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(s) < 6 || s[2] != '0' || s[3] != '0' || s[4] != '0' && s[4] != '1' {
			return 0
		}
		v, ok := lowerHex(s[5])
		if !ok {
			return 0
		}
		if s[4] == '1' {
			v += 16
		}
		if shortEscape[v] != 0 {
			return 0 // \u000a for \n and the like
		}
		return 6
	}
	return 0
}

// lowerHex decodes a lowercase hex digit.
func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// shortEscape maps a byte that has a two-byte escape to the letter after
// the backslash.
var shortEscape = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// unescapeInPlace decodes the contents s of a string whose escapes are
// all canonical into s itself, and returns the decoded length. Nothing
// moves up to the first escape; after it, runs are moved down 8 bytes at
// a time once the decoded end w trails the read position r by 8 bytes or
// more (a whole word written at w then lands on bytes already read).
func unescapeInPlace(s []byte) int {
	w := bytes.IndexByte(s, '\\')
	if w < 0 {
		return len(s)
	}
	r := w
	for r < len(s) {
		if c := s[r]; c == '\\' {
			if s[r+1] == 'u' {
				hi, _ := lowerHex(s[r+4])
				lo, _ := lowerHex(s[r+5])
				s[w] = hi<<4 | lo
				r += 6
			} else {
				s[w] = simpleEscape[s[r+1]]
				r += 2
			}
			w++
			continue
		}
		if r-w < 8 || r+8 > len(s) {
			s[w] = s[r]
			w, r = w+1, r+1
			continue
		}
		x := binary.LittleEndian.Uint64(s[r:])
		binary.LittleEndian.PutUint64(s[w:], x)
		bs := x ^ (lsb * '\\')
		// The lowest flag is exact (see plainEnd).
		if m := (bs - lsb) &^ bs & msb; m != 0 {
			k := bits.TrailingZeros64(m) / 8
			w, r = w+k, r+k
			continue
		}
		w, r = w+8, r+8
	}
	return w
}

// appendCanonical appends the contents of the JSON string for s, escaped
// in the canonical form.
func appendCanonical(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	prev := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[prev:i]...)
		if e := shortEscape[c]; e != 0 {
			dst = append(dst, '\\', e)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		prev = i + 1
	}
	return append(dst, s[prev:]...)
}

// Span returns the input from offset start to end (see Offset) as it was
// before strings were decoded in place in it: a view of the input, or,
// when a string decoded in place lies in the span, a copy rebuilt (of
// end-start bytes: decoding in place moves nothing).
func (d *Decoder) Span(start, end int) []byte {
	var b []byte
	prev := start
	for _, s := range d.inPlace {
		if s.end <= start || s.start >= end {
			continue
		}
		if b == nil {
			b = make([]byte, 0, end-start)
		}
		b = append(b, d.buf[prev:max(s.start, start)]...)
		if s.start >= start && s.end <= end {
			b = appendCanonical(b, d.buf[s.start:s.start+s.n])
		} else { // only part of the string lies in the span
			orig := appendCanonical(nil, d.buf[s.start:s.start+s.n])
			b = append(b, orig[max(s.start, start)-s.start:min(s.end, end)-s.start]...)
		}
		prev = min(s.end, end)
	}
	if b == nil {
		return d.buf[start:end:end]
	}
	return append(b, d.buf[prev:end]...)
}
