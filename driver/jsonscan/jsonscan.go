// Package jsonscan reads one JSON value held in memory — one line of a
// CLI's NDJSON output — in a single forward pass, decoding only what the
// caller asks for and skipping the rest without allocating.
//
// # API
//
// A [Decoder] is a cursor over the input. Reset points it at a value; then
// the caller reads that value with one method, which consumes it:
//
//	var d jsonscan.Decoder
//	d.Reset(line)
//	for key := range d.Object() {
//		switch string(key) { // no allocation
//		case "type":
//			typ = d.Str()
//		case "usage":
//			for key := range d.Object() {
//				switch string(key) {
//				case "input_tokens":
//					in = d.Int()
//				}
//			}
//		case "input":
//			input = d.Raw() // json.RawMessage without decoding
//		} // any member not read is skipped
//	}
//	if err := d.Finish(); err != nil { ... }
//
// Readers: [Decoder.Object] and [Decoder.Array] iterate containers;
// [Decoder.Str], [Decoder.StrBytes], [Decoder.UnsafeStr],
// [Decoder.StrOrRaw], [Decoder.Int], [Decoder.Float], [Decoder.Bool],
// [Decoder.LooseBool] and [Decoder.Null] decode scalars (most have an OK
// form that reports whether the value had that type); [Decoder.Raw]
// returns a value's bytes and [Decoder.Skip] drops it; [Decoder.Kind]
// peeks at what comes next without consuming it.
// [Decoder.Finish] reports the first error, or data after the value.
//
// # Guarantees
//
//   - Tolerant types: a reader applied to a value of another type consumes
//     (skips) that value and returns the zero value (and false from the OK
//     form); it is not an error. A CLI changing one field's type cannot
//     hide the rest of the line.
//   - Errors are sticky: after the first error every reader returns zero
//     values, iterators end, and [Decoder.Err] reports it as an [*Error]
//     matching [ErrSyntax], [ErrUnexpectedEnd] or [ErrTooDeep].
//   - What is read is validated: a string, number or literal the caller
//     decodes, every object key and every separator on the path to it is
//     checked exactly as JSON requires (control characters in strings,
//     invalid escapes, number grammar, "tru"). Decoding every value of a
//     document therefore accepts exactly the documents encoding/json
//     accepts (whose nesting limit is MaxDepth too).
//   - What is skipped is only scanned for its end: strings for their
//     closing quote (escapes honoured), containers for balanced, matching
//     brackets, and the bytes between for characters that can occur in
//     JSON. A skipped "tru" or "1..2" is not noticed. [Decoder.Raw] returns
//     such skipped bytes unvalidated; call json.Valid on them if they must
//     be valid.
//   - Linear time, bounded memory: the cursor only moves forward and every
//     input byte is examined a constant number of times; nothing recurses,
//     so nesting costs no stack. Nesting deeper than [MaxDepth] is an error.
//     No input makes it panic or loop.
//   - Decoded values equal encoding/json's: strings (escapes, \uXXXX with
//     surrogate pairs; an unpaired surrogate and each byte of invalid UTF-8
//     become U+FFFD exactly as encoding/json replaces them), numbers, bools,
//     and raw spans. The fuzz tests pin this against encoding/json.
//
// # Differences from encoding/json, by design
//
//   - Keys match exactly (encoding/json matches struct fields case-
//     insensitively).
//   - Duplicate keys: Object yields every member in document order,
//     duplicates included. Code that assigns on each key therefore keeps the
//     last value, as encoding/json does; code that wants the first occurrence
//     can keep the first. A repeated object-valued key is not merged with the
//     earlier one (encoding/json merges into a struct field): the last one
//     wins whole.
//   - Numbers saturate instead of failing: [Decoder.Int] clamps to the int64
//     range and truncates a fraction or exponent toward zero ("1e3" is 1000,
//     "2.9" is 2); [Decoder.Float] clamps to ±math.MaxFloat64 and never
//     returns Inf or NaN.
//
// # Limits
//
// Nesting depth is at most MaxDepth (10,000, the same as encoding/json).
// Slices returned by Object (keys), StrBytes and Raw point into the input
// (valid while it is unchanged) or into the Decoder's scratch space (valid
// until the next Reset); copy them to keep them longer. Strings from Str
// are copies; from UnsafeStr they may share the input. Input handed over
// for keeps ([Decoder.ResetOwned]) is different: long strings share it
// and are decoded in place, overwriting it, and [InPlace] rebuilds what
// was overwritten. A Decoder is not
// safe for concurrent use; reuse one (a parser field) to keep its scratch
// space. The zero Decoder is ready for Reset.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is the deepest nesting of arrays and objects a Decoder reads or
// skips; deeper input fails with ErrTooDeep.
const MaxDepth = 10000

// Sentinel errors, matched with errors.Is against a Decoder's error.
var (
	// ErrSyntax: the input is not JSON where it was read.
	ErrSyntax = errors.New("jsonscan: syntax error")
	// ErrUnexpectedEnd: the input ended inside a value.
	ErrUnexpectedEnd = errors.New("jsonscan: unexpected end of input")
	// ErrTooDeep: arrays and objects nest deeper than MaxDepth.
	ErrTooDeep = errors.New("jsonscan: nesting too deep")
)

// Error is the error a Decoder reports.
type Error struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Err is ErrSyntax, ErrUnexpectedEnd or ErrTooDeep.
	Err error
	// Detail says what was wrong, e.g. "invalid escape".
	Detail string
}

// Error implements error.
func (e *Error) Error() string {
	s := e.Err.Error() + " at offset " + strconv.Itoa(e.Offset)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// Kind is the type of a JSON value, as told by its first byte.
type Kind uint8

// The kinds of JSON values.
const (
	// Invalid: no value (end of input, an error) or a byte no JSON value
	// starts with.
	Invalid Kind = iota
	// Null: null.
	Null
	// Bool: true or false.
	Bool
	// Number: a JSON number.
	Number
	// String: a JSON string.
	String
	// Array: a JSON array.
	Array
	// Object: a JSON object.
	Object
)

var kindNames = [...]string{"invalid", "null", "bool", "number", "string", "array", "object"}

// String returns the kind's name, such as "object".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Decoder reads one JSON value held in memory. The zero Decoder reads
// nothing; Reset gives it input.
type Decoder struct {
	buf   []byte
	pos   int
	depth int  // containers open: entered by Object/Array or being skipped
	utf8  bool // buf is known to be valid UTF-8 (ResetUTF8)
	// borrowed: inputs are reused once decoded (SetBorrowed), so no
	// value returned to keep may point into them.
	borrowed bool
	// owned: the input is handed over for keeps (ResetOwned); inPlace
	// records the strings decoded in place in it.
	owned   bool
	inPlace InPlace
	err     error
	scratch []byte // decoded escaped strings; append-only until Reset
	// objs records, for each open container, whether it is an object (1)
	// or an array (0), so that mismatched brackets are caught.
	objs [MaxDepth/64 + 1]uint64
}

// maxKeptScratch bounds the scratch space a Decoder keeps across Reset.
const maxKeptScratch = 64 << 10

// Reset makes d read data, forgetting any previous input and error. data
// must not change while d reads it.
func (d *Decoder) Reset(data []byte) {
	d.buf = data
	d.pos = 0
	d.depth = 0
	d.utf8 = false
	d.owned = false
	d.inPlace = d.inPlace[:0]
	d.err = nil
	if cap(d.scratch) > maxKeptScratch {
		d.scratch = nil
	}
	d.scratch = d.scratch[:0]
}

// ResetUTF8 is Reset for data the caller knows to be valid UTF-8 (for
// example, checked by utf8.Valid on another goroutine): the strings d
// decodes are then not checked for invalid UTF-8 again, which saves a
// pass over every string holding a byte ≥ 0x80. Decoded values are the
// same as after Reset. Data that is not valid UTF-8 decodes to strings
// that may not be.
func (d *Decoder) ResetUTF8(data []byte) {
	d.Reset(data)
	d.utf8 = true
}

// ResetValid is ResetUTF8 when validUTF8 is true, and Reset otherwise.
func (d *Decoder) ResetValid(data []byte, validUTF8 bool) {
	d.Reset(data)
	d.utf8 = validUTF8
}

// Err returns the first error d met, or nil.
func (d *Decoder) Err() error { return d.err }

// Offset returns how many input bytes d has consumed.
func (d *Decoder) Offset() int { return d.pos }

// Finish returns the first error d met; or, when the top-level value has
// been read (or skipped), an error if anything but whitespace follows it.
func (d *Decoder) Finish() error {
	if d.err != nil {
		return d.err
	}
	d.ws()
	if d.pos < len(d.buf) {
		return d.fail(ErrSyntax, "data after the value")
	}
	return nil
}

func (d *Decoder) fail(kind error, detail string) error {
	if d.err == nil {
		d.err = &Error{Offset: d.pos, Err: kind, Detail: detail}
	}
	return d.err
}

// ws skips whitespace.
func (d *Decoder) ws() {
	for d.pos < len(d.buf) {
		switch d.buf[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// Kind reports the kind of the next value without consuming it. It
// returns Invalid at the end of input, after an error, and for a byte no
// JSON value starts with.
func (d *Decoder) Kind() Kind {
	if d.err != nil {
		return Invalid
	}
	d.ws()
	if d.pos >= len(d.buf) {
		return Invalid
	}
	return kindOf[d.buf[d.pos]]
}

var kindOf = func() (t [256]Kind) {
	t['n'] = Null
	t['t'], t['f'] = Bool, Bool
	t['-'] = Number
	for c := '0'; c <= '9'; c++ {
		t[c] = Number
	}
	t['"'] = String
	t['['] = Array
	t['{'] = Object
	return t
}()

// next prepares to read a value: it skips whitespace and returns its
// kind. At the end of input it records ErrUnexpectedEnd.
func (d *Decoder) next() Kind {
	if d.err != nil {
		return Invalid
	}
	d.ws()
	if d.pos >= len(d.buf) {
		d.fail(ErrUnexpectedEnd, "expected a value")
		return Invalid
	}
	k := kindOf[d.buf[d.pos]]
	if k == Invalid {
		d.fail(ErrSyntax, "invalid character at the start of a value")
	}
	return k
}

// push records an opened container.
func (d *Decoder) push(obj bool) bool {
	if d.depth >= MaxDepth {
		d.fail(ErrTooDeep, "")
		return false
	}
	w, b := d.depth>>6, uint(d.depth&63)
	if obj {
		d.objs[w] |= 1 << b
	} else {
		d.objs[w] &^= 1 << b
	}
	d.depth++
	return true
}

// pop closes the innermost container with closing bracket c.
func (d *Decoder) pop(c byte) bool {
	d.depth--
	w, b := d.depth>>6, uint(d.depth&63)
	if (d.objs[w]>>b&1 == 1) != (c == '}') {
		d.fail(ErrSyntax, "mismatched bracket")
		return false
	}
	return true
}

// Object iterates the members of the next value, which it consumes. For
// each member it yields the key; the loop body may read the member's value
// with any reader, and a value the body does not read is skipped. Breaking
// out of the loop skips the rest of the object. A value that is not an
// object is skipped and yields nothing (check Kind first to tell). Keys are
// exact, in document order, duplicates included; see the package doc. The
// key slice is valid until Reset.
func (d *Decoder) Object() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) { d.object(yield) }
}

func (d *Decoder) object(yield func([]byte) bool) {
	level, items := d.enter(Object, '}')
	if !items {
		return
	}
	for {
		if d.pos >= len(d.buf) {
			d.fail(ErrUnexpectedEnd, "expected a key")
			return
		}
		if d.buf[d.pos] != '"' {
			d.fail(ErrSyntax, "expected a key")
			return
		}
		key, ok := d.strBytes()
		if !ok {
			return
		}
		d.ws()
		if d.pos >= len(d.buf) {
			d.fail(ErrUnexpectedEnd, "expected ':'")
			return
		}
		if d.buf[d.pos] != ':' {
			d.fail(ErrSyntax, "expected ':'")
			return
		}
		d.pos++
		d.ws()
		vstart := d.pos
		if !d.itemDone(level, vstart, yield(key), '}') {
			return
		}
	}
}

// enter consumes the opening bracket of the next value when it is a
// container of kind k (a value of another kind is skipped), and reports
// the container's level and whether it has items to read (an empty one is
// consumed whole).
func (d *Decoder) enter(k Kind, closer byte) (level int, items bool) {
	switch d.next() {
	case k:
	case Invalid:
		return 0, false
	default:
		d.Skip()
		return 0, false
	}
	if !d.push(k == Object) {
		return 0, false
	}
	d.pos++ // '{' or '['
	level = d.depth
	d.ws()
	if d.pos < len(d.buf) && d.buf[d.pos] == closer {
		d.pos++
		d.depth--
		return level, false
	}
	return level, true
}

// itemDone ends an item of the container at level whose value started at
// vstart, once the loop body has run and returned more: it skips the rest
// of the container when more is false, skips a value the body did not
// read, and reads the separator. It reports whether another item follows.
func (d *Decoder) itemDone(level, vstart int, more bool, closer byte) bool {
	if !more {
		d.closeTo(level)
		return false
	}
	if d.err != nil {
		return false
	}
	if d.pos == vstart {
		d.Skip()
		if d.err != nil {
			return false
		}
	}
	return d.sep(level, closer)
}

// sep reads what follows a member or element of the container at level:
// a comma (then true, positioned at the next item) or the closing bracket
// (then false, the container consumed).
func (d *Decoder) sep(level int, closer byte) bool {
	if d.depth != level { // cannot happen through the API; be safe
		d.closeTo(level)
		return false
	}
	d.ws()
	if d.pos >= len(d.buf) {
		d.fail(ErrUnexpectedEnd, "expected ',' or a closing bracket")
		return false
	}
	switch c := d.buf[d.pos]; c {
	case ',':
		d.pos++
		d.ws()
		return true
	case '}', ']':
		if c != closer {
			d.fail(ErrSyntax, "mismatched bracket")
			return false
		}
		d.pos++
		d.depth--
		return false
	}
	d.fail(ErrSyntax, "expected ',' or a closing bracket")
	return false
}

// Array iterates the elements of the next value, which it consumes,
// yielding each element's index; the loop body may read the element with
// any reader, and an element it does not read is skipped. Breaking out of
// the loop skips the rest of the array. A value that is not an array is
// skipped and yields nothing.
func (d *Decoder) Array() iter.Seq[int] {
	return func(yield func(int) bool) { d.array(yield) }
}

func (d *Decoder) array(yield func(int) bool) {
	level, items := d.enter(Array, ']')
	if !items {
		return
	}
	for i := 0; ; i++ {
		vstart := d.pos
		if !d.itemDone(level, vstart, yield(i), ']') {
			return
		}
	}
}

// closeTo skips forward until the container at level (and every container
// inside it) is closed.
func (d *Decoder) closeTo(level int) {
	if d.err != nil || d.depth < level {
		return
	}
	d.scan(level - 1)
}

// Skip consumes the next value without decoding it.
func (d *Decoder) Skip() {
	switch d.next() {
	case Invalid:
	case Object, Array:
		d.scan(d.depth)
	case String:
		d.pos++
		d.skipStr()
	case Number:
		d.number()
	case Null:
		d.literal("null")
	case Bool:
		if d.buf[d.pos] == 't' {
			d.literal("true")
		} else {
			d.literal("false")
		}
	}
}

// SetBorrowed sets whether the inputs d is given are borrowed: reused by
// their owner once d is done with them. UnsafeStr and Raw then return
// copies, never memory of the input; StrBytes still returns a view, valid
// until Reset. The setting outlasts Reset.
func (d *Decoder) SetBorrowed(borrowed bool) { d.borrowed = borrowed }

// Raw consumes the next value and returns its bytes, without surrounding
// whitespace. The slice points into the input, or is a copy when the
// input is borrowed (SetBorrowed) — unless it is owned (ResetOwned) and
// the value is long (as strings decoded in place are). Skipped parts are
// not validated (see the package doc). It returns nil after an error.
func (d *Decoder) Raw() []byte {
	b := d.raw()
	if d.borrowed && b != nil && !(d.owned && d.keepable(len(b))) {
		return bytes.Clone(b)
	}
	return b
}

// raw is Raw returning a view of the input, always.
func (d *Decoder) raw() []byte {
	if d.next() == Invalid {
		return nil
	}
	start := d.pos
	d.Skip()
	if d.err != nil {
		return nil
	}
	return d.buf[start:d.pos:d.pos]
}

// Character classes for scan.
const (
	cOther = iota // bytes that may occur between tokens: digits, letters of literals, ',', ':', '.', '+', '-', whitespace
	cQuote
	cOpen
	cClose
	cBad
)

var scanClass = func() (t [256]uint8) {
	for i := range t {
		t[i] = cBad
	}
	for _, c := range []byte("0123456789-+.eEtrufalsn,: \t\r\n") {
		t[c] = cOther
	}
	t['"'] = cQuote
	t['{'], t['['] = cOpen, cOpen
	t['}'], t[']'] = cClose, cClose
	return t
}()

// scan moves forward, skipping strings and tracking brackets, until the
// depth returns to base. It starts at a token boundary.
func (d *Decoder) scan(base int) {
	buf := d.buf
	i := d.pos
	for i < len(buf) {
		switch scanClass[buf[i]] {
		case cOther:
			i++
		case cQuote:
			d.pos = i + 1
			d.skipStr()
			if d.err != nil {
				return
			}
			i = d.pos
		case cOpen:
			d.pos = i
			if !d.push(buf[i] == '{') {
				return
			}
			i++
		case cClose:
			d.pos = i
			if d.depth <= base || !d.pop(buf[i]) {
				if d.err == nil {
					d.fail(ErrSyntax, "unexpected closing bracket")
				}
				return
			}
			i++
			if d.depth == base {
				d.pos = i
				return
			}
		default:
			d.pos = i
			d.fail(ErrSyntax, "invalid character")
			return
		}
	}
	d.pos = i
	d.fail(ErrUnexpectedEnd, "unclosed array or object")
}

// skipStr moves past the closing quote of the string whose opening quote
// is just before d.pos. Only the end is found; the contents are not
// checked.
func (d *Decoder) skipStr() {
	end := strEnd(d.buf, d.pos, d.pos)
	if end < 0 {
		d.pos = len(d.buf)
		d.fail(ErrUnexpectedEnd, "unterminated string")
		return
	}
	d.pos = end + 1
}

// strEnd returns the index of the quote that closes the string whose
// contents start at start, searching from i (not inside an escape), or -1.
func strEnd(buf []byte, start, i int) int {
	// Most strings (keys, ids, short values) end within a few words: look
	// for a quote or a backslash 8 bytes at a time before falling back to
	// IndexByte, whose call costs more than a short string.
	for lim := min(len(buf), i+64); i+8 <= lim; {
		w := binary.LittleEndian.Uint64(buf[i : i+8])
		q, bs := w^(lsb*'"'), w^(lsb*'\\')
		m := ((q-lsb)&^q | (bs-lsb)&^bs) & msb // lowest flag exact
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		if buf[i] == '"' {
			return i
		}
		i += 2 // the escape's second byte is never its end
	}
	for i < len(buf) {
		j := bytes.IndexByte(buf[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		// The quote is escaped when an odd run of backslashes precedes
		// it. A run starts at an escape boundary, so its parity decides.
		k := q - 1
		for k >= start && buf[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 {
			return q
		}
		i = q + 1
	}
	return -1
}

// literal consumes the literal lit (null, true, false) or fails.
func (d *Decoder) literal(lit string) bool {
	if len(d.buf)-d.pos < len(lit) {
		if string(d.buf[d.pos:]) == lit[:len(d.buf)-d.pos] {
			d.pos = len(d.buf)
			d.fail(ErrUnexpectedEnd, "in literal")
			return false
		}
		d.fail(ErrSyntax, "invalid literal")
		return false
	}
	if string(d.buf[d.pos:d.pos+len(lit)]) != lit {
		d.fail(ErrSyntax, "invalid literal")
		return false
	}
	d.pos += len(lit)
	return true
}

// Null consumes the next value when it is null and reports whether it was.
// Any other value is left unread.
func (d *Decoder) Null() bool {
	if d.Kind() != Null {
		return false
	}
	return d.literal("null")
}

// BoolOK consumes the next value and returns it when it is true or false;
// otherwise it returns false, false.
func (d *Decoder) BoolOK() (v, ok bool) {
	if d.next() != Bool {
		d.Skip()
		return false, false
	}
	if d.buf[d.pos] == 't' {
		return true, d.literal("true")
	}
	return false, d.literal("false")
}

// Bool consumes the next value and returns it when it is true or false,
// and false otherwise.
func (d *Decoder) Bool() bool {
	v, _ := d.BoolOK()
	return v
}

// LooseBool consumes the next value and reports whether it is true or the
// string "true". Use it for fields some CLI versions print as strings.
func (d *Decoder) LooseBool() bool {
	if d.Kind() == String {
		b, ok := d.StrBytes()
		return ok && string(b) == "true"
	}
	return d.Bool()
}

// StrBytes consumes the next value and returns the decoded bytes when it
// is a string. The slice points into the input when the string has no
// escapes and is valid UTF-8, else into d's scratch space; either way it
// stays valid until Reset. A value of another kind is skipped and yields
// nil, false.
func (d *Decoder) StrBytes() ([]byte, bool) {
	if d.next() != String {
		d.Skip()
		return nil, false
	}
	return d.strBytes()
}

// StrOK consumes the next value and returns it when it is a string.
func (d *Decoder) StrOK() (string, bool) {
	if d.next() != String {
		d.Skip()
		return "", false
	}
	if d.owned {
		if s, done := d.strOwned(); done {
			return s, true
		}
	}
	b, isNew, ok := d.str(true)
	if !ok || len(b) == 0 {
		return "", ok
	}
	if isNew { // nobody else holds b
		return unsafe.String(&b[0], len(b)), true
	}
	return string(b), true
}

// StrOrRaw consumes the next value and returns it as text: a string's
// value, "" for null, and the JSON text of any other value (as Raw, not
// validated). Use it for fields that hold a message as a string in one CLI
// version and as an object in another.
func (d *Decoder) StrOrRaw() string {
	switch d.Kind() {
	case String:
		return d.Str()
	case Null:
		d.Null()
		return ""
	}
	return string(d.raw())
}

// UnsafeStr is StrOK without the copy for strings that have no escapes:
// such a string shares the input's memory (one with escapes is decoded
// into a new buffer, as StrOK does). It is for input that is never
// modified once read — such as a line the caller keeps as Event.Raw
// anyway — where it saves a copy of every text. Modifying the input
// afterwards changes the returned string, which breaks Go's guarantees.
// When the input is borrowed (SetBorrowed) or owned (ResetOwned),
// UnsafeStr is StrOK.
func (d *Decoder) UnsafeStr() (string, bool) {
	if d.borrowed || d.owned {
		return d.StrOK()
	}
	if d.next() != String {
		d.Skip()
		return "", false
	}
	b, _, ok := d.str(true)
	if !ok || len(b) == 0 {
		return "", ok
	}
	return unsafe.String(&b[0], len(b)), true
}

// Str consumes the next value and returns it when it is a string, and ""
// otherwise.
func (d *Decoder) Str() string {
	s, _ := d.StrOK()
	return s
}

// strBytes reads the string whose opening quote is at d.pos into a view
// (see StrBytes).
func (d *Decoder) strBytes() ([]byte, bool) {
	b, _, ok := d.str(false)
	return b, ok
}

// str reads the string whose opening quote is at d.pos. A string without
// escapes is returned as a slice of the input; one with escapes is decoded
// into a new buffer when fresh (then isNew is true), else into the scratch
// space.
func (d *Decoder) str(fresh bool) (b []byte, isNew, ok bool) {
	buf := d.buf
	start := d.pos + 1
	i, high := plainEnd(buf, start)
	if i >= len(buf) {
		d.pos = len(buf)
		d.fail(ErrUnexpectedEnd, "unterminated string")
		return nil, false, false
	}
	n, end := i-start, i
	switch buf[i] {
	case '"':
		if s := buf[start:i:i]; !high || d.utf8 || utf8.Valid(s) {
			d.pos = i + 1
			return s, false, true
		}
		n = 0 // invalid UTF-8 to replace
	case '\\':
		if !fresh || len(buf)-i <= onePassMax {
			if b, isNew, ok, done := d.strOnePass(fresh, start, i, high); done {
				return b, isNew, ok
			}
		}
		if end = strEnd(buf, start, i); end < 0 {
			d.pos = len(buf)
			d.fail(ErrUnexpectedEnd, "unterminated string")
			return nil, false, false
		}
	default:
		d.pos = i
		d.fail(ErrSyntax, "control character in string")
		return nil, false, false
	}
	s := buf[start:end:end]
	d.pos = start
	var dst []byte
	if fresh {
		dst = make([]byte, 0, len(s))
	} else {
		dst = d.scratch
	}
	out := len(dst)
	dst, ok = d.unquote(dst, s, n, high)
	if !ok {
		return nil, false, false
	}
	if !fresh {
		d.scratch = dst
	}
	return dst[out:len(dst):len(dst)], fresh, true
}

// onePassMax is the longest rest of the input for which Str decodes an
// escaped string in one pass through the scratch space (then copies it);
// beyond it, it finds the end first and decodes into a buffer of the exact
// size, so that a huge string costs its size once, not twice.
const onePassMax = 64 << 10

// strOnePass decodes the string whose contents start at start, and whose
// first escape is at i, in one pass into the scratch space: 64 bytes at a
// time while at least blockNeed are left (blockPass), then 8, runs copied
// and escapes decoded, up to the closing quote. It returns
// done false, having consumed nothing, when the string needs the exact
// path: it holds a control character or invalid UTF-8, or has no end.
func (d *Decoder) strOnePass(fresh bool, start, i int, high bool) (b []byte, isNew, ok, done bool) {
	buf := d.buf
	if high && !d.utf8 && !utf8.Valid(buf[start:i]) {
		return nil, false, false, false
	}
	out := len(d.scratch)
	dst := append(d.scratch, buf[start:i]...)
	// hi flags bytes ≥ 0x80 as stops too, unless the line is known to be
	// valid UTF-8: their runes are checked where they stand, so that the
	// string is read once, not decoded and then validated.
	var hi uint64
	if !d.utf8 {
		hi = msb
	}
	r := i
	for {
		if r+blockNeed <= len(buf) {
			var end bool
			if dst, r, end = blockPass(dst, buf, r, hi); end {
				break // buf[r] is the closing quote
			}
		}
		if cap(dst)-len(dst) < 8 {
			dst = slices.Grow(dst, 64+len(dst)-out)
		}
		if r+8 <= len(buf) {
			w := binary.LittleEndian.Uint64(buf[r:])
			q, bs := w^(lsb*'"'), w^(lsb*'\\')
			m := ((q-lsb)&^q | (bs-lsb)&^bs | (w-lsb*0x20)&^w | w&hi) & msb
			if m == 0 {
				dst = binary.LittleEndian.AppendUint64(dst, w)
				r += 8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			dst = binary.LittleEndian.AppendUint64(dst, w)[:len(dst)+k]
			r += k
		} else if r >= len(buf) {
			return nil, false, false, false
		} else if c := buf[r]; c >= 0x20 && c != '"' && c != '\\' && (c < 0x80 || hi == 0) {
			dst = append(dst, c)
			r++
			continue
		}
		c := buf[r]
		if c >= 0x80 {
			n := runeLen(buf[r:])
			if n == 0 {
				return nil, false, false, false // invalid UTF-8
			}
			dst = append(dst, buf[r:r+n]...)
			r += n
			continue
		}
		if c == '"' {
			break
		}
		if c != '\\' {
			return nil, false, false, false // a control character
		}
		if r+1 < len(buf) {
			if e := simpleEscape[buf[r+1]]; e != 0 {
				dst = append(dst, e)
				r += 2
				continue
			}
		}
		d.pos = start
		if dst, r, ok = d.escape(dst, buf[start:], r-start); !ok {
			return nil, false, false, true
		}
		r += start
	}
	s := dst[out:]
	d.pos = r + 1
	if !fresh {
		d.scratch = dst
		return s[:len(s):len(s)], false, true, true
	}
	b = make([]byte, len(s))
	copy(b, s)
	d.scratch = dst[:out]
	return b, true, true, true
}

// blockNeed is how much input blockPass needs left to read a block: the
// block, and the 16 bytes a run copied from the block's last byte reads.
const blockNeed = 80

// lo7 masks each byte's low 7 bits.
const lo7 = 0x7f7f7f7f7f7f7f7f

// blockPass decodes the string contents from r on in blocks of 64 bytes:
// it finds every stop of a block (a quote, backslash, control character
// or, when hi is msb, byte ≥ 0x80) at once, as a bit mask (stopMask), then handles
// them in turn, copying the runs between them. Branches then depend on
// what the stops are, which is mostly the same, rather than on where they
// fall. It returns with dst holding the contents decoded up to r', and
// end true when buf[r'] is the closing quote; otherwise buf[r'] is a stop
// that it leaves to the caller (an escape other than the two-byte ones, a
// control character, invalid UTF-8), or fewer than blockNeed bytes are
// left from r' on.
func blockPass(dst, buf []byte, r int, hi uint64) ([]byte, int, bool) {
	s := r   // the start of the run to copy next (s ≥ r at each block's start)
	ign := r // stops before ign were consumed by an escape or a rune
	for r+blockNeed <= len(buf) {
		if cap(dst)-len(dst) < 96 {
			dst = slices.Grow(dst, len(dst)+96)
		}
		// The block and the 16 bytes after it, and the 96 bytes of dst
		// the block's output (at most 64 bytes, as escapes only shrink,
		// and 16 more that a copy may write past it) goes to: fixed-size
		// views, so that runs ending at an escape are copied without
		// slice arithmetic.
		blk := (*[blockNeed]byte)(buf[r : r+blockNeed])
		at := len(dst)
		m := stopMask(blk, hi)
		if ign > r {
			m &= ^uint64(0) << (ign - r)
		}
		o, from, ig, b := decodeBlock((*[96]byte)(dst[at:at+96]), blk, m, s-r)
		s = r + from
		if ig > 0 {
			ign = r + ig
		}
		if b < 64 {
			return copyRun(dst[:at+o], buf, s, r+b), r + b, blk[b] == '"'
		}
		dst = dst[:at+o]
		r += 64
	}
	// A rune or escape may reach past r.
	if ign > s {
		dst = copyRun(dst, buf, s, ign)
		s = ign
	}
	return dst, max(s, r), false
}

// decodeBlock decodes a block of blockPass, blk, whose stops not yet
// consumed are m, into out, the run from from on not yet copied. It
// returns the length o of its output, the start of the run not yet copied
// (from 64 on when none is left), where the last escape or rune it
// consumed ends (0 for none), and the position b of a stop it leaves to
// the caller (64 for none): the closing quote, a control character, an
// escape other than the two-byte ones, or invalid UTF-8. A block of its
// own, with few values live, it keeps them in registers.
func decodeBlock(out *[96]byte, blk *[blockNeed]byte, m uint64, from int) (o, next, ign, b int) {
	_, _ = *out, *blk // one nil check each, not one for each read
	for m != 0 {
		b := bits.TrailingZeros64(m) & 63
		m &= m - 1
		switch c := blk[b]; {
		case c == '\\':
			e := simpleEscape[blk[b+1]]
			if e == 0 {
				return o, from, ign, b
			}
			o = blockRun(out, o, blk, from, b)
			out[o] = e
			o++
			from = b + 2
			ign = from
			m &^= 2 << b
		case c >= 0x80:
			// The common runes of two and three bytes are checked here
			// (lead bytes whose continuation may be any of 80-BF, as
			// utf8.Valid judges); runeLen checks the others.
			// The rune's continuation bytes are stops too, the next
			// ones in m (or past the block): they are cleared with it.
			if c1, c2 := blk[b+1], blk[b+2]; c >= 0xC2 && c < 0xE0 && c1&0xC0 == 0x80 {
				ign = b + 2
				m &= m - 1
			} else if c >= 0xE1 && c < 0xF0 && c != 0xED && c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
				ign = b + 3
				m &= m - 1
				m &= m - 1
			} else {
				k := runeLen(blk[b:])
				if k == 0 {
					return o, from, ign, b
				}
				ign = b + k
				// k is 2 to 4: k&7 spares the shift its checks.
				m &^= (1<<(k&7) - 1) << b
			}
		default: // the closing quote or a control character
			return o, from, ign, b
		}
	}
	if from < 64 { // the run up to the block's end
		o = blockRun(out, o, blk, from, 64)
		from = 64
	}
	return o, from, ign, 64
}

// errRun is what blockPass panics with if a run it copies were ever to
// fall outside its block (it cannot: see there).
var errRun = errors.New("jsonscan: run outside its block")

// blockRun copies the run blk[from:to] of a block to out[o:] and returns
// o plus its length. A block's output is at most 64 bytes (escapes only
// shrink), so with from ≤ to ≤ 64 and o+to-from ≤ 64 every read of copyIn
// stays within blk's 80 bytes and every write within out's 96; the check
// makes sure of it, and the copy then needs no bounds checks of its own.
func blockRun(out *[96]byte, o int, blk *[blockNeed]byte, from, to int) int {
	n := to - from
	if uint(from) > uint(to) || to > 64 || uint(o+n) > 64 {
		panic(errRun)
	}
	copyIn(unsafe.Add(unsafe.Pointer(out), o), unsafe.Add(unsafe.Pointer(blk), from), n)
	return o + n
}

// copyIn copies the n bytes at src to dst, 16 at a time, the first 16
// whatever n is (most runs are shorter): it may read and write up to 16
// bytes past them (see blockPass and blockRun).
func copyIn(dst, src unsafe.Pointer, n int) {
	*(*[16]byte)(dst) = *(*[16]byte)(src)
	for k := 16; k < n; k += 16 {
		*(*[16]byte)(unsafe.Add(dst, k)) = *(*[16]byte)(unsafe.Add(src, k))
	}
}

// stopMaskGo is stopMask in portable Go, 8 bytes at a time (stops8); on
// amd64, stopMask is SSE2 (stops_amd64.s), 16 bytes at a time.
func stopMaskGo(blk *[blockNeed]byte, hi uint64) uint64 {
	return stops8(blk[0:8], hi) | stops8(blk[8:16], hi)<<8 |
		stops8(blk[16:24], hi)<<16 | stops8(blk[24:32], hi)<<24 |
		stops8(blk[32:40], hi)<<32 | stops8(blk[40:48], hi)<<40 |
		stops8(blk[48:56], hi)<<48 | stops8(blk[56:64], hi)<<56
}

// stops8 returns a bit for each byte of b that is a quote, a backslash,
// a control character or, when hi is msb, ≥ 0x80: bit i for b[i].
func stops8(b []byte, hi uint64) uint64 {
	w := binary.LittleEndian.Uint64(b)
	w7 := w & lo7
	// The high bit of each byte of ok is set when the byte is not a
	// quote, not a backslash and not < 0x20, or ≥ 0x80 (exact per byte:
	// no carries cross bytes).
	ok := ((w7^(lsb*'"'))+lo7)&((w7^(lsb*'\\'))+lo7)&(w7+lsb*0x60) | w
	st := (^ok | w&hi) & msb
	// Gather the eight high bits into the top byte, bit i from byte i.
	return st >> 7 * 0x0102040810204080 >> 56
}

// copyRun appends buf[s:p] to dst, 8 bytes at a time, starting with 16
// whatever p is: dst must have room for the run and 16 bytes more, buf 16
// bytes from s on.
func copyRun(dst, buf []byte, s, p int) []byte {
	n := len(dst)
	w := dst[n:cap(dst)]
	src := buf[s:]
	binary.LittleEndian.PutUint64(w, binary.LittleEndian.Uint64(src))
	binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(src[8:]))
	for k := 16; k < p-s; k += 8 {
		binary.LittleEndian.PutUint64(w[k:], binary.LittleEndian.Uint64(src[k:]))
	}
	return dst[:n+p-s]
}

// runeLen returns the length of the valid UTF-8 encoding of a rune other
// than ASCII at the start of p, or 0 when there is none (as utf8.Valid
// judges: no overlong forms, surrogates or runes above U+10FFFF).
func runeLen(p []byte) int {
	c := p[0]
	switch {
	case c < 0xC2 || c > 0xF4:
		return 0
	case c < 0xE0:
		if len(p) < 2 || p[1]&0xC0 != 0x80 {
			return 0
		}
		return 2
	case c < 0xF0:
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
		if len(p) < 3 || p[1] < lo || p[1] > hi || p[2]&0xC0 != 0x80 {
			return 0
		}
		return 3
	default:
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
		if len(p) < 4 || p[1] < lo || p[1] > hi || p[2]&0xC0 != 0x80 || p[3]&0xC0 != 0x80 {
			return 0
		}
		return 4
	}
}

// plainEnd returns the index of the first quote, backslash or control
// character in buf from i on (or len(buf)), and whether a byte ≥ 0x80
// comes before it.
func plainEnd(buf []byte, i int) (int, bool) {
	var high uint64
	for ; i+8 <= len(buf); i += 8 {
		w := binary.LittleEndian.Uint64(buf[i : i+8])
		q, bs := w^(lsb*'"'), w^(lsb*'\\')
		// A zero byte in q or bs, or a byte < 0x20. Borrows can flag
		// bytes above a flagged byte, never below: the lowest is exact.
		if m := ((q-lsb)&^q | (bs-lsb)&^bs | (w-lsb*0x20)&^w) & msb; m != 0 {
			k := bits.TrailingZeros64(m) / 8
			high |= w & (1<<(8*k&63) - 1) // 8*k < 64: &63 spares the shift its checks
			return i + k, high&msb != 0
		}
		high |= w
	}
	for ; i < len(buf); i++ {
		c := buf[i]
		if c < 0x20 || c == '"' || c == '\\' {
			break
		}
		high |= uint64(c)
	}
	return i, high&msb != 0
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainPrefix returns the length of the longest prefix of s that holds
// only printable ASCII other than the backslash: bytes a JSON string holds
// as they are.
func plainPrefix(s []byte) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		bs := w ^ (lsb * '\\')
		// Flags a byte ≥ 0x80, a byte < 0x20, or a zero byte in bs (a
		// backslash). Borrows can flag bytes above a flagged byte, never
		// below one: the lowest flag is exact.
		if m := (w | (w - lsb*0x20) | (bs-lsb)&^bs) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '\\' {
			return i
		}
	}
	return i
}

// unquote appends the decoded contents s of the string that starts at
// d.pos to b; its first n bytes hold no quote, backslash or control
// character (they may hold invalid UTF-8). It checks s as
// encoding/json does and replaces invalid UTF-8 and unpaired surrogates
// with U+FFFD as encoding/json does.
func (d *Decoder) unquote(b, s []byte, n int, high bool) ([]byte, bool) {
	b = slices.Grow(b, len(s))
	start := len(b)
	b = append(b, s[:n]...)
	// Fast path: copy the runs between escapes whole, then check the UTF-8
	// of the result. Escapes only ever produce whole runes, so the result
	// is valid exactly when the raw runs are; when it is not, or a control
	// character turns up, the exact path below takes over.
	out, ctl, h, ok := d.unescapeRuns(b, s, n)
	if !ok {
		return nil, false
	}
	if !ctl && (!high && !h || d.utf8 || utf8.Valid(out[start:])) {
		d.pos += len(s) + 1
		return out, true
	}
	// The exact path starts over: the plain prefix may hold invalid UTF-8.
	b = out[:start]
	base := d.pos
	for r := 0; r < len(s); {
		if p := plainPrefix(s[r:]); p > 0 {
			b = append(b, s[r:r+p]...)
			r += p
			continue
		}
		c := s[r]
		switch {
		case c == '\\':
			var ok bool
			if b, r, ok = d.escape(b, s, r); !ok {
				return nil, false
			}
		case c < 0x20:
			d.pos = base + r
			d.fail(ErrSyntax, "control character in string")
			return nil, false
		default: // c >= 0x80
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, s[r:r+size]...)
			}
			r += size
		}
	}
	d.pos = base + len(s) + 1
	return b, true
}

// unescapeRuns appends s[n:] to b, decoding escapes and copying the runs
// between them as they are, 8 bytes at a time. b must have room for
// len(s)-n more bytes (the decoded form is never longer). It stops early
// at a control character (ctl). high reports a byte ≥ 0x80.
func (d *Decoder) unescapeRuns(b, s []byte, n int) (_ []byte, ctl, high, ok bool) {
	var h uint64
	r := n
	for r < len(s) {
		if r+8 <= len(s) {
			w := binary.LittleEndian.Uint64(s[r:])
			bs := w ^ (lsb * '\\')
			m := ((bs-lsb)&^bs | (w-lsb*0x20)&^w) & msb
			h |= w
			if m == 0 {
				b = binary.LittleEndian.AppendUint64(b, w)
				r += 8
				continue
			}
			// Copy the bytes before the special one (the 8-byte store
			// stays within capacity: the output never outgrows s).
			k := bits.TrailingZeros64(m) / 8
			b = binary.LittleEndian.AppendUint64(b, w)[:len(b)+k]
			r += k
		} else if c := s[r]; c != '\\' && c >= 0x20 {
			h |= uint64(c)
			b = append(b, c)
			r++
			continue
		}
		if s[r] != '\\' {
			return b, true, h&msb != 0, true
		}
		if r+1 < len(s) {
			if c := simpleEscape[s[r+1]]; c != 0 {
				b = append(b, c)
				r += 2
				continue
			}
		}
		if b, r, ok = d.escape(b, s, r); !ok {
			return nil, false, false, false
		}
	}
	return b, false, h&msb != 0, true
}

// simpleEscape maps the byte after a backslash to what the two-byte escape
// stands for; 0 for 'u' and for invalid escapes.
var simpleEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape decodes the escape at s[r] (a backslash) of the string whose
// contents start at d.pos, appending it to b, and returns the index after
// it.
func (d *Decoder) escape(b, s []byte, r int) ([]byte, int, bool) {
	if r+1 >= len(s) {
		d.pos += r
		d.fail(ErrSyntax, "invalid escape")
		return nil, 0, false
	}
	switch s[r+1] {
	case '"', '\\', '/':
		return append(b, s[r+1]), r + 2, true
	case 'b':
		return append(b, '\b'), r + 2, true
	case 'f':
		return append(b, '\f'), r + 2, true
	case 'n':
		return append(b, '\n'), r + 2, true
	case 'r':
		return append(b, '\r'), r + 2, true
	case 't':
		return append(b, '\t'), r + 2, true
	case 'u':
		rr := hex4(s[r+2:])
		if rr < 0 {
			d.pos += r
			d.fail(ErrSyntax, "invalid \\u escape")
			return nil, 0, false
		}
		r += 6
		if utf16.IsSurrogate(rr) {
			if len(s)-r >= 6 && s[r] == '\\' && s[r+1] == 'u' {
				if rr1 := hex4(s[r+2:]); rr1 >= 0 {
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						return utf8.AppendRune(b, dec), r + 6, true
					}
				}
			}
			rr = utf8.RuneError
		}
		return utf8.AppendRune(b, rr), r, true
	}
	d.pos += r
	d.fail(ErrSyntax, "invalid escape")
	return nil, 0, false
}

// hex4 decodes the 4 hex digits at the start of s, or returns -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// number consumes a number at d.pos, checking its grammar. It returns the
// number's bytes and whether it is an integer (no fraction, no exponent).
func (d *Decoder) number() (num []byte, integer bool) {
	buf := d.buf
	start := d.pos
	i := start
	if i < len(buf) && buf[i] == '-' {
		i++
	}
	switch {
	case i >= len(buf):
		d.pos = i
		d.fail(ErrUnexpectedEnd, "in number")
		return nil, false
	case buf[i] == '0':
		i++
	case '1' <= buf[i] && buf[i] <= '9':
		for i++; i < len(buf) && isDigit(buf[i]); i++ {
		}
	default:
		d.pos = i
		d.fail(ErrSyntax, "invalid number")
		return nil, false
	}
	integer = true
	if i < len(buf) && buf[i] == '.' {
		integer = false
		i++
		if i >= len(buf) || !isDigit(buf[i]) {
			d.pos = i
			d.numFail()
			return nil, false
		}
		for i++; i < len(buf) && isDigit(buf[i]); i++ {
		}
	}
	if i < len(buf) && (buf[i] == 'e' || buf[i] == 'E') {
		integer = false
		i++
		if i < len(buf) && (buf[i] == '+' || buf[i] == '-') {
			i++
		}
		if i >= len(buf) || !isDigit(buf[i]) {
			d.pos = i
			d.numFail()
			return nil, false
		}
		for i++; i < len(buf) && isDigit(buf[i]); i++ {
		}
	}
	d.pos = i
	return buf[start:i], integer
}

func (d *Decoder) numFail() {
	if d.pos >= len(d.buf) {
		d.fail(ErrUnexpectedEnd, "in number")
	} else {
		d.fail(ErrSyntax, "invalid number")
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// IntOK consumes the next value and returns it as an int64 when it is a
// number: an integer exactly, saturated at the int64 range; a number with
// a fraction or exponent truncated toward zero and saturated.
func (d *Decoder) IntOK() (int64, bool) {
	if d.next() != Number {
		d.Skip()
		return 0, false
	}
	num, integer := d.number()
	if num == nil {
		return 0, false
	}
	if !integer {
		f := parseFloat(num)
		switch {
		case f >= math.MaxInt64: // 2^63 and up
			return math.MaxInt64, true
		case f <= math.MinInt64:
			return math.MinInt64, true
		}
		return int64(f), true
	}
	neg := num[0] == '-'
	if neg {
		num = num[1:]
	}
	var u uint64
	for _, c := range num {
		if u > (math.MaxUint64-9)/10 {
			u = math.MaxUint64
			break
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u >= 1<<63 {
			return math.MinInt64, true
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return math.MaxInt64, true
	}
	return int64(u), true
}

// Int consumes the next value and returns it as an int64 (see IntOK), or 0
// when it is not a number.
func (d *Decoder) Int() int64 {
	v, _ := d.IntOK()
	return v
}

// FloatOK consumes the next value and returns it as a float64 when it is a
// number, rounded as strconv.ParseFloat rounds and clamped to
// ±math.MaxFloat64: never Inf or NaN.
func (d *Decoder) FloatOK() (float64, bool) {
	if d.next() != Number {
		d.Skip()
		return 0, false
	}
	num, _ := d.number()
	if num == nil {
		return 0, false
	}
	return parseFloat(num), true
}

// Float consumes the next value and returns it as a float64 (see FloatOK),
// or 0 when it is not a number.
func (d *Decoder) Float() float64 {
	v, _ := d.FloatOK()
	return v
}

// parseFloat parses a number already checked against JSON's grammar.
func parseFloat(num []byte) float64 {
	// The string does not outlive the call: strconv copies it into any
	// error it returns.
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(num), len(num)), 64)
	switch {
	case math.IsInf(f, 1):
		return math.MaxFloat64
	case math.IsInf(f, -1):
		return -math.MaxFloat64
	case math.IsNaN(f): // cannot happen for JSON's grammar
		return 0
	}
	return f
}
