package wirelog

import (
	"bytes"
	"io"
	"testing"

	"pgregory.net/rapid"
)

// Property: every byte string written as a stdout line or as stdin comes
// back byte for byte, in order, whatever it holds (JSON, text, invalid
// UTF-8, surrounding space).
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gen := rapid.OneOf(
			rapid.SliceOf(rapid.Byte()),
			rapid.Map(rapid.String(), func(s string) []byte { return []byte(s) }),
			rapid.SampledFrom([][]byte{[]byte(`{"type":"x","a":[1,2]}`), []byte(" {\"a\":1}\r"), []byte(`"str"`), []byte("\xff\xfe"), {}}),
		)
		type item struct {
			in   bool
			data []byte
		}
		items := rapid.SliceOf(rapid.Custom(func(t *rapid.T) item {
			d := gen.Draw(t, "data")
			for i, c := range d {
				if c == '\n' {
					d[i] = ' ' // lines hold no newline
				}
			}
			return item{in: rapid.Bool().Draw(t, "in"), data: d}
		})).Draw(t, "items")
		var buf bytes.Buffer
		w := NewWriter(&buf, Start{Backend: "b", Deltas: true})
		for _, it := range items {
			if it.in {
				w.In(it.data)
			} else {
				w.Out(it.data)
			}
		}
		w.Exit(Exit{Code: 3, Stderr: "err\xff", Truncated: true})
		r := NewReader(&buf)
		rec, err := r.Next()
		if err != nil || rec.T != "start" || rec.Start.Backend != "b" || !rec.Start.Deltas {
			t.Fatalf("start %+v %v", rec, err)
		}
		for i, it := range items {
			rec, err := r.Next()
			want := "out"
			if it.in {
				want = "in"
			}
			if err != nil || rec.T != want || !bytes.Equal(rec.Data, it.data) {
				t.Fatalf("record %d = %+v, %v; want %s %q", i, rec, err, want, it.data)
			}
		}
		if rec, err := r.Next(); err != nil || rec.T != "exit" || rec.Exit != (Exit{Code: 3, Stderr: "err\ufffd", Truncated: true}) {
			t.Fatalf("exit %+v %v", rec, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the end: %v", err)
		}
	})
}

// The switch records of a live session read back with what they carry,
// and the start record's model is not taken for a model record's.
func TestSwitchRecords(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Start{Backend: "b", Live: true, Model: "m0", Permission: "deny"})
	w.Turn()
	w.Model("m1")
	w.Permission("ask")
	w.Steer()
	w.SteeredTurn()
	r := NewReader(&buf)
	want := []Record{{T: "turn"}, {T: "model", Model: "m1"}, {T: "permission", Mode: "ask"}, {T: "steer"}, {T: "turn", Steered: true}}
	if rec, err := r.Next(); err != nil || rec.Start.Model != "m0" || rec.Model != "" || rec.Start.Permission != "deny" {
		t.Fatalf("start %+v %v", rec, err)
	}
	for i, w := range want {
		rec, err := r.Next()
		if err != nil || rec.T != w.T || rec.Model != w.Model || rec.Mode != w.Mode || rec.Steered != w.Steered {
			t.Fatalf("record %d = %+v, %v; want %+v", i, rec, err, w)
		}
	}
}
