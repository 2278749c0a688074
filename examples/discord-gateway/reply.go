package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// Reply is what the gateway answers one message with: an error and no
// text, or a text (never empty) and the session id it belongs to.
type Reply struct {
	// Channel is where the reply goes; always set.
	Channel string
	// Text is the answer of a successful run.
	Text string
	// SessionID is the agent session the run belongs to, when known; the
	// channel's next message resumes it.
	SessionID string
	// Err is why the run failed.
	Err error
}

// emptyAnswer stands for a successful run that produced no text.
const emptyAnswer = "(the agent finished without a text answer)"

// ReplyFor maps a run's outcome to the reply for channel. A run that
// failed gives an error reply; it keeps the session id of a result that
// came with the error (the conversation exists and may go on), except
// when the error says the session does not exist.
func ReplyFor(channel string, res *agentcli.Result, err error) Reply {
	r := Reply{Channel: channel}
	if res != nil && !errors.Is(err, agentcli.ErrSessionNotFound) {
		r.SessionID = res.SessionID
	}
	switch {
	case err != nil:
		r.Err = err
	case res == nil:
		r.Err = errors.New("the agent ended without a result")
	default:
		r.Text = res.Text
		if strings.TrimSpace(r.Text) == "" {
			r.Text = emptyAnswer
		}
	}
	return r
}

// errStopped is the cause of a turn cancelled by /stop.
var errStopped = errors.New("stopped by /stop")

// errShutdown is the cause of runs cancelled by a shutdown.
var errShutdown = errors.New("the gateway is shutting down")

// errorText is the message shown for a failed run. The full error goes to
// the log; users see its first line, shortened.
func errorText(err error, timeout time.Duration) string {
	switch {
	case errors.Is(err, errStopped), errors.Is(err, agentcli.ErrInterrupted):
		return "⏹ Stopped."
	case errors.Is(err, errShutdown):
		return "⏹ Not finished: the gateway is restarting. Please send that again in a minute."
	case errors.Is(err, agentcli.ErrTimeout):
		return fmt.Sprintf("⏱ The agent took longer than %v and was stopped.", timeout)
	case errors.Is(err, agentcli.ErrRateLimited):
		return "⚠️ The model API is rate-limiting this bot; please try again later."
	case errors.Is(err, agentcli.ErrAuth):
		return "⚠️ The agent's credentials were rejected; the operator has to log the CLI in again."
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return "⚠️ The agent failed: " + shorten(msg, 300)
}

// shorten cuts s to at most n runes, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// toolLine shows a tool call in one short line: the canonical name and the
// most telling field of its input.
func toolLine(t *agentcli.ToolUse) string {
	name := t.Name
	if name == "" {
		name = t.RawName
	}
	arg := toolArg(t.Input)
	if arg == "" {
		return "🔧 " + name
	}
	return "🔧 " + name + ": `" + strings.ReplaceAll(arg, "`", "'") + "`"
}

// toolArg picks the input field that says what the call does.
func toolArg(input json.RawMessage) string {
	var m map[string]any
	if len(input) == 0 || json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd", "file_path", "path", "filePath", "absolute_path",
		"pattern", "query", "url", "description", "prompt"} {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			return shorten(oneLine(s), 80)
		}
		if a, ok := m[k].([]any); ok && len(a) > 0 { // codex: command as argv
			parts := make([]string, 0, len(a))
			for _, x := range a {
				parts = append(parts, fmt.Sprint(x))
			}
			return shorten(oneLine(strings.Join(parts, " ")), 80)
		}
	}
	b, _ := json.Marshal(m)
	return shorten(string(b), 80)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// textLen is the length of s as Discord counts it (UTF-16 code units, a
// bound on the number of characters).
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

const fence = "```"

// splitMessage splits text into parts of at most limit (textLen) each, at
// line breaks where it can, else at spaces, else anywhere between two
// runes. A code block cut in two is closed at the end of one part and
// reopened (with its language) at the start of the next. limit <= 0 means
// no limit; limit must otherwise leave room for the fences (at least 64).
func splitMessage(text string, limit int) []string {
	if limit <= 0 || textLen(text) <= limit {
		return []string{text}
	}
	limit = max(limit, 64)
	var (
		parts  []string
		cur    strings.Builder
		curLen int
		open   string // the opening fence line of the code block we are in, or ""
	)
	closing := "\n" + fence
	reserve := func(inBlock bool) int {
		if inBlock {
			return textLen(closing)
		}
		return 0
	}
	flush := func() {
		s := cur.String()
		if open != "" {
			s += closing
		}
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
		cur.Reset()
		curLen = 0
		if open != "" {
			cur.WriteString(open)
			curLen = textLen(open)
		}
	}
	add := func(s string) {
		if cur.Len() > 0 {
			cur.WriteByte('\n')
			curLen++
		}
		cur.WriteString(s)
		curLen += textLen(s)
	}
	for _, line := range strings.Split(text, "\n") {
		after := open
		if strings.HasPrefix(strings.TrimSpace(line), fence) {
			if open == "" {
				after = reopenLine(line)
			} else {
				after = ""
			}
		}
		sep := 0
		if cur.Len() > 0 {
			sep = 1
		}
		if curLen+sep+textLen(line)+reserve(after != "") <= limit {
			add(line)
			open = after
			continue
		}
		if open != "" && after == "" {
			// A closing fence that does not fit: the part's own closing
			// fence ends the block.
			flush()
			cur.Reset()
			curLen = 0
			open = ""
			continue
		}
		// The line does not fit: start a new part, unless this one holds
		// only a reopened fence.
		if curLen > textLen(open) {
			flush()
		}
		sep = 0
		if cur.Len() > 0 {
			sep = 1
		}
		if curLen+sep+textLen(line)+reserve(after != "") <= limit {
			add(line)
			open = after
			continue
		}
		// Too long for any part: cut it into pieces.
		rest := line
		for rest != "" {
			sep = 0
			if cur.Len() > 0 {
				sep = 1
			}
			room := limit - curLen - sep - reserve(open != "")
			piece, tail := cutAt(rest, room)
			if piece == "" {
				flush()
				continue
			}
			add(piece)
			rest = tail
			if rest != "" {
				flush()
			}
		}
		open = after
	}
	if cur.Len() > 0 {
		s := cur.String()
		if strings.TrimSpace(s) != "" && s != open {
			parts = append(parts, s)
		}
	}
	return parts
}

// reopenLine is the fence line that reopens the code block opened by
// line: the fence and its language, bounded so that it always fits.
func reopenLine(line string) string {
	s := strings.TrimSpace(line)
	if textLen(s) > 24 {
		return fence
	}
	return s
}

// cutAt splits s into a head of at most room (textLen) and the rest:
// after the last space within room when there is one, else at the last
// rune boundary within room.
func cutAt(s string, room int) (string, string) {
	if room <= 0 {
		return "", s
	}
	if textLen(s) <= room {
		return s, ""
	}
	n, end, lastSpace := 0, 0, -1
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > room {
			break
		}
		n += w
		end = i + utf8.RuneLen(r)
		if unicode.IsSpace(r) {
			lastSpace = end
		}
	}
	if lastSpace > 0 {
		end = lastSpace
	}
	return s[:end], s[end:]
}

// preview renders the message shown while a run goes on: the tool calls
// so far, then the text so far, cut from the front to fit limit.
func preview(tools []string, text string, limit int) string {
	var b strings.Builder
	const keep = 5 // the last tool calls shown
	if len(tools) > keep {
		fmt.Fprintf(&b, "🔧 … %d earlier tool calls\n", len(tools)-keep)
		tools = tools[len(tools)-keep:]
	}
	for _, t := range tools {
		b.WriteString(t)
		b.WriteByte('\n')
	}
	s := b.String() + text
	if strings.TrimSpace(s) == "" {
		return "⏳ Working…"
	}
	if limit > 0 && textLen(s)+2 > limit {
		// Keep the end, where the news is: "…" + tail + " ▍" fits.
		n, cut := 0, len(s)
		for cut > 0 {
			r, size := utf8.DecodeLastRuneInString(s[:cut])
			if n+utf16.RuneLen(r)+3 > limit {
				break
			}
			n += utf16.RuneLen(r)
			cut -= size
		}
		s = "…" + s[cut:]
	}
	return s + " ▍"
}
