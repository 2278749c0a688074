package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/agentcli/agentcli"
	"pgregory.net/rapid"
)

var errGen = rapid.SampledFrom([]error{
	nil,
	&agentcli.ResultError{Backend: "x", APIStatus: 500},
	&agentcli.ResultError{Backend: "x", Subtype: "error_max_turns"},
	&agentcli.ExitError{Backend: "x", Code: 1, Kind: agentcli.ErrSessionNotFound},
	&agentcli.TimeoutError{Backend: "x"},
	&agentcli.CanceledError{Backend: "x", Err: errStopped},
	errors.New("anything"),
})

func resultGen() *rapid.Generator[*agentcli.Result] {
	return rapid.Custom(func(t *rapid.T) *agentcli.Result {
		if rapid.Bool().Draw(t, "nil") {
			return nil
		}
		return &agentcli.Result{
			Text:      rapid.SampledFrom([]string{"", " ", "hi", "a longer answer\nwith lines"}).Draw(t, "text"),
			SessionID: rapid.SampledFrom([]string{"", "s1", "s2"}).Draw(t, "session"),
		}
	})
}

// TestReplyForProperty: an error reply has the error and no text; a
// success has a non-empty text and the result's session id; the channel is
// always set.
func TestReplyForProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		channel := rapid.StringMatching(`[0-9a-z]{1,20}`).Draw(t, "channel")
		res := resultGen().Draw(t, "result")
		err := errGen.Draw(t, "err")
		r := ReplyFor(channel, res, err)
		if r.Channel != channel {
			t.Fatalf("channel %q, want %q", r.Channel, channel)
		}
		if (r.Err != nil) == (r.Text != "") {
			t.Fatalf("error xor text violated: %+v", r)
		}
		if err != nil && !errors.Is(r.Err, err) {
			t.Fatalf("error %v lost: %+v", err, r)
		}
		if err == nil && res != nil {
			if r.SessionID != res.SessionID {
				t.Fatalf("session %q, want %q", r.SessionID, res.SessionID)
			}
			if strings.TrimSpace(res.Text) != "" && r.Text != res.Text {
				t.Fatalf("text %q, want %q", r.Text, res.Text)
			}
		}
		if errors.Is(err, agentcli.ErrSessionNotFound) && r.SessionID != "" {
			t.Fatalf("kept the session %q the CLI does not know", r.SessionID)
		}
	})
}

// fenceLines counts the lines that open or close a code block.
func fenceLines(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), fence) {
			n++
		}
	}
	return n
}

// content is s without fence lines and whitespace: what a split must keep.
func content(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), fence) {
			continue
		}
		for _, r := range l {
			if !unicode.IsSpace(r) {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// textGen makes texts of lines: prose (words, some very long), blank
// lines, and code blocks with short fence lines.
func textGen() *rapid.Generator[string] {
	word := rapid.OneOf(
		rapid.StringMatching(`[a-zé😀]{1,12}`),
		rapid.Custom(func(t *rapid.T) string { // longer than a part
			return strings.Repeat(rapid.StringMatching(`[a-z😀]{1,10}`).Draw(t, "unit"), rapid.IntRange(20, 400).Draw(t, "times"))
		}),
	)
	line := rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(word, 0, 30).Draw(t, "words"), " ")
	})
	return rapid.Custom(func(t *rapid.T) string {
		var lines []string
		n := rapid.IntRange(0, 60).Draw(t, "blocks")
		for range n {
			if rapid.IntRange(0, 4).Draw(t, "kind") == 0 {
				lang := rapid.SampledFrom([]string{"", "go", "python"}).Draw(t, "lang")
				lines = append(lines, fence+lang)
				lines = append(lines, rapid.SliceOfN(line, 0, 20).Draw(t, "code")...)
				lines = append(lines, fence)
				continue
			}
			lines = append(lines, line.Draw(t, "line"))
		}
		return strings.Join(lines, "\n")
	})
}

// TestSplitMessageProperty: every part fits; every part has balanced code
// fences (a block cut in two is closed and reopened); nothing is lost or
// added but fences and whitespace; a text that fits is one part, itself.
func TestSplitMessageProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := textGen().Draw(t, "text")
		limit := rapid.IntRange(64, 2000).Draw(t, "limit")
		parts := splitMessage(text, limit)
		if textLen(text) <= limit {
			if len(parts) != 1 || parts[0] != text {
				t.Fatalf("a text that fits was split: %q", parts)
			}
			return
		}
		for i, p := range parts {
			if textLen(p) > limit {
				t.Fatalf("part %d has length %d > %d", i, textLen(p), limit)
			}
			if fenceLines(p)%2 != 0 {
				t.Fatalf("part %d has unbalanced fences:\n%s", i, p)
			}
			if strings.TrimSpace(p) == "" {
				t.Fatalf("part %d is empty", i)
			}
		}
		if got, want := content(strings.Join(parts, "\n")), content(text); got != want {
			t.Fatalf("content changed:\n got %.200q\nwant %.200q", got, want)
		}
	})
}

func TestSplitMessageReopensLanguage(t *testing.T) {
	code := "```go\n" + strings.Repeat("fmt.Println(\"hello, world\")\n", 100) + "```"
	parts := splitMessage("Here:\n"+code+"\nDone.", 2000)
	if len(parts) < 2 {
		t.Fatalf("%d parts", len(parts))
	}
	for i, p := range parts[1:] {
		if !strings.HasPrefix(p, "```go\n") {
			t.Errorf("part %d does not reopen the go block: %.40q", i+1, p)
		}
	}
	if !strings.HasSuffix(parts[0], "\n```") {
		t.Errorf("part 0 does not close the block: …%q", parts[0][len(parts[0])-20:])
	}
	// Words are not cut when a line can be split at a space.
	prose := strings.Repeat("word ", 1000)
	for i, p := range splitMessage(prose, 2000) {
		if strings.Contains(strings.TrimSpace(p), "wor ") || !strings.HasSuffix(strings.TrimSpace(p), "word") {
			t.Errorf("part %d cut a word: …%q", i, p[max(0, len(p)-20):])
		}
	}
}

func TestToolLine(t *testing.T) {
	tests := []struct {
		tool agentcli.ToolUse
		want string
	}{
		{agentcli.ToolUse{Name: "Bash", Input: json.RawMessage(`{"command":"ls -la\n  | head","description":"list"}`)}, "🔧 Bash: `ls -la | head`"},
		{agentcli.ToolUse{Name: "Read", Input: json.RawMessage(`{"file_path":"/src/main.go"}`)}, "🔧 Read: `/src/main.go`"},
		{agentcli.ToolUse{Name: "Bash", RawName: "command_execution", Input: json.RawMessage(`{"command":["git","status"]}`)}, "🔧 Bash: `git status`"},
		{agentcli.ToolUse{Name: "", RawName: "mcp__x__y", Input: json.RawMessage(`{"n":1}`)}, "🔧 mcp__x__y: `{\"n\":1}`"},
		{agentcli.ToolUse{Name: "TodoWrite"}, "🔧 TodoWrite"},
		{agentcli.ToolUse{Name: "Bash", Input: json.RawMessage(`{"command":"echo ` + "`x`" + `"}`)}, "🔧 Bash: `echo 'x'`"},
	}
	for _, tt := range tests {
		if got := toolLine(&tt.tool); got != tt.want {
			t.Errorf("toolLine(%s %s) = %q, want %q", tt.tool.Name, tt.tool.Input, got, tt.want)
		}
	}
	long := agentcli.ToolUse{Name: "Bash", Input: json.RawMessage(`{"command":"` + strings.Repeat("x", 500) + `"}`)}
	if n := len([]rune(toolLine(&long))); n > 100 {
		t.Errorf("tool line of %d runes", n)
	}
}

func TestPreviewFits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := textGen().Draw(t, "text")
		tools := rapid.SliceOfN(rapid.StringMatching(`🔧 [A-Za-z]{1,10}: .{0,80}`), 0, 12).Draw(t, "tools")
		p := preview(tools, text, discordMaxLen)
		if textLen(p) > discordMaxLen {
			t.Fatalf("preview of length %d", textLen(p))
		}
		if strings.TrimSpace(p) == "" {
			t.Fatal("empty preview")
		}
	})
}

func TestErrorText(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&agentcli.CanceledError{Backend: "x", Err: errStopped}, "Stopped"},
		{errors.Join(agentcli.ErrInterrupted), "Stopped"},
		{&agentcli.TimeoutError{Backend: "x"}, "Query timed out"},
		{&agentcli.ResultError{Backend: "x", APIStatus: 429, Kind: agentcli.ErrRateLimited}, "rate-limiting"},
		{&agentcli.ExitError{Backend: "x", Code: 1, Kind: agentcli.ErrAuth}, "credentials"},
		{errors.New("line one\nline two"), "failed: line one"},
	} {
		got := errorText(tt.err, 0)
		if !strings.Contains(got, tt.want) || strings.Contains(got, "line two") {
			t.Errorf("errorText(%v) = %q, want it to say %q", tt.err, got, tt.want)
		}
	}
}

func TestSummary(t *testing.T) {
	cost := 0.5
	for _, tt := range []struct {
		d    time.Duration
		res  *agentcli.Result
		want string
	}{
		{40 * time.Millisecond, nil, "-# ✅ 0.0 s"},
		{4250 * time.Millisecond, &agentcli.Result{Usage: agentcli.Usage{InputTokens: 1200, CacheReadTokens: 34000, OutputTokens: 5}},
			"-# ✅ 4.2 s · 35,200 tokens in, 5 out"},
		{192 * time.Second, &agentcli.Result{CostUSD: &cost, Usage: agentcli.Usage{OutputTokens: 1234567, Cumulative: true}},
			"-# ✅ 3m12s · 0 tokens in, 1,234,567 out (whole session) · $0.5000"},
	} {
		if got := summary(tt.d, tt.res); got != tt.want {
			t.Errorf("summary(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestErrorDetail: the line that names the error, never Node's warnings
// before it (finding 3).
func TestErrorDetail(t *testing.T) {
	dep := "(node:77) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.\n" +
		"(Use `node --trace-deprecation ...` to show where the warning was created)\n"
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&agentcli.ExitError{Backend: "x", Code: 1, Stderr: dep + "Error: connect ECONNREFUSED 127.0.0.1:443\n    at TCPConnectWrap.afterConnect"},
			"exit status 1: Error: connect ECONNREFUSED 127.0.0.1:443"},
		{&agentcli.ExitError{Backend: "x", Code: 2, Stderr: dep + "usage: codex [OPTIONS]\nerror: unexpected argument '--bogus' found"},
			"exit status 2: error: unexpected argument '--bogus' found"},
		{&agentcli.ExitError{Backend: "x", Code: 1, Stderr: dep}, "exit status 1"},
		{&agentcli.ExitError{Backend: "x", Code: -1}, "the CLI was killed"},
		{&agentcli.NoResultError{Backend: "x", Code: 1, Stderr: dep + "TypeError: Cannot read properties of undefined (reading 'id')"},
			"the CLI ended without an answer (exit status 1): TypeError: Cannot read properties of undefined (reading 'id')"},
		{&agentcli.ResultError{Backend: "x", APIStatus: 400, Message: "model: claude-9 not found"}, "API status 400: model: claude-9 not found"},
		{&agentcli.ResultError{Backend: "x", Subtype: "error_max_turns", TerminalReason: "max_turns"}, "error result (error_max_turns): max_turns"},
		{errors.New(dep + "fatal: not a git repository"), "fatal: not a git repository"},
	} {
		if got := errorDetail(tt.err); got != tt.want {
			t.Errorf("errorDetail(%v)\n got %q\nwant %q", tt.err, got, tt.want)
		}
	}
}
