package ptytest

import (
	"strings"
	"testing"
)

func draw(rows, cols int, out string) (string, string) {
	v := vtParser{scr: newScreen(rows, cols)}
	var text strings.Builder
	replies := v.feed([]byte(out), &text)
	return v.scr.String(), string(replies)
}

func TestScreen(t *testing.T) {
	cases := []struct {
		name, out, want string
	}{
		{"lines", "hello\r\nworld", "hello\nworld\n\n"},
		{"position", "\x1b[2;3HX", "\n  X\n\n"},
		// A renderer that rewrites only the changed cell.
		{"overwrite", "ABCDEF\x1b[1;3HZ", "ABZDEF\n\n\n"},
		{"cursor forward over unchanged cells", "ANSWER\r\x1b[3CW", "ANSWER\n\n\n"},
		{"erase line", "abc\r\ndef\x1b[1;1H\x1b[2K", "\ndef\n\n"},
		{"erase display", "abc\r\ndef\x1b[2J", "\n\n\n"},
		{"alternate screen", "main\x1b[?1049hother\x1b[?1049l", "main\n\n\n"},
		{"scroll", "1\r\n2\r\n3\r\n4\r\n5", "2\n3\n4\n5"},
		{"wrap", "abcdefghij", "abcdefgh\nij\n\n"},
		{"wide", "日本語x", "日本語x\n\n\n"},
		{"delete chars", "abcdef\x1b[1;2H\x1b[2P", "adef\n\n\n"},
		{"insert line", "a\r\nb\x1b[1;1H\x1b[L", "\na\nb\n"},
		{"utf-8 split", "\xe2\x97", "\n\n\n"}, // incomplete: nothing yet
	}
	for _, c := range cases {
		if got, _ := draw(4, 8, c.out); got != c.want {
			t.Errorf("%s: screen %q, want %q", c.name, got, c.want)
		}
	}
	// The screen answers a cursor position query with the cursor.
	if _, reply := draw(4, 8, "ab\r\ncd\x1b[6n"); reply != "\x1b[2;3R" {
		t.Errorf("cursor position reply %q", reply)
	}
}
