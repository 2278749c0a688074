// Package wirelog writes and reads agentcli's wire log: a lossless record
// of one run's (or one live session's) traffic with its CLI, from which
// the events it yielded can be rebuilt.
//
// The log is NDJSON, one record per line, each an object whose "t" says
// what it is:
//
//	{"t":"start","v":1,"backend":"claude","deltas":true,"model":"…","session_id":"…","schema":true,"drop_raw":true,"max_raw_bytes":N,"argv":[…],"time":"…"}
//	{"t":"in","text":"…"}              bytes agentcli wrote to the CLI's stdin ("b64" when not UTF-8)
//	{"t":"out","line":{…}}             a stdout line that is JSON, embedded verbatim (byte-exact)
//	{"t":"out","text":"…"}             a stdout line that is UTF-8 but not JSON
//	{"t":"out","b64":"…"}              any other stdout line, base64
//	{"t":"out","too_long":N}           a line longer than Options.MaxLineBytes (not kept)
//	{"t":"end","why":"canceled"}       the run's context ended here (or "timeout"); later lines were dropped
//	{"t":"exit","code":0,"stderr":"…"} how the CLI ended; stderr is its tail, secrets redacted
//	                                   ("truncated":true when the tail lacks its start)
//
// A stdout line is the bytes between two newlines, without the newline.
// "start" describes what the parser needs (which backend, whether deltas
// were asked for, the model and the session id the run asked for, whether
// it asked for structured output, which Raw its events kept); argv is
// informational (secrets redacted).
//
// A live session's log (version 2) has "live":true in its start record,
// with the session's permission mode, its per-turn timeout and, in
// "proto", what the backend's protocol needs to read the session as it
// did (backend-specific; never a secret). Its in records hold each
// message whole, newline included, in the order written; between its
// start and its exit record it adds:
//
//	{"t":"ready"}                                  the handshake is over (StartSession returned the session)
//	{"t":"turn"}                                   a turn began (Session.Stream): later lines are its own
//	{"t":"turn","steered":true}                    a turn of steered input began, which the Stream of the
//	                                               turn before goes on with (its result is held for this one's)
//	{"t":"model","model":"…"}                      SetModel asked the protocol to switch to the model
//	{"t":"permission","mode":"…"}                  SetPermission asked the protocol to switch to the mode
//	{"t":"steer"}                                  Steer asked the protocol to send input into the running turn
//	{"t":"abort","why":"…"}                        the turn (or, before any, the start) is being ended early:
//	                                               "interrupt", "break" (the consumer stopped reading),
//	                                               "canceled" (with "deadline":true when a deadline
//	                                               ended the context), "timeout" (with "timeout":NS) or "close"
//	{"t":"interrupt"}                              the session asked the CLI to interrupt the turn
//	{"t":"kill","message":"…"}                     the session killed the CLI for breaking its protocol
//	{"t":"close"}                                  Session.Close was called
//	{"t":"end","message":"…"}                      the session ended the turn itself: its prompt could not be sent
package wirelog

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"
)

// Version is the format version written in the start record of a run's
// log; LiveVersion that of a live session's.
const (
	Version     = 1
	LiveVersion = 2
)

// Start is the first record of a log.
type Start struct {
	Backend   string `json:"backend"`
	Deltas    bool   `json:"deltas"`
	Model     string `json:"model,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Schema    bool   `json:"schema,omitempty"` // an output schema: the final answer is JSON
	// DropRaw and MaxRawBytes are the run's Request fields: which Raw
	// its events kept.
	DropRaw     bool      `json:"drop_raw,omitempty"`
	MaxRawBytes int       `json:"max_raw_bytes,omitempty"`
	Argv        []string  `json:"argv,omitempty"`
	Time        time.Time `json:"time"`

	// Live marks a live session's log; Permission, Timeout and Proto
	// are set on it only.
	Live       bool            `json:"live,omitempty"`
	Permission string          `json:"permission,omitempty"`
	Timeout    time.Duration   `json:"timeout,omitempty"`
	Proto      json.RawMessage `json:"proto,omitempty"`
}

// Writer writes one run's log to an io.Writer. It is safe for concurrent
// use. A failed write stops the log (later records are dropped) but not the
// run; Err reports it.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer on w and writes the start record.
func NewWriter(w io.Writer, s Start) *Writer {
	l := &Writer{w: w}
	v := Version
	if s.Live {
		v = LiveVersion
	}
	rec := struct {
		T string `json:"t"`
		V int    `json:"v"`
		Start
	}{"start", v, s}
	b, err := json.Marshal(rec)
	if err != nil {
		l.err = err
		return l
	}
	l.write(b)
	return l
}

// Err returns the first write error, if any.
func (l *Writer) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *Writer) write(rec []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.buf = append(append(l.buf[:0], rec...), '\n')
	_, l.err = l.w.Write(l.buf)
}

// In records bytes written to the CLI's stdin.
func (l *Writer) In(data []byte) {
	l.write(bytesRecord(`{"t":"in",`, data, false))
}

// Out records one stdout line.
func (l *Writer) Out(line []byte) {
	l.write(bytesRecord(`{"t":"out",`, line, true))
}

// TooLong records a stdout line of n bytes that was not kept.
func (l *Writer) TooLong(n int) {
	l.write(fmt.Appendf(nil, `{"t":"out","too_long":%d}`, n))
}

// Ended records that the run's context ended ("canceled" or "timeout").
func (l *Writer) Ended(why string) { l.stringRecord("end", "why", why) }

// stringRecord writes the record {"t":t,key:value}; t and key are the
// package's own constants, value any string.
func (l *Writer) stringRecord(t, key, value string) {
	v, _ := json.Marshal(value)
	l.write(fmt.Appendf(nil, `{"t":%q,%q:%s}`, t, key, v))
}

// Ready records that a live session's handshake is over: StartSession
// returned the session.
func (l *Writer) Ready() { l.write([]byte(`{"t":"ready"}`)) }

// Turn records that a live session's turn began.
func (l *Writer) Turn() { l.write([]byte(`{"t":"turn"}`)) }

// SteeredTurn records that a live session's Stream began a turn of the
// input steered into it, as a follow-up of the turn before.
func (l *Writer) SteeredTurn() { l.write([]byte(`{"t":"turn","steered":true}`)) }

// Model records that a live session asked its protocol to switch to model
// (SetModel); what the protocol sent for it follows.
func (l *Writer) Model(model string) { l.stringRecord("model", "model", model) }

// Permission records that a live session asked its protocol to switch to
// permission mode (SetPermission); what the protocol sent for it follows.
func (l *Writer) Permission(mode string) { l.stringRecord("permission", "mode", mode) }

// Steer records that a live session asked its protocol to send input into
// the running turn (Steer); what the protocol sent for it follows. The
// input itself is in that in record.
func (l *Writer) Steer() { l.write([]byte(`{"t":"steer"}`)) }

// Abort records that a live session's turn (or its start) is being ended
// early, and why: "interrupt", "break", "canceled", "timeout" or "close".
// deadline says a deadline ended the context of a "canceled" turn;
// timeout is the limit of a "timeout".
func (l *Writer) Abort(why string, deadline bool, timeout time.Duration) {
	b, _ := json.Marshal(struct {
		T        string        `json:"t"`
		Why      string        `json:"why"`
		Deadline bool          `json:"deadline,omitempty"`
		Timeout  time.Duration `json:"timeout,omitempty"`
	}{"abort", why, deadline, timeout})
	l.write(b)
}

// Interrupt records that a live session asked the CLI to interrupt its
// turn.
func (l *Writer) Interrupt() { l.write([]byte(`{"t":"interrupt"}`)) }

// Kill records that a live session killed its CLI, with why.
func (l *Writer) Kill(message string) { l.stringRecord("kill", "message", message) }

// End records that a live session ended its running turn itself, with a
// protocol error saying why (its prompt could not be sent).
func (l *Writer) End(message string) { l.stringRecord("end", "message", message) }

// Close records that a live session was closed.
func (l *Writer) Close() { l.write([]byte(`{"t":"close"}`)) }

// errSealed is the error of a Writer after Seal.
var errSealed = errors.New("wirelog: sealed")

// Seal makes every later record a no-op: the caller's writer is no longer
// touched once Seal returns (a live session seals its log when Close
// returns, so that a CLI still exiting cannot write to a log the caller
// is already reading).
func (l *Writer) Seal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = errSealed
	}
}

// Exit is how a CLI ended: the exit record of a log, and what a run's
// parser is told (driver.Exit) and the process layer reports.
type Exit struct {
	// Code is the exit status; -1 if the process was killed by a signal.
	Code int `json:"code"`
	// Stderr is the tail of stderr: raw as a parser sees it, secrets
	// redacted in a log.
	Stderr string `json:"stderr,omitempty"`
	// Truncated reports that Stderr lacks the start of what the CLI
	// wrote (it wrote more than the tail holds).
	Truncated bool `json:"truncated,omitempty"`
}

// Exit records how the CLI ended; e.Stderr must be redacted already.
func (l *Writer) Exit(e Exit) {
	b, _ := json.Marshal(struct {
		T string `json:"t"`
		Exit
	}{"exit", e})
	l.write(b)
}

// bytesRecord encodes data byte-exactly: embedded verbatim when it is JSON
// with no surrounding space (embed only), as a JSON string when it is
// UTF-8, in base64 otherwise.
func bytesRecord(head string, data []byte, embed bool) []byte {
	out := []byte(head)
	switch {
	case embed && len(data) > 0 && !isSpace(data[0]) && !isSpace(data[len(data)-1]) && json.Valid(data):
		out = append(out, `"line":`...)
		out = append(out, data...)
	case utf8.Valid(data):
		s, _ := json.Marshal(string(data))
		out = append(out, `"text":`...)
		out = append(out, s...)
	default:
		out = append(out, `"b64":"`...)
		out = base64.StdEncoding.AppendEncode(out, data)
		out = append(out, '"')
	}
	return append(out, '}')
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Record is one record of a log, as read.
type Record struct {
	// T is the record type: "start", "in", "out", "end", "exit", or in
	// a live session's log "ready", "turn", "abort", "interrupt", "kill",
	// "close", "model", "permission" or "steer". A reader skips the
	// types it does not know.
	T string
	// Start is set on a start record.
	Start *Start
	// Data is the bytes of an in or out record.
	Data []byte
	// TooLong is the length of a line that was not kept.
	TooLong int
	// Why is the reason of an end or abort record.
	Why string
	// Deadline and Timeout are set on an abort record (see
	// Writer.Abort).
	Deadline bool
	Timeout  time.Duration
	// Message is the reason of a kill record.
	Message string
	// Steered is set on the turn record of a steered follow-up turn.
	Steered bool
	// Model is the model of a model record, Mode the permission mode of
	// a permission record.
	Model, Mode string
	// Exit is set on an exit record.
	Exit Exit
}

// ErrFormat reports a line that is not a wire-log record.
var ErrFormat = errors.New("not an agentcli wire log record")

// Reader reads a log record by record.
type Reader struct {
	r    *bufio.Reader
	line int
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 1<<16)}
}

// Next returns the next record, or io.EOF at the end of the log.
func (r *Reader) Next() (Record, error) {
	raw, err := r.r.ReadBytes('\n')
	if len(raw) == 0 && err != nil {
		return Record{}, err
	}
	r.line++
	raw = bytes.TrimRight(raw, "\n")
	var rec struct {
		T       string          `json:"t"`
		Line    json.RawMessage `json:"line"`
		Text    *string         `json:"text"`
		B64     *string         `json:"b64"`
		TooLong int             `json:"too_long"`
		Why     string          `json:"why"`
		Message string          `json:"message"`
		Dead    bool            `json:"deadline"`
		Steered bool            `json:"steered"`
		Mode    string          `json:"mode"`
		Exit
		Start
	}
	if err := json.Unmarshal(raw, &rec); err != nil || rec.T == "" {
		return Record{}, fmt.Errorf("wire log line %d: %w", r.line, ErrFormat)
	}
	out := Record{T: rec.T, TooLong: rec.TooLong, Why: rec.Why, Exit: rec.Exit, Message: rec.Message, Deadline: rec.Dead,
		Steered: rec.Steered, Mode: rec.Mode}
	switch rec.T {
	case "abort":
		out.Timeout = rec.Start.Timeout // the same key
	case "model":
		out.Model = rec.Start.Model // the same key
	}
	switch {
	case rec.T == "start":
		s := rec.Start
		out.Start = &s
	case rec.Line != nil:
		out.Data = []byte(rec.Line)
	case rec.Text != nil:
		out.Data = []byte(*rec.Text)
	case rec.B64 != nil:
		b, err := base64.StdEncoding.DecodeString(*rec.B64)
		if err != nil {
			return Record{}, fmt.Errorf("wire log line %d: %w", r.line, ErrFormat)
		}
		out.Data = b
	}
	return out, nil
}
