package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// decodeAny reads the next value the way encoding/json decodes into an
// interface{}: objects as map[string]any (last duplicate wins), arrays as
// []any, numbers as float64.
func decodeAny(d *Decoder) any {
	switch d.Kind() {
	case Object:
		m := map[string]any{}
		for k := range d.Object() {
			m[string(k)] = decodeAny(d)
		}
		return m
	case Array:
		a := []any{}
		for range d.Array() {
			a = append(a, decodeAny(d))
		}
		return a
	case String:
		return d.Str()
	case Number:
		return d.Float()
	case Bool:
		return d.Bool()
	case Null:
		d.Null()
		return nil
	}
	d.Skip() // records the error
	return nil
}

// decodeAll decodes a whole document, reading every value.
func decodeAll(data []byte) (any, error) {
	var d Decoder
	d.Reset(data)
	v := decodeAny(&d)
	return v, d.Finish()
}

func TestMatchesEncodingJSON(t *testing.T) {
	docs := []string{
		`{"type":"assistant","message":{"content":[{"type":"text","text":"hi\n\"there\""}],"n":1.5e3},"ok":true,"x":null}`,
		`  [1, -0, 0.25, 1e-7, -12345678901234567890, "a\u00e9\ud83d\ude00b", false, {}, []]  `,
		`"\ud800"`, `"\udc00\ud800"`, `"\ud800\u0041"`, `"\ud83d\ude00\ud83d"`, `"\/\b\f\r\t"`,
		"\"\xff\xfe ok \xed\xa0\x80 \xe2\x82\"",
		`{"a":1,"a":{"b":2},"a":"last"}`,
		`{"é\u00e9":1, "\"k\"":2}`,
		`1e400`, `-1e400`, `0`, `[[[[[]]]]]`,
	}
	for _, doc := range docs {
		var want any
		jerr := json.Unmarshal([]byte(doc), &want)
		got, err := decodeAll([]byte(doc))
		if jerr != nil {
			// Only out-of-range numbers, which jsonscan clamps.
			if err != nil {
				t.Errorf("%s: got error %v; encoding/json: %v", doc, err, jerr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", doc, got, want)
		}
	}
}

func TestRejectsWhatItReads(t *testing.T) {
	bad := []struct {
		doc  string
		kind error
	}{
		{``, ErrUnexpectedEnd},
		{`{`, ErrUnexpectedEnd},
		{`{"a"`, ErrUnexpectedEnd},
		{`{"a":`, ErrUnexpectedEnd},
		{`{"a":1`, ErrUnexpectedEnd},
		{`{"a":1,}`, ErrSyntax},
		{`{,}`, ErrSyntax},
		{`{"a" 1}`, ErrSyntax},
		{`{"a":1 "b":2}`, ErrSyntax},
		{`{a:1}`, ErrSyntax},
		{`[1,]`, ErrSyntax},
		{`[1 2]`, ErrSyntax},
		{`[1}`, ErrSyntax},
		{`{"a":1]`, ErrSyntax},
		{`tru`, ErrUnexpectedEnd},
		{`trux`, ErrSyntax},
		{`nul`, ErrUnexpectedEnd},
		{`01`, ErrSyntax},
		{`1.`, ErrUnexpectedEnd},
		{`1.e5`, ErrSyntax},
		{`-`, ErrUnexpectedEnd},
		{`+1`, ErrSyntax},
		{`.5`, ErrSyntax},
		{`1e`, ErrUnexpectedEnd},
		{`"abc`, ErrUnexpectedEnd},
		{`"a\"`, ErrUnexpectedEnd},
		{`"\x"`, ErrSyntax},
		{`"\u12G4"`, ErrSyntax},
		{`"\u12"`, ErrSyntax},
		{"\"a\tb\"", ErrSyntax},
		{"\"a\x00b\"", ErrSyntax},
		{"\"a\\nb\tc\"", ErrSyntax},
		{"\"" + strings.Repeat("a\\n", onePassMax) + "\tc\"", ErrSyntax},
		{"\"a\\nbc", ErrUnexpectedEnd},
		{"\"a\\nb\\", ErrSyntax},
		{`{"a":1} x`, ErrSyntax},
		{`1 2`, ErrSyntax},
		{`@`, ErrSyntax},
	}
	for _, c := range bad {
		if json.Valid([]byte(c.doc)) {
			t.Fatalf("%q is valid JSON; fix the test", c.doc)
		}
		_, err := decodeAll([]byte(c.doc))
		if !errors.Is(err, c.kind) {
			t.Errorf("%q: got %v, want %v", c.doc, err, c.kind)
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Offset < 0 || e.Offset > len(c.doc)) {
			t.Errorf("%q: error %#v has no sane offset", c.doc, err)
		}
	}
}

func TestStringDecoding(t *testing.T) {
	cases := []string{
		`"plain ascii that is longer than sixteen bytes"`,
		`"esc \"quoted\" \\ back \/ slash"`,
		`"\\\\\\\"x"`,
		`"ends with backslash pair \\"`,
		`"\u0000\u001f\u007f\u0080\u07ff\u0800\uffff"`,
		`"\uD834\uDD1E"`, `"\ud834"`, `"\udd1e"`, `"\ud834\ud834\udd1e"`, `"\ud834\\"`,
		"\"日本語 ünïcödé 🎉\"",
		"\"\x80\xbf\xc0\xaf\xf8\x88\x80\x80\x80\xef\xbf\xbd\"",
		"\"\x89\\b\"", "\"ok\xffmore than eight bytes\\n and \xe2\x82\"", "\"0\x8f000000\"", "\"é\\té\"",
		"\"" + strings.Repeat(`a\"`, 100) + strings.Repeat("x", 100) + "\"",
		// Longer than onePassMax: found first, decoded into an exact buffer.
		"\"" + strings.Repeat(`line \"é\"\t\u00e9\ud83d\ude00`+"\xff"+`\n`, 10000) + "\"",
		"\"" + strings.Repeat("x", onePassMax) + `\n` + "\"",
	}
	for _, c := range cases {
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", c, err)
		}
		var d Decoder
		d.Reset([]byte(c))
		got, ok := d.StrOK()
		if err := d.Finish(); err != nil || !ok {
			t.Errorf("%s: ok=%v err=%v", c, ok, err)
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", c, got, want)
		}
	}
}

// TestStringUTF8Positions: the UTF-8 check made while an escaped string is
// copied agrees with encoding/json for valid and invalid runes at every
// offset in the 8-byte words, cut by an escape, the closing quote or
// another rune.
func TestStringUTF8Positions(t *testing.T) {
	runes := []string{
		"é", "€", "🎉", "\uFFFD", "\xef\xbf\xbd", // valid (the last two: U+FFFD itself)
		"\xc3", "\xe2\x82", "\xf0\x9f\x8e", // cut short
		"\x80", "\xbf\xbf", "\xc0\xaf", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80", "\xff", // never valid
	}
	after := []string{``, `\n`, `x`, `\u00e9`, "é", "\xff", `\"`, "tail of plain ascii"}
	n := 0
	for pad := range 18 {
		for _, r := range runes {
			r = decodeHexEscapes(r)
			for _, a := range after {
				a = decodeHexEscapes(a)
				for _, first := range []string{`\t`, ""} { // an escape first: the one-pass copy
					doc := []byte(`"` + first + strings.Repeat("a", pad) + r + a + strings.Repeat("b", pad%5) + `"`)
					var want string
					if err := json.Unmarshal(doc, &want); err != nil {
						t.Fatalf("%q: encoding/json: %v", doc, err)
					}
					for _, fresh := range []bool{true, false} {
						var d Decoder
						d.Reset(doc)
						var got string
						if fresh {
							got = d.Str()
						} else {
							b, _ := d.StrBytes()
							got = string(b)
						}
						if err := d.Finish(); err != nil || got != want {
							t.Fatalf("%q (fresh %v): got %q, %v; want %q", doc, fresh, got, err, want)
						}
						n++
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}

// TestRuneLen: the one-pass decoder's own UTF-8 check agrees with
// unicode/utf8 on every lead byte ≥ 0x80, every second byte, and the
// continuation bytes at the edges of their range, whole and cut short.
func TestRuneLen(t *testing.T) {
	edges := []byte{0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xff}
	var p [4]byte
	n := 0
	for b0 := 0x80; b0 <= 0xff; b0++ {
		for b1 := 0; b1 <= 0xff; b1++ {
			for _, b2 := range edges {
				for _, b3 := range edges {
					p = [4]byte{byte(b0), byte(b1), b2, b3}
					for l := 1; l <= 4; l++ {
						want := 0
						if r, size := utf8.DecodeRune(p[:l]); r != utf8.RuneError || size > 1 {
							want = size
						}
						if got := runeLen(p[:l]); got != want {
							t.Fatalf("runeLen(% x) = %d; want %d", p[:l], got, want)
						}
						n++
					}
				}
			}
		}
	}
	if n != 128*256*len(edges)*len(edges)*4 {
		t.Fatalf("%d cases", n)
	}
}

// decodeHexEscapes turns the \xNN in s into bytes.
func decodeHexEscapes(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err == nil {
				b = append(b, byte(v))
				i += 3
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

func TestNumbers(t *testing.T) {
	ints := []struct {
		doc  string
		want int64
	}{
		{`0`, 0}, {`-0`, 0}, {`42`, 42}, {`-42`, -42},
		{`9223372036854775807`, math.MaxInt64},
		{`9223372036854775808`, math.MaxInt64},
		{`123456789012345678901234567890`, math.MaxInt64},
		{`-9223372036854775808`, math.MinInt64},
		{`-9223372036854775809`, math.MinInt64},
		{`-99999999999999999999999999`, math.MinInt64},
		{`2.9`, 2}, {`-2.9`, -2}, {`1e3`, 1000}, {`1E+2`, 100}, {`15e-1`, 1},
		{`1e300`, math.MaxInt64}, {`-1e300`, math.MinInt64}, {`1e400`, math.MaxInt64},
		{`9.3e18`, math.MaxInt64},
	}
	for _, c := range ints {
		var d Decoder
		d.Reset([]byte(c.doc))
		got, ok := d.IntOK()
		if !ok || d.Finish() != nil || got != c.want {
			t.Errorf("Int(%s) = %d, %v, %v; want %d", c.doc, got, ok, d.Finish(), c.want)
		}
	}
	floats := []struct {
		doc  string
		want float64
	}{
		{`0.1`, 0.1}, {`-2.5e-3`, -2.5e-3}, {`1e400`, math.MaxFloat64}, {`-1e400`, -math.MaxFloat64},
		{`1e-400`, 0}, {`123456789012345678901234567890`, 123456789012345678901234567890},
	}
	for _, c := range floats {
		var d Decoder
		d.Reset([]byte(c.doc))
		got, ok := d.FloatOK()
		if !ok || d.Finish() != nil || got != c.want || math.IsInf(got, 0) {
			t.Errorf("Float(%s) = %v, %v; want %v", c.doc, got, ok, c.want)
		}
	}
}

func TestTolerantTypes(t *testing.T) {
	var d Decoder
	d.Reset([]byte(`{"s":1,"i":"x","f":[1],"b":"true","lb":"true","lb2":true,"lb3":"yes","n":{"x":1},"after":"ok"}`))
	got := map[string]any{}
	for k := range d.Object() {
		switch string(k) {
		case "s":
			s, ok := d.StrOK()
			got["s"] = [2]any{s, ok}
		case "i":
			i, ok := d.IntOK()
			got["i"] = [2]any{i, ok}
		case "f":
			f, ok := d.FloatOK()
			got["f"] = [2]any{f, ok}
		case "b":
			b, ok := d.BoolOK()
			got["b"] = [2]any{b, ok}
		case "lb", "lb2", "lb3":
			got[string(k)] = d.LooseBool()
		case "n":
			got["n"] = d.Null()
		case "after":
			got["after"] = d.Str()
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"s": [2]any{"", false}, "i": [2]any{int64(0), false}, "f": [2]any{0.0, false},
		"b": [2]any{false, false}, "lb": true, "lb2": true, "lb3": false, "n": false, "after": "ok",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// TestDuplicateKeys pins the rule: every member is yielded in document
// order, so assigning on each key keeps the last value (as encoding/json
// does) and the first is there for whoever wants it.
func TestDuplicateKeys(t *testing.T) {
	doc := []byte(`{"id":"item_6","type":"web_search","id":"ws_123","o":{"a":1},"o":{"b":2}}`)
	var d Decoder
	d.Reset(doc)
	var ids []string
	last, first := "", ""
	var o []byte
	for k := range d.Object() {
		switch string(k) {
		case "id":
			s := d.Str()
			ids = append(ids, s)
			last = s
			if first == "" {
				first = s
			}
		case "o":
			o = d.Raw()
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []string{"item_6", "ws_123"}) || first != "item_6" {
		t.Errorf("ids %v, first %q", ids, first)
	}
	var std struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(doc, &std); err != nil || std.ID != last {
		t.Errorf("last %q, encoding/json %q (%v)", last, std.ID, err)
	}
	if string(o) != `{"b":2}` {
		t.Errorf("last object %s, want it whole, not merged", o)
	}
}

func TestRawAndSkip(t *testing.T) {
	doc := []byte(` { "a" : [1, {"x":"}]\"{"}, "s\"]"] , "b" : "v" , "c":{"d":[[],{}]} , "n": -1.5e+2 } `)
	var want map[string]json.RawMessage
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	var d Decoder
	d.Reset(doc)
	got := map[string]json.RawMessage{}
	for k := range d.Object() {
		got[string(k)] = d.Raw()
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	d.Reset(doc)
	d.Skip()
	if err := d.Finish(); err != nil {
		t.Errorf("skip: %v", err)
	}
}

func TestBreakSkipsRest(t *testing.T) {
	var d Decoder
	d.Reset([]byte(`{"a":{"x":[1,2,{"deep":[3]}],"y":2},"b":[1,[2,3],4],"c":"ok"}`))
	var c string
	for k := range d.Object() {
		switch string(k) {
		case "a":
			for range d.Object() {
				for range d.Array() {
					break // leaves "x" mid-array
				}
				break // leaves "a" mid-object
			}
		case "b":
			for i := range d.Array() {
				if i == 1 {
					for range d.Array() {
						break
					}
					break
				}
			}
		case "c":
			c = d.Str()
		}
	}
	if err := d.Finish(); err != nil || c != "ok" {
		t.Errorf("c=%q err=%v", c, err)
	}
}

func TestDepthLimit(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	for _, n := range []int{MaxDepth, MaxDepth + 1, 10 * MaxDepth} {
		doc := nest(n)
		jsonOK := json.Valid(doc)
		// Reading every level.
		_, err := decodeAll(doc)
		if (err == nil) != jsonOK {
			t.Errorf("depth %d: decode err %v, json.Valid %v", n, err, jsonOK)
		}
		if n > MaxDepth && !errors.Is(err, ErrTooDeep) {
			t.Errorf("depth %d: decode err %v, want ErrTooDeep", n, err)
		}
		// Skipping.
		var d Decoder
		d.Reset(doc)
		d.Skip()
		if err := d.Finish(); (err == nil) != jsonOK || (n > MaxDepth && !errors.Is(err, ErrTooDeep)) {
			t.Errorf("depth %d: skip err %v", n, err)
		}
		// Skipping inside an object that is being read.
		d.Reset(append(append([]byte(`{"a":`), doc...), '}'))
		for range d.Object() {
		}
		if err := d.Finish(); n >= MaxDepth && !errors.Is(err, ErrTooDeep) {
			t.Errorf("depth %d+1: object skip err %v", n, err)
		}
	}
}

func TestStickyError(t *testing.T) {
	var d Decoder
	d.Reset([]byte(`{"a":"\q","b":"x"}`))
	var b string
	n := 0
	for k := range d.Object() {
		n++
		switch string(k) {
		case "a":
			d.Str()
		case "b":
			b = d.Str()
		}
	}
	if n != 1 || b != "" || !errors.Is(d.Err(), ErrSyntax) {
		t.Errorf("n=%d b=%q err=%v", n, b, d.Err())
	}
	if d.Str() != "" || d.Int() != 0 || d.Raw() != nil || d.Kind() != Invalid {
		t.Error("readers after an error must return zero values")
	}
	d.Reset([]byte(`"fine"`))
	if d.Str() != "fine" || d.Finish() != nil {
		t.Error("Reset must clear the error")
	}
}

func TestKindNames(t *testing.T) {
	var d Decoder
	for doc, want := range map[string]Kind{`{}`: Object, `[]`: Array, `"s"`: String, `-1`: Number, `true`: Bool, `null`: Null, ``: Invalid, `x`: Invalid} {
		d.Reset([]byte(doc))
		if k := d.Kind(); k != want {
			t.Errorf("Kind(%q) = %v, want %v", doc, k, want)
		}
	}
	if Object.String() != "object" || Kind(99).String() != "Kind(99)" {
		t.Error("Kind.String")
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := decodeAll([]byte(`{"a":tx}`))
	if err == nil || err.Error() != "jsonscan: syntax error at offset 5: invalid literal" {
		t.Errorf("got %v", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	line := []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello \"world\""}},"session_id":"5652e735","parent_tool_use_id":null,"uuid":"108b773c"}`)
	var d Decoder
	var text []byte
	allocs := testing.AllocsPerRun(100, func() {
		d.Reset(line)
		for k := range d.Object() {
			switch string(k) {
			case "event":
				for k := range d.Object() {
					if string(k) == "delta" {
						for k := range d.Object() {
							if string(k) == "text" {
								text, _ = d.StrBytes()
							}
						}
					}
				}
			case "type", "session_id":
				d.StrBytes()
			}
		}
	})
	if allocs != 0 || string(text) != `Hello "world"` {
		t.Errorf("%v allocs, text %q", allocs, text)
	}
}

func TestUnsafeStr(t *testing.T) {
	in := []byte(`["plain","esc\n","\u00e9",5]`)
	var d Decoder
	d.Reset(in)
	var got []string
	var oks []bool
	for range d.Array() {
		s, ok := d.UnsafeStr()
		got, oks = append(got, s), append(oks, ok)
	}
	if d.Finish() != nil || !reflect.DeepEqual(got, []string{"plain", "esc\n", "é", ""}) || !reflect.DeepEqual(oks, []bool{true, true, true, false}) {
		t.Fatalf("%q %v %v", got, oks, d.Finish())
	}
	in[2] = 'P' // shares the input: documented
	if got[0] != "Plain" || got[1] != "esc\n" {
		t.Errorf("%q", got)
	}
}

func TestStrOrRaw(t *testing.T) {
	var d Decoder
	d.Reset([]byte(`["a\"b", null, {"x": [1, 2]}, 3.5, true]`))
	var got []string
	for range d.Array() {
		got = append(got, d.StrOrRaw())
	}
	want := []string{`a"b`, "", `{"x": [1, 2]}`, "3.5", "true"}
	if d.Finish() != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%q, %v", got, d.Finish())
	}
}

// TestBorrowed: with SetBorrowed, what UnsafeStr and Raw return survives
// the input being overwritten; without it, UnsafeStr and Raw share the
// input (which is what makes the setting needed).
func TestBorrowed(t *testing.T) {
	const line = `{"plain":"hello world","esc":"a\nb","obj":{"k":[1,"v"]}}`
	read := func(d *Decoder, in []byte) (plain, esc string, obj []byte) {
		d.Reset(in)
		for k := range d.Object() {
			switch string(k) {
			case "plain":
				plain, _ = d.UnsafeStr()
			case "esc":
				esc, _ = d.UnsafeStr()
			case "obj":
				obj = d.Raw()
			}
		}
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
		return plain, esc, obj
	}
	scribble := func(b []byte) {
		for i := range b {
			b[i] = 'x'
		}
	}
	var d Decoder
	d.SetBorrowed(true)
	d.Reset(nil) // the setting outlasts Reset
	in := []byte(line)
	plain, esc, obj := read(&d, in)
	scribble(in)
	if plain != "hello world" || esc != "a\nb" || string(obj) != `{"k":[1,"v"]}` {
		t.Errorf("borrowed: after the input changed, got %q %q %q", plain, esc, obj)
	}

	d.SetBorrowed(false)
	in = []byte(line)
	plain, _, obj = read(&d, in)
	scribble(in)
	if plain == "hello world" || string(obj) == `{"k":[1,"v"]}` {
		t.Errorf("not borrowed: UnsafeStr and Raw were expected to share the input, got %q %q", plain, obj)
	}
}

func TestOwned(t *testing.T) {
	long := strings.Repeat("line of output, \"quoted\"\n\ttabbed \u00e9\x01\n", 4000) // about 170 KB
	enc, _ := json.Marshal(long)                                                      // escapes in the canonical form
	tests := []struct {
		name    string
		doc     string
		inPlace int // strings expected decoded in place
	}{
		{"long escaped string", `{"type":"x","out":` + string(enc) + `}`, 1},
		{"long, but a small part of the input", `{"out":` + string(enc) + `,"pad":"` + strings.Repeat("p", 4*len(enc)) + `"}`, 0},
		{"long, with a non-canonical escape", `{"out":` + strings.Replace(string(enc), `\n`, `\u000a`, 1) + `}`, 0},
		{"long, with a slash escape", `{"out":` + strings.Replace(string(enc), `\n`, `\/`, 1) + `}`, 0},
		{"long, with uppercase hex", `{"out":` + strings.Replace(string(enc), `\u0001`, `\u000B`, 1) + `}`, 0},
		{"long, with invalid UTF-8", `{"out":` + strings.Replace(string(enc), `\n`, "\xff", 1) + `}`, 0},
		{"long, broken after", `{"out":` + string(enc) + `,"x":tru}`, 1},
		{"short", `{"out":"a\nb"}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.doc)
			want, werr := decodeAll(data)
			in := bytes.Clone(data)
			var d Decoder
			d.SetBorrowed(true)
			d.ResetOwned(in, false)
			got := decodeAny(&d)
			err := d.Finish()
			if (err == nil) != (werr == nil) || err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("owned: %v, %v; as usual: %v", got == nil, err, werr)
			}
			if n := len(d.InPlace()); n != tt.inPlace {
				t.Errorf("%d strings decoded in place, want %d", n, tt.inPlace)
			}
			if tt.inPlace > 0 {
				// The decoded string is a view of the input.
				s := got.(map[string]any)["out"].(string)
				if p := unsafe.StringData(s); uintptr(unsafe.Pointer(p)) < uintptr(unsafe.Pointer(&in[0])) ||
					uintptr(unsafe.Pointer(p)) >= uintptr(unsafe.Pointer(&in[0]))+uintptr(len(in)) {
					t.Error("the string decoded in place does not share the input")
				}
				if s != long {
					t.Error("the string decoded in place differs from the original")
				}
				if bytes.Equal(in, data) {
					t.Error("the input was not decoded in place")
				}
			}
			if orig := d.InPlace().Original(nil, in); !bytes.Equal(orig, data) {
				t.Errorf("Original differs from the input")
			}
			if d.ValidInput() != json.Valid(data) {
				t.Errorf("ValidInput %v, json.Valid %v", d.ValidInput(), json.Valid(data))
			}
			d.Reset(nil)
			if len(d.InPlace()) != 0 {
				t.Error("Reset kept InPlace")
			}
		})
	}
}

// TestStringBlocks: the block decoder (blockPass), which finds the stops of
// 64 bytes at once, agrees with encoding/json for every kind of stop at
// every offset across two blocks: each escape, runes valid, cut short and
// invalid (also across a block's end), control characters, and escaped
// backslashes and quotes in runs; followed by more of the document, with
// stops of its own after the closing quote.
func TestStringBlocks(t *testing.T) {
	stops := []string{
		`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\u0041\u0000`,
		`\\]`, `\\\\`, `\\\"`, `\"\"\"`, "é", "€", "🎉", "é€🎉\\n", "\xc3", "\xe2\x82", "\xf0\x9f\x8e", "\x80", "\xed\xa0\x80", "\xff",
		"\x1f", "\x00", "\n", `\x`, `\u12`, `#`, `]`,
	}
	rests := []string{``, `,"k\u0000\\\"é\t"`, `,"1","` + strings.Repeat(`x\n`, 40) + `"`}
	n := 0
	for pad := range 140 {
		for _, st := range stops {
			for _, rest := range rests {
				// A first escape: the one-pass decoder; the 'b's: enough
				// input left for a block.
				doc := []byte(`["\t` + strings.Repeat("a", pad) + st + strings.Repeat("b", 150-pad%7) + `"` + rest + `]`)
				var want []string
				wantErr := json.Unmarshal(doc, &want)
				for _, fresh := range []bool{true, false} {
					var d Decoder
					d.Reset(doc)
					var got []string
					for range d.Array() {
						if fresh {
							got = append(got, d.Str())
						} else {
							b, _ := d.StrBytes()
							got = append(got, string(b))
						}
					}
					err := d.Finish()
					if (err == nil) != (wantErr == nil) || err == nil && !slices.Equal(got, want) {
						t.Fatalf("%q (fresh %v): got %q, %v; want %q, %v", doc, fresh, got, err, want, wantErr)
					}
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}

// TestBlockPass: blockPass decodes two-byte escapes and valid runes
// itself, at every offset, and leaves the input only at the closing quote
// or where fewer than blockNeed bytes are left, and then not inside an
// escape or a rune.
func TestBlockPass(t *testing.T) {
	stops := []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\\]`, `\\\\`, `\"\"`, "é", "€", "🎉", "é€🎉"}
	n := 0
	for pad := range 150 {
		for _, st := range stops {
			c := strings.Repeat("a", pad) + st + strings.Repeat("b", pad%9)
			for _, extra := range []int{0, 10, 100} {
				buf := []byte(c + `"` + strings.Repeat("z", extra))
				dst, r, end := blockPass(nil, buf, 0, msb)
				if end && r != len(c) || !end && r+blockNeed <= len(buf) {
					t.Fatalf("%q: stopped at %d (end %v), want the quote at %d", buf, r, end, len(c))
				}
				var want string
				if err := json.Unmarshal([]byte(`"`+c[:r]+`"`), &want); err != nil || !utf8.ValidString(c[:r]) {
					t.Fatalf("%q: stopped at %d, inside an escape or a rune (%v)", buf, r, err)
				}
				if string(dst) != want {
					t.Fatalf("%q: decoded %q up to %d, want %q", buf, dst, r, want)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}

// TestStopMask: stopMask (in SSE2 on amd64) flags exactly the bytes that
// a byte-at-a-time check flags, for every byte value at every position,
// with and without the bytes ≥ 0x80, and on random blocks.
func TestStopMask(t *testing.T) {
	want := func(blk *[blockNeed]byte, hi uint64) uint64 {
		var m uint64
		for i, c := range blk[:64] {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 && hi != 0 {
				m |= 1 << i
			}
		}
		return m
	}
	check := func(blk *[blockNeed]byte) {
		t.Helper()
		for _, hi := range []uint64{0, msb} {
			w := want(blk, hi)
			if got := stopMask(blk, hi); got != w {
				t.Fatalf("stopMask(%q, %#x) = %064b, want %064b", blk[:64], hi, got, w)
			}
			if got := stopMaskGo(blk, hi); got != w {
				t.Fatalf("stopMaskGo(%q, %#x) = %064b, want %064b", blk[:64], hi, got, w)
			}
		}
	}
	var blk [blockNeed]byte
	for c := range 256 {
		for i := range 64 {
			for j := range blk {
				blk[j] = 'a'
			}
			blk[i] = byte(c)
			check(&blk)
			for j := range blk {
				blk[j] = byte(c)
			}
			blk[i] = 'a'
			check(&blk)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		for j := range blk {
			blk[j] = byte(r.Uint32())
		}
		check(&blk)
	}
}
