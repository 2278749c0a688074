package acp

import "testing"

// A loaded session that the backend made empty (Empty) gets FirstPrefix
// before its first prompt, and only that one.
func TestLoadEmptyFirstPrefix(t *testing.T) {
	s, err := start(t, nil, Config{SessionID: "sess_old", Empty: true, FirstPrefix: "SYS\n\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, res, err := collect(t, s, "hello"); err != nil || res.Text != "echo:SYS\n\nhello" {
		t.Fatalf("first turn: %+v, %v", res, err)
	}
	if _, res, err := collect(t, s, "again"); err != nil || res.Text != "echo:again" {
		t.Fatalf("second turn: %+v, %v", res, err)
	}
}
