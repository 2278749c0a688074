package agentcli

import (
	"io"
	"iter"
)

// Replay reads a wire log written for a run of b's backend (see
// Request.WireLog) and yields the events that run yielded, in order, ending
// with its result or error, exactly as the live run did except for
// Result.Duration (zero here). A log that ends before the run did (the run
// was still going) ends with an error after the events it holds. Replay
// fails with an *UnsupportedError when no backend in b's chain implements
// wire log replay.
//
// A live session's log (StartSession, or a run whose permission mode
// goes through a session) replays as the session's turns, one after the
// other: each turn's events, each turn ending with its EventResult or its
// error (an interrupted turn's, a failed turn's), and the sequence goes on
// with the next turn after an error (a Stream that steered input followed
// with a turn of its own, see Steer, is one turn here too, with one
// result); a session that failed to start yields
// that error alone. A turn whose consumer stopped reading is replayed to
// its end, an error matching ErrInterrupted. Errors about the log itself
// (not a wire log, cut short, written by a backend whose protocol has
// changed since) are *ParseError.
//
// The log is NDJSON, one record per line; "t" says what a record is:
//
//	{"t":"start","v":1,"backend":…,"deltas":…,"model":…,"session_id":…,"drop_raw":…,"max_raw_bytes":…,"argv":[…],"time":…}
//	{"t":"in","text":"…"} or {"t":"in","b64":"…"}   bytes written to the CLI's stdin
//	{"t":"out","line":{…}}                          a stdout line that is JSON, embedded verbatim
//	{"t":"out","text":"…"} or {"t":"out","b64":"…"} any other stdout line
//	{"t":"out","too_long":N}                        a line over Options.MaxLineBytes (not kept)
//	{"t":"end","why":"canceled"|"timeout"}          the run's context ended; later lines were dropped
//	{"t":"exit","code":N,"stderr":"…"}              how the CLI ended (stderr tail, secrets redacted)
//
// Each in and out record holds its bytes exactly (a stdout line without
// its newline). The start record holds what the parser needs; argv is
// informational, with secrets redacted. A run cancelled while its last line
// was being delivered may have yielded fewer of that line's events than
// Replay does.
//
// A live session's log has "v":2 and "live":true in its start record, with
// "permission", "timeout" (each turn's, in nanoseconds) and "proto" (what
// the backend's protocol needs to read the session as it did; no secret).
// Its in records are the messages the session wrote, whole, in the order
// written, newline included. Besides in, out and exit it has:
//
//	{"t":"ready"}                                   the handshake is over: StartSession returned the session
//	{"t":"turn"}                                    a turn began: the lines after it are its own
//	{"t":"turn","steered":true}                     a turn of steered input began, going on with the Stream
//	                                                of the turn before (one result for both)
//	{"t":"model","model":"…"}                       SetModel: what the switch sent follows
//	{"t":"permission","mode":"…"}                   SetPermission: what the switch sent follows
//	{"t":"steer"}                                   Steer into the running turn: what it sent (the input) follows
//	{"t":"abort","why":"…"}                         the turn (or, before ready, the start) is being ended early:
//	                                                "interrupt", "break" (the consumer stopped reading), "canceled"
//	                                                (with "deadline":true for a deadline), "timeout" (with
//	                                                "timeout":NS) or "close"
//	{"t":"interrupt"}                               the session asked the CLI to interrupt the turn
//	{"t":"end","message":"…"}                       the session ended the turn itself: its prompt could not be sent
//	{"t":"kill","message":"…"}                      the session killed the CLI for breaking its protocol
//	{"t":"close"}                                   Session.Close was called
//
// A turn ended early at the very moment its last line arrived may replay
// as ended either way. A reader skips the record types it does not know.
func Replay(b Backend, log io.Reader) iter.Seq2[Event, error] {
	if r, ok := find[interface {
		Replay(io.Reader) iter.Seq2[Event, error]
	}](b); ok {
		return r.Replay(log)
	}
	return func(yield func(Event, error) bool) {
		yield(Event{}, &UnsupportedError{Backend: nameOf(b), Feature: "wire log replay"})
	}
}
