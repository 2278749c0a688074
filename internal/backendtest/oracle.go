package backendtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
	"github.com/agentcli/agentcli/internal/kitmodes"
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

// CheckModes checks that the parsers newParser makes yield, in every way
// a run hands lines to a parser made by driver.Lines, what they yield
// parsing the lines one by one (Parse), but for the Raw each way drops:
// lines decoded ahead (as on other goroutines), with their UTF-8 checked
// ahead or not; lines borrowed (Request.DropRaw) and overwritten once
// parsed, two in three handed over for keeps; and lines handed over for
// keeps in a run keeping Raw of at most 0 and 60 bytes
// (Request.MaxRawBytes). Every string of a line handed over for keeps
// that can be decoded in place is (jsonscan.SetInPlaceAll), not only
// long ones. A parser that driver.Lines did not make is run line by line
// only, so nothing is checked.
func CheckModes(t testing.TB, spec *driver.Spec, newParser func() driver.Parser, lines [][]byte, exit driver.Exit) {
	t.Helper()
	none := -1
	for _, c := range []struct {
		name string
		m    kitmodes.Mode
		keep int // the Raw the run keeps
	}{
		{"decoded ahead", kitmodes.Mode{OwnOver: none, Decoders: true, Direct: func(i int) bool { return i%3 == 1 }}, math.MaxInt},
		{"UTF-8 checked ahead", kitmodes.Mode{OwnOver: none, UTF8: true, Decoders: true, Direct: func(i int) bool { return i%2 == 0 }}, math.MaxInt},
		{"borrowed", kitmodes.Mode{Borrow: true, Own: func(i int) bool { return i%3 != 2 }, Decoders: true, Direct: func(i int) bool { return i%4 == 1 }}, -1},
		{"handed over, Raw of 0 bytes kept", kitmodes.Mode{OwnOver: 0, Decoders: true, Direct: func(i int) bool { return i%2 == 1 }}, 0},
		{"handed over, Raw of 60 bytes kept", kitmodes.Mode{OwnOver: 60, UTF8: true, Decoders: true, Direct: func(i int) bool { return i%3 == 0 }}, 60},
	} {
		p := newParser()
		restore := jsonscan.SetInPlaceAll(c.m.Borrow || c.m.OwnOver >= 0)
		evs, ok := kitmodes.Lines(p, lines, c.m)
		restore()
		if !ok {
			return
		}
		got := Run{Events: evs}
		got.Result, got.Err = spec.End(p, exit)
		want := Parse(spec, newParser(), lines, exit)
		if d := DiffRuns(CapRawRun(want, c.keep), CapRawRun(got, c.keep)); d != "" {
			t.Fatalf("%s: the events differ from parsing line by line, Raw over %d bytes aside: %s", c.name, c.keep, d)
		}
	}
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

// Oracle checks a parser against the encoding/json parser it replaced
// (the oracle, kept in the backend's oracle_test.go), on seeds (Test) and
// on what the fuzzer makes of them (Fuzz).
type Oracle struct {
	Spec *driver.Spec
	// New makes the parser (driver.Lines); Old the oracle.
	New, Old func() driver.Parser
	// InDomain reports whether the oracle's answer for a line is the
	// reference (see WellTyped).
	InDomain func(line []byte) bool
	// Seeds are streams (stdout, exit status) to start from; Files adds
	// the files of testdata that match a glob.
	Seeds []Seed
}

// Seed is one stream an Oracle starts from.
type Seed struct {
	Stdout string
	Exit   int
}

// Files returns a Seed per file matching glob (exit status 1 for a name
// that says "err", else 0), or fails t when there is none.
func Files(t testing.TB, glob string) []Seed {
	names, _ := filepath.Glob(glob)
	if len(names) == 0 {
		t.Fatalf("no files match %s", glob)
	}
	var seeds []Seed
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		exit := 0
		if strings.Contains(filepath.Base(n), "err") {
			exit = 1
		}
		seeds = append(seeds, Seed{string(b), exit})
	}
	return seeds
}

// Test runs Check on every seed.
func (o *Oracle) Test(t *testing.T) {
	t.Helper()
	if len(o.Seeds) == 0 {
		t.Fatal("no seeds")
	}
	for _, s := range o.Seeds {
		o.Check(t, []byte(s.Stdout), driver.Exit{Code: s.Exit})
	}
}

// Fuzz runs Check on streams the fuzzer makes of the seeds.
func (o *Oracle) Fuzz(f *testing.F) {
	for _, s := range o.Seeds {
		f.Add([]byte(s.Stdout), s.Exit, "")
	}
	f.Fuzz(func(t *testing.T, in []byte, code int, stderr string) {
		o.Check(t, in, driver.Exit{Code: code & 0xff, Stderr: stderr})
	})
}

// Check checks the parser on one stream, in (split with SplitLines),
// ended with exit: it must decide, yield events json.Marshal can encode
// with sane usage (CheckEvents) and the same events in every way the kit
// hands it lines (CheckModes); on the lines InDomain accepts it must
// yield what the oracle yields.
func (o *Oracle) Check(t testing.TB, in []byte, exit driver.Exit) {
	t.Helper()
	lines := SplitLines(in)
	all := Parse(o.Spec, o.New(), lines, exit)
	if all.Result == nil && all.Err == nil {
		t.Fatal("End returned neither a result nor an error")
	}
	if err := CheckEvents(all); err != nil {
		t.Fatal(err)
	}
	CheckModes(t, o.Spec, o.New, lines, exit)
	var dom [][]byte
	for _, l := range lines {
		if o.InDomain(l) {
			dom = append(dom, l)
		}
	}
	want := Parse(o.Spec, o.Old(), dom, exit)
	got := Parse(o.Spec, o.New(), dom, exit)
	if d := DiffRuns(want, got); d != "" {
		t.Fatalf("the parser differs from the oracle on\n%s\n%s", bytes.Join(dom, []byte("\n")), d)
	}
}

// OracleMCPNotices is the oracles' reading of a CLI's list of MCP servers
// (list, a JSON array of {"name", "status", ...}), with encoding/json: an
// EventNotice made from base (Raw dropped) for each server whose status
// is one of failed and that *seen (allocated on first use) does not hold
// yet, which it then holds.
func OracleMCPNotices(list json.RawMessage, base agentcli.Event, seen *map[string]bool, failed ...string) []agentcli.Event {
	var servers []json.RawMessage
	_ = json.Unmarshal(list, &servers)
	var evs []agentcli.Event
	for _, s := range servers {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(s, &m)
		var name, status string
		_ = json.Unmarshal(m["name"], &name)
		_ = json.Unmarshal(m["status"], &status)
		if name == "" || (*seen)[name] || !slices.Contains(failed, status) {
			continue
		}
		if *seen == nil {
			*seen = map[string]bool{}
		}
		(*seen)[name] = true
		n := base
		n.Kind, n.Text, n.Raw = agentcli.EventNotice, driver.MCPStartNotice(name, status, ""), nil
		evs = append(evs, n)
	}
	return evs
}
