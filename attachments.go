package agentcli

import (
	"context"
	"errors"
	"iter"
)

// Attachment is a file sent with a prompt (Request.Attachments, or a live
// session's Turn): an image (PNG, JPEG, GIF or WebP) or a text file
// (UTF-8). Its content is Data, or the file at Path, which agentcli reads
// itself when the run starts; exactly one of the two is set.
//
// agentcli decides what an attachment is from its bytes, not from its name
// or MediaType: bytes that begin like a PNG, JPEG, GIF or WebP image are
// that image (a MediaType that names another image type is corrected, as
// Claude Code does); any other bytes are a text file when they are valid
// UTF-8 without a NUL byte and MediaType is empty or a text/* type
// (charset, if given, utf-8). Anything else (a BMP, a PDF, a binary file)
// fails the run with an *UnsupportedError before any process starts, as
// does a kind the backend cannot take (Capabilities.Attachments). A
// MediaType that names an image type for bytes that are not one is a
// *RequestError.
//
// Sizes are bounded, each with a *RequestError before anything starts:
// MaxImageBytes per image, MaxTextBytes per text file, MaxAttachmentBytes
// for all the attachments of one prompt.
//
// How each CLI carries attachments (see the backend's documentation):
// images reach the model request byte for byte where the CLI passes them
// on unchanged, which every CLI does for an image of at most 2000×2000
// pixels (codex: 2048) — except that Claude Code re-encodes an image
// larger than about 500 KB as JPEG, and codex converts every GIF to PNG.
// A larger image is downscaled by the CLI. Text files reach the model
// verbatim, as a document block (claude) or as text after the prompt
// (see TextAttachmentHeader).
type Attachment struct {
	// Name is the file's name as the model may see it (claude's document
	// title, the header of an inlined text file). Empty means the base
	// name of Path, or "attachment-N" (N counting from 1). It is never a
	// file name on disk; it must be valid UTF-8 of at most 255 bytes
	// without control characters.
	Name string
	// MediaType is the declared type, such as "image/png" or
	// "text/plain"; empty means agentcli decides from the bytes.
	MediaType string
	// Data is the file's content.
	Data []byte
	// Path is a file agentcli reads when the run starts (relative to the
	// current directory of this program, like os.Open; not to
	// Request.Dir). It must be a regular file. The path never reaches a
	// CLI's command line: where a CLI takes files by path, agentcli
	// copies the content into a private temporary directory, under a
	// name of its own, removed when the run ends.
	Path string
}

// AttachmentKind is a kind of attachment a backend can take: one of the
// constants below, or, for a backend that takes some image formats only,
// the media type of one ("image/png").
type AttachmentKind string

const (
	// AttachmentImage: PNG, JPEG, GIF and WebP images.
	AttachmentImage AttachmentKind = "image"
	// AttachmentText: text files (UTF-8).
	AttachmentText AttachmentKind = "text"
)

// Limits on attachments, enforced with a *RequestError before anything
// starts.
const (
	// MaxImageBytes is the largest image: 5 MiB, the Anthropic API's
	// per-image limit (Claude Code's own maxBase64Size); larger images
	// are refused by some model APIs whatever the CLI does.
	MaxImageBytes = 5 << 20
	// MaxTextBytes is the largest text file: 1 MiB, about 250,000
	// tokens, more than most models' whole context window holds.
	MaxTextBytes = 1 << 20
	// MaxAttachmentBytes bounds all the attachments of one prompt
	// together: 20 MiB, the Gemini API's limit on inline data in one
	// request (base64 makes a request a third larger still).
	MaxAttachmentBytes = 20 << 20
)

// TextAttachmentHeader and TextAttachmentFooter frame a text file that a
// backend sends as text after the prompt (codex, gemini, opencode):
// Sprintf(TextAttachmentHeader, Name), the file's content verbatim, then
// Sprintf(TextAttachmentFooter, Name), as one text part of its own after
// the prompt's where the CLI takes parts (codex's app-server, ACP), else
// appended to the prompt after a newline (codex exec).
const (
	// TextAttachmentHeader comes before a text file's content; %s is
	// its name.
	TextAttachmentHeader = "\n--- attached file: %s ---\n"
	// TextAttachmentFooter comes after a text file's content; %s is its
	// name.
	TextAttachmentFooter = "\n--- end of %s ---\n"
)

// Turn is one prompt of a live session with attachments, for StreamTurn
// and RunTurn.
type Turn struct {
	// Prompt is the user message; it is required, as for Session.Stream.
	Prompt string
	// Attachments are sent with the prompt (see Attachment).
	Attachments []Attachment
}

// TurnStreamer is implemented by live sessions that take a Turn: those of
// every built-in backend, and the middleware's and agentclitest's
// sessions, which forward it. Programs call StreamTurn, not the method.
type TurnStreamer interface {
	// StreamTurn sends t as the next turn, as Session.Stream sends a
	// prompt. Attachments the backend cannot take fail the turn with an
	// *UnsupportedError, and attachments that are too large or malformed
	// with a *RequestError, before anything is sent; the session goes
	// on.
	StreamTurn(ctx context.Context, t *Turn) iter.Seq2[Event, error]
}

// StreamTurn sends t as the next turn of s and yields its events, as
// s.Stream(ctx, t.Prompt) does, with t.Attachments sent along. A session
// that does not implement TurnStreamer (one of another package's
// wrappers, say) takes a Turn without attachments as a plain prompt, and
// fails one with attachments with an *UnsupportedError; nothing is sent.
// A nil t is an empty Turn, which fails: the prompt is required.
func StreamTurn(ctx context.Context, s Session, t *Turn) iter.Seq2[Event, error] {
	if t == nil {
		t = &Turn{}
	}
	if ts, ok := s.(TurnStreamer); ok {
		return ts.StreamTurn(ctx, t)
	}
	if len(t.Attachments) == 0 {
		return s.Stream(ctx, t.Prompt)
	}
	return func(yield func(Event, error) bool) {
		yield(Event{}, &UnsupportedError{Feature: "attachments on this session",
			Reason: "the session (a wrapper of another package?) does not implement agentcli.TurnStreamer"})
	}
}

// RunTurn sends t as the next turn of s and returns its Result, as
// Session.Run does (see StreamTurn). It blocks until the turn is over.
func RunTurn(ctx context.Context, s Session, t *Turn) (*Result, error) {
	var res *Result
	for ev, err := range StreamTurn(ctx, s, t) {
		if err != nil {
			var re *ResultError
			if errors.As(err, &re) && re.Result != nil {
				return re.Result, err
			}
			return res, err
		}
		if ev.Kind == EventResult {
			res = ev.Result
		}
	}
	if res == nil {
		return nil, &NoResultError{}
	}
	return res, nil
}

// StreamTurn implements TurnStreamer: it waits for a run slot, as Stream
// does, then forwards t.
func (s *limitSession) StreamTurn(ctx context.Context, t *Turn) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := s.acquire(ctx); err != nil {
			yield(Event{}, err)
			return
		}
		defer s.l.sem.Release(1)
		for ev, err := range StreamTurn(ctx, s.Session, t) {
			if !yield(ev, err) {
				return
			}
		}
	}
}
