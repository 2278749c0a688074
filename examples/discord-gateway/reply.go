package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
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
	// Channel is the conversation the reply answers in; always set.
	Channel string
	// Text is the answer of a successful run.
	Text string
	// SessionID is the agent session the run belongs to, when known; the
	// conversation's next message resumes it.
	SessionID string
	// Err is why the run failed.
	Err error
	// Partial is what the failed run had shown already (text and tool
	// calls); the run was not retried, so that nothing runs twice.
	Partial string
	// Summary is the line shown under a successful answer.
	Summary string
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
// the log; users see what it says in one line: the CLI's own error rather
// than the runtime's warnings around it (see errorDetail).
func errorText(err error, timeout time.Duration) string {
	switch {
	case errors.Is(err, errStopped), errors.Is(err, agentcli.ErrInterrupted):
		return "⏹ Stopped."
	case errors.Is(err, errShutdown):
		return "⏹ Not finished: the gateway is restarting. Please send that again in a minute."
	case errors.Is(err, agentcli.ErrTimeout):
		if timeout > 0 {
			return fmt.Sprintf("⏱ Query timed out after %v: the agent was stopped.", timeout)
		}
		return "⏱ Query timed out: the agent was stopped."
	case errors.Is(err, agentcli.ErrRateLimited):
		return "⚠️ The model API is rate-limiting this bot; please try again later."
	case errors.Is(err, agentcli.ErrAuth):
		return "⚠️ The agent's credentials were rejected; the operator has to log the CLI in again."
	}
	return "⚠️ The agent failed: " + shorten(errorDetail(err), 300)
}

// errorDetail says in one line what went wrong: for a CLI that exited or
// ended without a result, its exit status and the line of its stderr that
// names the error (not Node's deprecation warnings before it); for an
// error result, the CLI's message; otherwise the error's most telling line.
func errorDetail(err error) string {
	var ee *agentcli.ExitError
	var nr *agentcli.NoResultError
	var re *agentcli.ResultError
	switch {
	case errors.As(err, &re):
		s := re.Message
		if s == "" {
			s = strings.TrimPrefix(re.Error(), re.Backend+": ")
		} else if re.APIStatus != 0 {
			s = fmt.Sprintf("API status %d: %s", re.APIStatus, s)
		}
		return oneLine(telling(s))
	case errors.As(err, &ee):
		s := fmt.Sprintf("exit status %d", ee.Code)
		if ee.Code < 0 {
			s = "the CLI was killed"
		}
		if line := telling(ee.Stderr); line != "" {
			s += ": " + line
		} else if ee.Hint != "" {
			s += ": " + ee.Hint
		}
		return s
	case errors.As(err, &nr):
		s := fmt.Sprintf("the CLI ended without an answer (exit status %d)", nr.Code)
		if line := telling(nr.Stderr); line != "" {
			s += ": " + line
		}
		return s
	}
	if line := telling(err.Error()); line != "" {
		return line
	}
	return err.Error()
}

var (
	// noiseLine matches what runtimes print around an error: Node's
	// warnings and their "(Use `node --trace-...`)" hints, stack frames,
	// source excerpts and carets.
	noiseLine = regexp.MustCompile(`^\(node:\d+\)|^\(Use ` + "`" + `node |^at |^\^+$|^npm (warn|notice)|Warning:`)
	// errorLine matches a line that names an error ("Error: boom",
	// "TypeError: ...", "error: ...", "fatal: ...").
	errorLine = regexp.MustCompile(`^([\w.$]*(Error|Exception)(\s*\[[^\]]*\])?:|(?i:error|fatal|panic)\b)`)
)

// telling returns the line of text that best says what failed: the first
// that names an error, else the first that is not noise; "" when there is
// none.
func telling(text string) string {
	first := ""
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || noiseLine.MatchString(l) {
			continue
		}
		if errorLine.MatchString(l) {
			return l
		}
		if first == "" {
			first = l
		}
	}
	return first
}

// summary is the line shown under a finished answer (Discord's small
// print): how long it took, the tokens and the cost, where the CLI reports
// them.
func summary(d time.Duration, res *agentcli.Result) string {
	parts := []string{"✅ " + humanDuration(d)}
	if res != nil {
		u := res.Usage
		in := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
		if in > 0 || u.OutputTokens > 0 {
			t := fmt.Sprintf("%s tokens in, %s out", thousands(in), thousands(u.OutputTokens))
			if u.Cumulative {
				t += " (whole session)"
			}
			parts = append(parts, t)
		}
		if res.CostUSD != nil {
			parts = append(parts, fmt.Sprintf("$%.4f", *res.CostUSD))
		}
	}
	return "-# " + strings.Join(parts, " · ")
}

// humanDuration shows d for people: "4.2 s" below a minute, "3m12s"
// above.
func humanDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// thousands formats n with thin separators: 12,345.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
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
	sp := &splitter{limit: max(limit, 64)}
	for _, line := range strings.Split(text, "\n") {
		sp.line(line)
	}
	if sp.cur.Len() > 0 {
		s := sp.cur.String()
		if strings.TrimSpace(s) != "" && s != sp.open {
			sp.parts = append(sp.parts, s)
		}
	}
	return sp.parts
}

// splitter is the state of splitMessage: the parts so far and the one
// being filled.
type splitter struct {
	limit  int
	parts  []string
	cur    strings.Builder
	curLen int    // textLen of cur
	open   string // the opening fence line of the code block we are in, or ""
}

// closingFence ends a code block that a part cuts.
const closingFence = "\n" + fence

// fits reports that line, and then a closing fence when the line leaves
// a code block open (inBlock), fit in the current part.
func (sp *splitter) fits(line string, inBlock bool) bool {
	n := sp.curLen + textLen(line)
	if sp.cur.Len() > 0 {
		n++ // the line break
	}
	if inBlock {
		n += textLen(closingFence)
	}
	return n <= sp.limit
}

// flush ends the current part (closing its code block) and starts the
// next (reopening it).
func (sp *splitter) flush() {
	s := sp.cur.String()
	if sp.open != "" {
		s += closingFence
	}
	if strings.TrimSpace(s) != "" {
		sp.parts = append(sp.parts, s)
	}
	sp.cur.Reset()
	sp.curLen = 0
	if sp.open != "" {
		sp.cur.WriteString(sp.open)
		sp.curLen = textLen(sp.open)
	}
}

// add appends s to the current part, on a line of its own.
func (sp *splitter) add(s string) {
	if sp.cur.Len() > 0 {
		sp.cur.WriteByte('\n')
		sp.curLen++
	}
	sp.cur.WriteString(s)
	sp.curLen += textLen(s)
}

// line adds one line of the text: to the current part, to a new one, or
// cut into pieces when no part can hold it.
func (sp *splitter) line(line string) {
	after := sp.open // the code block open after the line
	if strings.HasPrefix(strings.TrimSpace(line), fence) {
		if sp.open == "" {
			after = reopenLine(line)
		} else {
			after = ""
		}
	}
	if sp.fits(line, after != "") {
		sp.add(line)
		sp.open = after
		return
	}
	if sp.open != "" && after == "" {
		// A closing fence that does not fit: the part's own closing
		// fence ends the block.
		sp.flush()
		sp.cur.Reset()
		sp.curLen = 0
		sp.open = ""
		return
	}
	// The line does not fit: start a new part, unless this one holds
	// only a reopened fence.
	if sp.curLen > textLen(sp.open) {
		sp.flush()
	}
	if sp.fits(line, after != "") {
		sp.add(line)
		sp.open = after
		return
	}
	// Too long for any part: cut it into pieces.
	for rest := line; rest != ""; {
		room := sp.limit - sp.curLen
		if sp.cur.Len() > 0 {
			room--
		}
		if sp.open != "" {
			room -= textLen(closingFence)
		}
		piece, tail := cutAt(rest, room)
		if piece == "" {
			sp.flush()
			continue
		}
		sp.add(piece)
		rest = tail
		if rest != "" {
			sp.flush()
		}
	}
	sp.open = after
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
