package driver

import (
	"bytes"
	"encoding/json"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// Parser turns one run's stdout into events and decides the run's
// outcome. A new Parser is made for every run (Spec.NewParser); it need
// not be safe for concurrent use.
//
// Most backends do not write one: Lines builds it from the one parser
// shape (a wire type that decodes a line, an apply step and an end step),
// with every way the kit reads output fast. A Parser of a backend's own is
// the escape hatch for output that is not one JSON object per line (a
// document printed over several lines): the kit calls Line on the run's
// goroutine only, one line at a time, in order, with a line whose memory
// the parser may keep (the kit never reuses it), and drops from what it
// returns the Raw the run does not keep (Request.DropRaw, MaxRawBytes).
// Every built-in parser of one JSON object per line is made by Lines;
// the seam stays for the rest: gemini's `-o json` document, acpagent's
// parser that parses nothing, and an outside author's first backend
// (examples/outside-backend's toy parser, on encoding/json).
type Parser interface {
	// Line parses one stdout line (without its newline) and returns the
	// events it yields, in order. The returned slice may be reused by the
	// next call. Line never fails: output it cannot understand becomes
	// EventUnknown or EventNotice events.
	Line(line []byte) []agentcli.Event
	// End is called once, after the process has exited and stdout is
	// exhausted. It decides the outcome from the terminal event it saw
	// and the exit status (see Outcome).
	End(exit Exit) Outcome
}

// Wire constrains the wire type W of a LineParser: a *W decodes one
// output line into itself.
type Wire[W any] interface {
	*W
	// Decode reads one output line, a JSON object, from d (see package
	// jsonscan) into the wire value.
	//
	// It runs on any goroutine, several lines at a time into different
	// wire values, so it may read nothing but d and the value it decodes
	// into, which is zero. It reads what the events need and skips the
	// rest: strings that events keep come from d.Str, d.UnsafeStr or
	// d.Raw, which the kit sets up for the run (they share the line's
	// memory only where the run lets them); a view (d.StrBytes, d.Span)
	// must not outlive the line's Apply.
	//
	// Decode reports an error for a line whose events would
	// misrepresent it (a part events keep as JSON that is not valid): the
	// line is then an EventNotice with a *agentcli.ParseError, as a line
	// that is not JSON is (the kit checks the syntax of what Decode
	// reads).
	Decode(d *jsonscan.Decoder) error
}

// LineParser is a run's parser of output printed as one JSON object per
// line, in the shape Lines builds a Parser from: a wire type W that
// decodes one line into itself (see Wire), and the run's state, which
// applies the decoded lines in order and decides the outcome.
//
// A LineParser that also has a method
//
//	Other(line []byte) []agentcli.Event
//
// gets the lines that are neither blank nor a JSON object (whatever
// starts with another byte than '{', such as an array), on the run's
// goroutine, in order, with memory it may keep; otherwise each such line
// is an EventNotice with a *agentcli.ParseError.
type LineParser[W any] interface {
	// Apply returns the events of a decoded line, in order, and updates
	// the run's state. Lines are applied on one goroutine, in the order
	// they were printed, each once. line says what the events may keep
	// of the line (Line.Raw); w is reused once Apply returns, as is the
	// returned slice by the next call.
	Apply(w *W, line *Line) []agentcli.Event
	// End decides the outcome once the CLI has exited and every line is
	// applied (see Parser).
	End(exit Exit) Outcome
}

// Line is what Apply may keep of the line it applies. It is valid during
// that Apply only.
type Line struct {
	raw  json.RawMessage
	data []byte // the line, trimmed; strings may be decoded in place in it
	ip   jsonscan.InPlace
}

// Raw returns the line as events keep it (Event.Raw, Result.Raw), which
// the parser may keep for as long as it likes: nil when the run keeps no
// Raw of it (Request.DropRaw, or a line longer than Request.MaxRawBytes
// whose memory its long strings were decoded in).
func (l *Line) Raw() json.RawMessage { return l.raw }

// UnknownRaw returns the Raw of an EventUnknown of the line, which has
// nothing else to show: Raw, or when that is nil a copy of the line as
// printed.
func (l *Line) UnknownRaw() json.RawMessage {
	if l.raw != nil || l.data == nil {
		return l.raw
	}
	return l.ip.Original(nil, l.data)
}

// KeptLine returns the Line of a line the parser may keep, such as part
// of a line given to Other: its Raw is raw.
func KeptLine(raw json.RawMessage) *Line { return &Line{raw: raw, data: raw} }

// Lines returns the Parser of one run made of p, a LineParser of the
// backend named backend (for the notices of lines that do not parse).
//
// The kit builds every way of reading a run's output from it, the same
// for every backend: lines are decoded on goroutines of their own and
// applied in order; lines whose Raw the run keeps are read one after
// another into shared memory and their strings share it; under
// Request.DropRaw lines are read into memory that is reused once their
// events are handled, and events get copies of what they keep; a line
// handed over for keeps (too long for that memory, or longer than
// Request.MaxRawBytes) has its long strings decoded in place, so that it
// costs its size about once. A decoded line's Raw is what Line.Raw says.
func Lines[W any, PW Wire[W]](backend string, p LineParser[W]) Parser {
	x := &lines[W, PW]{backend: backend, p: p}
	if o, ok := p.(interface{ Other([]byte) []agentcli.Event }); ok {
		x.other = o.Other
	}
	return x
}

// fastParser is a Parser that the kit runs in its fast ways: the Parsers
// Lines builds.
type fastParser interface {
	Parser
	// borrowLines is called before the first line when the run keeps no
	// Raw: lines are then read into memory that is reused once their
	// events are handled.
	borrowLines()
	// decoder returns a function that decodes lines for one goroutine.
	decoder() func(l *readLine)
	// read returns the events of a line as the reader hands it over,
	// decoded ahead or not. The slice is reused by the next call.
	read(l *readLine) []agentcli.Event
}

// lines is the Parser that Lines builds.
type lines[W any, PW Wire[W]] struct {
	backend string
	p       LineParser[W]
	other   func([]byte) []agentcli.Event
	// borrow: lines are borrowed (see borrowLines).
	borrow bool
	d      jsonscan.Decoder // decodes the lines not decoded ahead
	cur    decoded[W]       // such a line
	line   Line
	notice [1]agentcli.Event
}

// decoded is one line as a decoder leaves it for apply.
type decoded[W any] struct {
	w    W
	data []byte // the line, trimmed
	kind lineKind
	err  error            // why an object line is a notice
	ip   jsonscan.InPlace // the strings decoded in place in data
}

type lineKind uint8

const (
	lineBlank  lineKind = iota // no events
	lineObject                 // decoded into w (or err)
	lineOther                  // neither blank nor an object
)

func (x *lines[W, PW]) borrowLines() {
	x.borrow = true
	x.d.SetBorrowed(true)
}

func (x *lines[W, PW]) decoder() func(*readLine) {
	d := new(jsonscan.Decoder)
	d.SetBorrowed(x.borrow)
	return func(l *readLine) {
		dl, _ := l.dec.(*decoded[W])
		if dl == nil {
			dl = new(decoded[W])
			l.dec = dl
		}
		decodeLine[W, PW](d, dl, l.Data, l.utf8, l.owned)
		l.decoded = true
	}
}

// Line implements Parser.
func (x *lines[W, PW]) Line(line []byte) []agentcli.Event {
	decodeLine[W, PW](&x.d, &x.cur, line, false, false)
	return x.apply(&x.cur, false)
}

func (x *lines[W, PW]) read(l *readLine) []agentcli.Event {
	dl, _ := l.dec.(*decoded[W])
	if !l.decoded || dl == nil {
		dl = &x.cur
		decodeLine[W, PW](&x.d, dl, l.Data, l.utf8, l.owned)
	}
	return x.apply(dl, l.owned)
}

// End implements Parser.
func (x *lines[W, PW]) End(exit Exit) Outcome { return x.p.End(exit) }

// decodeLine decodes line into dl with d; validUTF8 reports that the line
// is valid UTF-8, owned that it is handed over for keeps (its long
// strings may then be decoded in place).
func decodeLine[W any, PW Wire[W]](d *jsonscan.Decoder, dl *decoded[W], line []byte, validUTF8, owned bool) {
	t := bytes.TrimSpace(line)
	dl.data, dl.err, dl.ip = t, nil, dl.ip[:0]
	switch {
	case len(t) == 0:
		dl.kind = lineBlank
		return
	case t[0] != '{':
		dl.kind = lineOther
		return
	}
	dl.kind = lineObject
	d.ResetInput(t, validUTF8, owned)
	err := PW(&dl.w).Decode(d)
	if ferr := d.Finish(); ferr != nil {
		err = ferr
	}
	dl.err = err
	dl.ip = append(dl.ip, d.InPlace()...)
	d.Reset(nil)
}

// apply returns the events of a decoded line; owned reports that the line
// was handed over for keeps. It drops what dl holds of the line.
func (x *lines[W, PW]) apply(dl *decoded[W], owned bool) []agentcli.Event {
	var evs []agentcli.Event
	switch {
	case dl.kind == lineBlank:
	case dl.kind == lineOther && x.other != nil:
		data := dl.data
		if x.borrow && !owned {
			data = bytes.Clone(data) // the parser's to keep
		}
		evs = x.other(data)
	case dl.kind == lineOther:
		evs = x.noticeOf(NotObject(x.backend, dl.data))
	case dl.err != nil:
		evs = x.noticeOf(noticeOf(x.backend, dl.ip.Original(nil, dl.data), dl.err))
	default:
		x.line = Line{data: dl.data, ip: dl.ip}
		if !x.borrow && len(dl.ip) == 0 {
			x.line.raw = dl.data
		}
		evs = x.p.Apply(&dl.w, &x.line)
		x.line = Line{}
	}
	var zero W
	dl.w, dl.data = zero, nil // nothing keeps the line alive
	return evs
}

func (x *lines[W, PW]) noticeOf(ev agentcli.Event) []agentcli.Event {
	x.notice[0] = ev
	return x.notice[:]
}
