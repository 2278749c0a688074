package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestClaudeInput checks the answer to the Agent SDK's initialize request:
// a control_response carrying the request's id, and nothing read past the
// user message.
func TestClaudeInput(t *testing.T) {
	in := strings.NewReader(`{"request_id":"req_1_abc","type":"control_request","request":{"subtype":"initialize","hooks":null}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":""}` + "\n" +
		`{"type":"never read"}` + "\n")
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := claudeInput(in, w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	var resp struct {
		Type     string `json:"type"`
		Response struct {
			Subtype   string `json:"subtype"`
			RequestID string `json:"request_id"`
		} `json:"response"`
	}
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	if resp.Type != "control_response" || resp.Response.Subtype != "success" || resp.Response.RequestID != "req_1_abc" {
		t.Errorf("got %s", out.Bytes())
	}
	if err := claudeInput(strings.NewReader("not json\n"), w); err == nil {
		t.Error("bad input accepted")
	}
}

func TestStreamJSONInput(t *testing.T) {
	for args, want := range map[string]bool{
		"-p --input-format stream-json --verbose": true,
		"--input-format=stream-json":              true,
		"--output-format stream-json":             false,
		"--input-format":                          false,
	} {
		if got := streamJSONInput(strings.Fields(args)); got != want {
			t.Errorf("%q: %v", args, got)
		}
	}
}
