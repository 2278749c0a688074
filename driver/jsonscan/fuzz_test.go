package jsonscan

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Run a fuzzer for real with, e.g.:
//
//	go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 5m ./driver/jsonscan/
//
// Under plain `go test` the targets replay their seeds: the inline ones,
// testdata/fuzz/<target>/, and every line of the real CLI transcripts.

func addSeeds(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-0.5e+10`, `true`, `false`, `null`, ` {"a" : [ 1 , "x" ] } `,
		`{"a":"\u00e9\ud83d\ude00\ud800x\\\"","a":2}`, "\"\xff\xed\xa0\x80\"", `[[[[{"a":[{}]}]]]]`,
		`{"a":1,}`, `[1 2]`, `{"a":tru}`, `"\u12"`, `01`, `1e400`, `-9223372036854775809`, `{"a":[}`,
		`{"type":"item.completed","item":{"id":"item_6","type":"web_search","id":"ws_123","action":{"type":"search"}}}`,
		// Long enough for blocks of 64 bytes (blockPass), with every kind
		// of stop.
		`["\t` + strings.Repeat(`ab\\]\"é€🎉\n\u00e9`, 12) + "\xc3\x28" + `x\ud83d\ude00` + strings.Repeat("z", 90) + `",1]`,
		// Runes of two and three bytes checked in blockPass itself, next
		// to the invalid forms of each lead byte it leaves to runeLen
		// (overlong, surrogate, bad continuation), and escapes across
		// the blocks' edges.
		`"` + strings.Repeat("é✓日\\n\xe0\xa0\x80\xef\xbf\xbf", 8) + "\xe0\x9f\xbfx\xed\xa0\x80x\xc1\xbfx\xc2\x41x\xe3\x81x" + strings.Repeat(`a\"`, 40) + `"`,
		// Stops at every offset of stopMask's 16-byte lanes (a period of
		// 17 bytes), DEL (not a stop), and a control character just past
		// a lane's edge.
		`"\n` + strings.Repeat(`aaaaaaaaaaaaa\"é`, 12) + "\x7f" + strings.Repeat("d", 80) + `"`,
		`"\n` + strings.Repeat("\x7f", 32) + "\x1f" + strings.Repeat("c", 80) + `"`,
	} {
		f.Add([]byte(s))
	}
	// Every line of the real transcripts.
	files, _ := filepath.Glob("../../*/testdata/real/*.stdout")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			if len(line) > 0 {
				f.Add(line)
			}
		}
	}
}

// FuzzDecode checks that reading every value of a document accepts exactly
// what encoding/json accepts and decodes to the same values; that skipping
// it accepts every valid document; and that no input makes the Decoder
// panic or run past its input.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeAll(data)
		valid := json.Valid(data)
		if valid != (err == nil) {
			t.Fatalf("json.Valid %v, decode error %v", valid, err)
		}
		var d Decoder
		d.Reset(data)
		d.Skip()
		serr := d.Finish()
		if valid && serr != nil {
			t.Fatalf("skip of a valid document: %v", serr)
		}
		if d.Offset() > len(data) {
			t.Fatalf("offset %d past the end (%d)", d.Offset(), len(data))
		}
		if !valid {
			return
		}
		if utf8.Valid(data) {
			var d Decoder
			d.ResetUTF8(data)
			v := decodeAny(&d)
			if err := d.Finish(); err != nil || !reflect.DeepEqual(v, got) {
				t.Fatalf("ResetUTF8: decoded %#v (%v)\nReset %#v", v, err, got)
			}
		}
		var want any
		if json.Unmarshal(data, &want) != nil {
			return // an out-of-range number: encoding/json fails, jsonscan clamps
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %#v\nencoding/json %#v", got, want)
		}
	})
}

// FuzzMembers checks, member by member, that raw spans and every scalar
// reader agree with encoding/json on valid input (last duplicate key wins),
// and that the readers never panic on any input.
func FuzzMembers(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Decoder
		d.Reset(data)
		got := map[string]json.RawMessage{}
		isObj := d.Kind() == Object
		for k := range d.Object() {
			got[string(k)] = d.Raw()
		}
		err := d.Finish()
		// Every reader on the whole input, valid or not: no panic.
		for _, read := range readers {
			d.Reset(data)
			read(&d)
			d.Finish()
		}
		if !isObj || !json.Valid(data) {
			return
		}
		if err != nil {
			t.Fatalf("valid object: %v", err)
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(data, &want) != nil {
			t.Fatal("encoding/json rejects a valid object")
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("raw members %q\nencoding/json %q", got, want)
		}
		for k, raw := range want {
			checkScalars(t, k, raw)
		}
	})
}

var readers = []func(*Decoder){
	func(d *Decoder) { d.Str() }, func(d *Decoder) { d.StrBytes() }, func(d *Decoder) { d.Int() },
	func(d *Decoder) { d.Float() }, func(d *Decoder) { d.Bool() }, func(d *Decoder) { d.LooseBool() },
	func(d *Decoder) { d.Null() }, func(d *Decoder) { d.Raw() }, func(d *Decoder) { d.Skip() },
	func(d *Decoder) { d.StrOrRaw() }, func(d *Decoder) { d.UnsafeStr() },
	func(d *Decoder) {
		for range d.Array() {
			d.Str()
		}
	},
}

// checkScalars compares each reader with encoding/json on one valid value.
func checkScalars(t *testing.T, key string, raw []byte) {
	var d Decoder
	read := func() *Decoder { d.Reset(raw); return &d }

	var s string
	jerr := json.Unmarshal(raw, &s)
	gs, ok := read().StrOK()
	if d.Finish() != nil || ok != (jerr == nil && raw[0] == '"') || (ok && gs != s) {
		t.Fatalf("%q: Str %q %v (err %v); encoding/json %q %v", key, gs, ok, d.Finish(), s, jerr)
	}

	var i int64
	jerr = json.Unmarshal(raw, &i)
	gi, ok := read().IntOK()
	if d.Finish() != nil || ok != (raw[0] == '-' || isDigit(raw[0])) || (jerr == nil && gi != i) {
		t.Fatalf("%q: Int %d %v (err %v); encoding/json %d %v", key, gi, ok, d.Finish(), i, jerr)
	}

	var fl float64
	jerr = json.Unmarshal(raw, &fl)
	gf, ok := read().FloatOK()
	if d.Finish() != nil || math.IsInf(gf, 0) || math.IsNaN(gf) || (jerr == nil && gf != fl) {
		t.Fatalf("%q: Float %v %v (err %v); encoding/json %v %v", key, gf, ok, d.Finish(), fl, jerr)
	}

	var b bool
	jerr = json.Unmarshal(raw, &b)
	gb, ok := read().BoolOK()
	if d.Finish() != nil || ok != (jerr == nil && (raw[0] == 't' || raw[0] == 'f')) || gb != b && ok {
		t.Fatalf("%q: Bool %v %v; encoding/json %v %v", key, gb, ok, b, jerr)
	}

	var any1 any
	if json.Unmarshal(raw, &any1) == nil {
		if got, err := decodeAll(raw); err != nil || !reflect.DeepEqual(got, any1) {
			t.Fatalf("%q: decoded %#v (%v); encoding/json %#v", key, got, err, any1)
		}
	}
}

// FuzzOwned checks that decoding owned input (ResetOwned), with every
// string that can be decoded in place so decoded (SetInPlaceAll), yields
// what decoding a copy as usual yields, error included; that the input as
// it was can be rebuilt (InPlace.Original) and validated (ValidInput);
// and that a string returned early is not changed by what is decoded
// after it.
func FuzzOwned(f *testing.F) {
	addSeeds(f)
	f.Add([]byte(`{"a":"x\n\"\\\u0001\u001f\b\f\r\t","b":"\/","c":"\u000a","d":"\u00E9","e":"` + "\xff" + `","f":["y\n"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer SetInPlaceAll(true)()
		want, werr := decodeAll(data)
		for _, validUTF8 := range []bool{false, true} {
			if validUTF8 && !utf8.Valid(data) {
				continue
			}
			in := bytes.Clone(data)
			var d Decoder
			d.SetBorrowed(validUTF8) // either way, owned strings share the input
			d.ResetOwned(in, validUTF8)
			got := decodeAny(&d)
			err := d.Finish()
			if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
				t.Fatalf("owned: error %v; as usual %v", err, werr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("owned: decoded %#v\nas usual %#v", got, want)
			}
			if orig := d.InPlace().Original(nil, in); !bytes.Equal(orig, data) {
				t.Fatalf("Original %q\ninput %q", orig, data)
			}
			if d.ValidInput() != json.Valid(data) {
				t.Fatalf("ValidInput %v, json.Valid %v", d.ValidInput(), json.Valid(data))
			}
			// Members read in turn as raw values and as strings: raw
			// values are views of the input, untouched by the strings
			// decoded in place after them.
			in = bytes.Clone(data)
			var plain Decoder
			plain.Reset(data)
			d.ResetOwned(in, validUTF8)
			raws, strs := readMembers(&d)
			wantRaws, wantStrs := readMembers(&plain)
			if !reflect.DeepEqual(raws, wantRaws) || !slices.Equal(strs, wantStrs) {
				t.Fatalf("owned members: raw %q strings %q\nas usual: raw %q strings %q", raws, strs, wantRaws, wantStrs)
			}
			if orig := d.InPlace().Original(nil, in); !bytes.Equal(orig, data) {
				t.Fatalf("members: Original %q\ninput %q", orig, data)
			}
			d.ResetOwned(bytes.Clone(data), validUTF8)
			decodeAny(&d)
			for _, sp := range [][2]int{{0, len(in)}, {len(in) / 3, 2 * len(in) / 3}, {1, len(in) - 1}} {
				if sp[0] <= sp[1] && sp[1] <= len(in) {
					if got := d.Span(sp[0], sp[1]); !bytes.Equal(got, data[sp[0]:sp[1]]) {
						t.Fatalf("Span(%d, %d) %q\ninput %q", sp[0], sp[1], got, data[sp[0]:sp[1]])
					}
				}
			}
		}
	})
}

// readMembers reads an object's members in turn as raw values and as
// strings.
func readMembers(d *Decoder) (raws [][]byte, strs []string) {
	i := 0
	for range d.Object() {
		if i%2 == 0 {
			raws = append(raws, d.Raw())
		} else {
			strs = append(strs, d.Str())
		}
		i++
	}
	return raws, strs
}
