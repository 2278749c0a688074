package backendtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// This file holds what the differential tests of the parsers share: each
// backend keeps its former encoding/json parser as a test oracle, and a
// fuzz target checks that the single-pass parser yields the same events,
// result and error on every input inside the oracle's domain.
//
// The domain is the well-typed output a CLI prints: every line valid JSON,
// every field either parser reads of the type the oracle's wire structs
// declare, known keys spelled exactly and not repeated, token counts and
// costs in a sane range. Outside it the two parsers differ by design (see
// each backend's oracle_test.go for the list): encoding/json matches keys
// case-insensitively, merges repeated objects, keeps half-decoded values
// of the wrong type, and validates parts of a line no event reads.

// Kinds is a set of JSON value kinds a Shape allows.
type Kinds uint16

// The kinds of values a Shape can allow.
const (
	// KStr: a string.
	KStr Kinds = 1 << iota
	// KInt: an integer literal (no fraction or exponent) in the int64
	// range.
	KInt
	// KCount: an integer literal from 0 to 2^40, a token count whose sums
	// cannot overflow.
	KCount
	// KNum: any number that parses as a finite float64 of magnitude at
	// most 1e15 (sums stay finite).
	KNum
	// KCost: a number from 0 to 1e15.
	KCost
	// KBool: true or false.
	KBool
	// KNull: null.
	KNull
	// KObj: an object (checked against Fields when set).
	KObj
	// KArr: an array (elements checked against Elem when set).
	KArr
	// KAnyNum: any number.
	KAnyNum
	// KAny: any value.
	KAny = KStr | KAnyNum | KBool | KNull | KObj | KArr
)

// Shape is the type a field must have to be inside an oracle's domain.
type Shape struct {
	// Kinds are the kinds of value allowed.
	Kinds Kinds
	// Fields gives the shape of an object's known members; other members
	// may hold anything. A known key may appear once, and no other key may
	// equal it case-insensitively.
	Fields map[string]*Shape
	// Elem is the shape of an array's elements; nil allows anything.
	Elem *Shape
	// Values is the shape of every member of an object used as a map
	// (Fields nil); nil allows anything.
	Values *Shape
	// Repeat lets this member appear more than once in its object.
	Repeat bool
}

// Shorthands for leaf shapes.
var (
	Str      = &Shape{Kinds: KStr}
	StrNull  = &Shape{Kinds: KStr | KNull}
	Int      = &Shape{Kinds: KInt}
	IntNull  = &Shape{Kinds: KInt | KNull}
	Count    = &Shape{Kinds: KCount}
	Num      = &Shape{Kinds: KNum}
	Cost     = &Shape{Kinds: KCost}
	CostNull = &Shape{Kinds: KCost | KNull}
	Bool     = &Shape{Kinds: KBool}
	Any      = &Shape{Kinds: KAny}
)

// Obj returns the shape of an object with known members fields.
func Obj(fields map[string]*Shape) *Shape { return &Shape{Kinds: KObj, Fields: fields} }

// Map returns the shape of an object whose members all have shape v.
func Map(v *Shape) *Shape { return &Shape{Kinds: KObj, Values: v} }

// Arr returns the shape of an array of elem.
func Arr(elem *Shape) *Shape { return &Shape{Kinds: KArr, Elem: elem} }

// OrNull returns s that may also be null.
func OrNull(s *Shape) *Shape {
	c := *s
	c.Kinds |= KNull
	return &c
}

// WellTyped reports whether data holds exactly one JSON value of shape s.
func WellTyped(data []byte, s *Shape) bool {
	if !json.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if !checkValue(dec, s) {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

func checkValue(dec *json.Decoder, s *Shape) bool {
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			if s.Kinds&KObj == 0 {
				return false
			}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				key := kt.(string)
				sub := Any
				if s.Values != nil {
					sub = s.Values
				}
				if s.Fields != nil {
					if f, ok := s.Fields[key]; ok {
						if seen[key] && !f.Repeat {
							return false
						}
						seen[key] = true
						sub = f
					} else {
						for name := range s.Fields {
							if strings.EqualFold(name, key) {
								return false
							}
						}
					}
				}
				if !checkValue(dec, sub) {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		case '[':
			if s.Kinds&KArr == 0 {
				return false
			}
			elem := s.Elem
			if elem == nil {
				elem = Any
			}
			for dec.More() {
				if !checkValue(dec, elem) {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		}
		return false
	case string:
		return s.Kinds&KStr != 0
	case bool:
		return s.Kinds&KBool != 0
	case nil:
		return s.Kinds&KNull != 0
	case json.Number:
		return numberFits(string(v), s.Kinds)
	}
	return false
}

func numberFits(lit string, k Kinds) bool {
	if k&KAnyNum != 0 {
		return true
	}
	integer := !strings.ContainsAny(lit, ".eE")
	if k&KInt != 0 && integer {
		if _, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return true
		}
	}
	if k&KCount != 0 && integer {
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil && n >= 0 && n <= 1<<40 {
			return true
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	if k&KNum != 0 && math.Abs(f) <= 1e15 {
		return true
	}
	return k&KCost != 0 && f >= 0 && f <= 1e15
}

// OutcomeOf returns the Outcome of a parser written when End returned a
// result and an error (the oracles): the error's fields read back.
func OutcomeOf(res *agentcli.Result, err error) driver.Outcome {
	o := driver.Outcome{Result: res}
	var (
		re *agentcli.ResultError
		xe *agentcli.ExitError
		pe *agentcli.ParseError
	)
	switch {
	case errors.As(err, &re):
		o = driver.Outcome{Result: re.Result, Failed: true, Subtype: re.Subtype, TerminalReason: re.TerminalReason,
			APIStatus: re.APIStatus, Message: re.Message, Kind: re.Kind}
	case errors.As(err, &xe):
		o = driver.Outcome{Kind: xe.Kind}
	case errors.As(err, &pe):
		o = driver.Outcome{Unparsed: pe.Line, UnparsedErr: pe.Err}
	}
	return o
}

// Run is what a parser made of a stream: the events of each line, then
// End's result and error (through Spec.End, as the runner calls it).
type Run struct {
	Events [][]agentcli.Event
	Result *agentcli.Result
	Err    error
}

// Parse feeds lines to p and ends it with exit.
func Parse(spec *driver.Spec, p driver.Parser, lines [][]byte, exit driver.Exit) Run {
	var r Run
	for _, l := range lines {
		evs := p.Line(l)
		r.Events = append(r.Events, append([]agentcli.Event(nil), evs...)) // Line may reuse its slice
	}
	r.Result, r.Err = spec.End(p, exit)
	return r
}

// ParseUTF8 is Parse calling LineUTF8 (p must implement
// driver.UTF8Parser) for the lines that are valid UTF-8, as the runner
// does: it must yield what Parse yields.
func ParseUTF8(spec *driver.Spec, p driver.Parser, lines [][]byte, exit driver.Exit) Run {
	var r Run
	up := p.(driver.UTF8Parser)
	for _, l := range lines {
		var evs []agentcli.Event
		if utf8.Valid(l) {
			evs = up.LineUTF8(l)
		} else {
			evs = p.Line(l)
		}
		r.Events = append(r.Events, append([]agentcli.Event(nil), evs...))
	}
	r.Result, r.Err = spec.End(p, exit)
	return r
}

// ParseDecoded is Parse as the runner parses with decoders (p must
// implement driver.DecodeParser): lines are decoded ahead, four at a time
// alternately by two decoders (so each decodes a line before the one it
// decoded last is applied) reusing the values of lines already applied,
// then applied in order (lines not decoded go to Line). It must yield what
// Parse yields.
func ParseDecoded(spec *driver.Spec, p driver.Parser, lines [][]byte, exit driver.Exit) Run {
	return parseDecoded(spec, p, lines, exit, false, math.MaxInt)
}

// ParseBorrowed is ParseDecoded with lines the parser borrows, as the
// runner hands them over under Request.DropRaw (p must implement
// driver.BorrowParser too): each group of four lines is in memory that is
// overwritten once their events are collected. When p is an
// driver.OwnParser, two lines in three are handed over for keeps instead,
// in memory of its own, as the runner hands over a line too long for its
// buffers (to a decoder or to LineOwned, in turn), and every string that
// can be is decoded in place (jsonscan.SetInPlaceAll), not only long ones.
// Apart from Raw, it must yield what Parse yields: compare both through
// WithoutRaw.
func ParseBorrowed(spec *driver.Spec, p driver.Parser, lines [][]byte, exit driver.Exit) Run {
	p.(driver.BorrowParser).Borrow()
	defer jsonscan.SetInPlaceAll(true)()
	return parseDecoded(spec, p, lines, exit, true, math.MaxInt)
}

// ParseOwned is ParseDecoded as the runner parses for a run that keeps
// Raw of at most keep bytes (Request.MaxRawBytes; see driver.RawLimit):
// when p is a driver.OwnParser, each line longer than keep, trimmed, is
// handed over for keeps (to a decoder or to LineOwned, in turn), and every
// string of it that can be is decoded in place (jsonscan.SetInPlaceAll),
// not only long ones; the events, result and error then lose the Raw the
// runner drops (driver.CapRaw). It must yield CapRawRun of Parse's run.
func ParseOwned(spec *driver.Spec, p driver.Parser, lines [][]byte, exit driver.Exit, keep int) Run {
	defer jsonscan.SetInPlaceAll(true)()
	return CapRawRun(parseDecoded(spec, p, lines, exit, false, keep), keep)
}

// CapRawRun returns r with the Raw fields a run keeping Raw of at most
// keep bytes drops emptied (see driver.CapRaw), in place.
func CapRawRun(r Run, keep int) Run {
	for _, evs := range r.Events {
		for i := range evs {
			driver.CapRaw(&evs[i], keep)
		}
	}
	if r.Result != nil && len(r.Result.Raw) > keep {
		r.Result.Raw = nil
	}
	driver.CapRawErr(r.Err, keep)
	return r
}

// parseDecoded is ParseDecoded, with lines borrowed (see ParseBorrowed)
// or, when not, those longer than ownOver handed over for keeps (see
// ParseOwned).
func parseDecoded(spec *driver.Spec, p driver.Parser, lines [][]byte, exit driver.Exit, borrow bool, ownOver int) Run {
	dp := p.(driver.DecodeParser)
	decs := []driver.LineDecoder{dp.NewLineDecoder(), dp.NewLineDecoder()}
	var spare [4]driver.Decoded
	var r Run
	var mem []byte
	op, _ := p.(driver.OwnParser)
	for i := 0; i < len(lines); i += len(spare) {
		chunk := lines[i:min(i+len(spare), len(lines))]
		var owned [4]bool
		if borrow {
			n := 0
			for _, l := range chunk {
				n += len(l)
			}
			mem = slices.Grow(mem[:0], n) // no line moves as others follow
			var own [4][]byte
			for j, l := range chunk {
				if owned[j] = op != nil && (i+j)%3 != 2; owned[j] {
					own[j] = bytes.Clone(l)
					continue
				}
				mem = append(mem, l...)
				own[j] = mem[len(mem)-len(l) : len(mem) : len(mem)]
			}
			chunk = own[:len(chunk)]
		} else if op != nil && ownOver < math.MaxInt {
			var own [4][]byte
			for j, l := range chunk {
				own[j] = l
				if owned[j] = len(bytes.TrimSpace(l)) > ownOver; owned[j] {
					own[j] = bytes.Clone(l) // modified: strings decoded in place
				}
			}
			chunk = own[:len(chunk)]
		}
		var valid [4]bool
		for j, l := range chunk {
			valid[j] = utf8.Valid(l)
			if owned[j] && (i+j)%2 == 0 {
				spare[j] = nil // the run's goroutine parses it (LineOwned)
			} else {
				spare[j] = decs[j%2].Decode(l, valid[j], owned[j], spare[j])
			}
		}
		for j, l := range chunk {
			var evs []agentcli.Event
			switch {
			case spare[j] != nil:
				evs = dp.Apply(spare[j])
			case owned[j]:
				evs = op.LineOwned(l, valid[j])
			case valid[j]:
				evs = p.(driver.UTF8Parser).LineUTF8(l)
			default:
				evs = p.Line(l)
			}
			r.Events = append(r.Events, append([]agentcli.Event(nil), evs...))
		}
		for j := range mem {
			mem[j] = 'X' // the runner reuses the memory
		}
	}
	r.Result, r.Err = spec.End(p, exit)
	return r
}

// WithoutRaw returns r with the Raw fields Request.DropRaw drops emptied
// (see driver.DropRaw), in place: CapRawRun keeping no Raw.
func WithoutRaw(r Run) Run { return CapRawRun(r, -1) }

// DiffRuns describes the first difference between two runs of the same
// lines, or returns "". Notices are compared by their error's type (and a
// ParseError's line), not its wording: encoding/json and jsonscan word
// syntax errors differently.
func DiffRuns(oracle, got Run) string {
	if len(oracle.Events) != len(got.Events) {
		return fmt.Sprintf("%d lines vs %d", len(oracle.Events), len(got.Events))
	}
	for i := range oracle.Events {
		o, g := describeEvents(oracle.Events[i]), describeEvents(got.Events[i])
		if o != g {
			return fmt.Sprintf("line %d:\noracle: %s\nnew:    %s", i, o, g)
		}
	}
	o, g := describeEnd(oracle), describeEnd(got)
	if o != g {
		return fmt.Sprintf("end:\noracle: %s\nnew:    %s", o, g)
	}
	return ""
}

func describeEvents(evs []agentcli.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(describeEvent(ev))
		b.WriteByte('\n')
	}
	return b.String()
}

func describeEvent(ev agentcli.Event) string {
	errDesc := ""
	if ev.Err != nil {
		errDesc = fmt.Sprintf("%T", ev.Err)
		var pe *agentcli.ParseError
		if errors.As(ev.Err, &pe) {
			errDesc += fmt.Sprintf(" backend=%s line=%q", pe.Backend, pe.Line)
		} else {
			errDesc += " " + ev.Err.Error()
		}
		ev.Text = ""
		ev.Err = nil
	}
	type plain agentcli.Event
	raw := ev.Raw
	ev.Raw = nil
	j, err := json.Marshal(plain(ev))
	if err != nil {
		return fmt.Sprintf("unmarshalable %#v: %v", ev, err)
	}
	return fmt.Sprintf("%s raw=%q err=%s", j, raw, errDesc)
}

func describeEnd(r Run) string {
	s := "result <nil>"
	if r.Result != nil {
		j, err := json.Marshal(r.Result)
		if err != nil {
			return fmt.Sprintf("unmarshalable result %#v: %v", r.Result, err)
		}
		s = "result " + string(j) + fmt.Sprintf(" raw=%q", r.Result.Raw)
	}
	if r.Err != nil {
		s += fmt.Sprintf("\nerror %T: %v", r.Err, r.Err)
		var re *agentcli.ResultError
		if errors.As(r.Err, &re) {
			s += fmt.Sprintf(" (kind %v, subtype %q, status %d, reason %q, exit %d)", re.Kind, re.Subtype, re.APIStatus, re.TerminalReason, re.ExitCode)
		}
		var xe *agentcli.ExitError
		if errors.As(r.Err, &xe) {
			s += fmt.Sprintf(" (kind %v, hint %q)", xe.Kind, xe.Hint)
		}
	}
	return s
}

// CheckEvents reports the first event that a caller could not encode
// with json.Marshal, or a usage or cost that is negative, infinite or not
// a number: what no parser may produce, whatever its input.
func CheckEvents(r Run) error {
	check := func(ev agentcli.Event) error {
		if _, err := json.Marshal(ev); err != nil {
			return fmt.Errorf("json.Marshal(%+v): %v", ev, err)
		}
		if ev.Usage != nil {
			if err := checkUsage(*ev.Usage); err != nil {
				return err
			}
		}
		return nil
	}
	for _, evs := range r.Events {
		for _, ev := range evs {
			if err := check(ev); err != nil {
				return err
			}
		}
	}
	if r.Result != nil {
		if err := check(agentcli.Event{Kind: agentcli.EventResult, Result: r.Result}); err != nil {
			return err
		}
		if err := checkUsage(r.Result.Usage); err != nil {
			return err
		}
		if c := r.Result.CostUSD; c != nil && (*c < 0 || math.IsInf(*c, 0) || math.IsNaN(*c)) {
			return fmt.Errorf("cost %v", *c)
		}
	}
	return nil
}

func checkUsage(u agentcli.Usage) error {
	for _, n := range []int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens} {
		if n < 0 {
			return fmt.Errorf("negative token count in %+v", u)
		}
	}
	return nil
}

// SplitLines splits fuzz input into lines as the process layer does
// (without the newlines); a trailing empty line is dropped.
func SplitLines(in []byte) [][]byte {
	lines := bytes.Split(in, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	for i, l := range lines {
		lines[i] = bytes.Clone(bytes.TrimSuffix(l, []byte("\r")))
	}
	return lines
}

// CheckKeptRaw checks that a parser's lines handed over for keeps in a
// run that keeps Raw (ParseOwned, for Request.MaxRawBytes) yield what Line
// yields, but for the Raw the runner drops: with every line handed over
// (a run keeping no Raw longer than 0 bytes) and with those longer than
// 60 bytes. newParser returns a fresh parser for one run.
func CheckKeptRaw(t *testing.T, spec *driver.Spec, newParser func() driver.Parser, lines [][]byte, exit driver.Exit) {
	t.Helper()
	for _, keep := range []int{0, 60} {
		want := CapRawRun(Parse(spec, newParser(), lines, exit), keep)
		if d := DiffRuns(want, ParseOwned(spec, newParser(), lines, exit, keep)); d != "" {
			t.Fatalf("lines over %d bytes handed over for keeps differ from Line, Raw over %d bytes aside: %s", keep, keep, d)
		}
	}
}
