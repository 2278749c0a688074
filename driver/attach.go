package driver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// LoadAttachments checks and loads the attachments of a prompt
// (agentcli.Attachment documents the rules) for a backend named backend
// that takes the kinds in kinds (agentcli.AttachmentImage for every
// image format, or the media types of the formats it takes, such as
// "image/png"): it reads each Path (a regular file,
// bounded), decides each attachment's kind from its bytes, enforces the
// limits and returns copies with Data set, Path empty, MediaType the
// canonical type ("image/png", "image/jpeg", "image/gif", "image/webp",
// or the text/* type declared, "text/plain" by default, without
// parameters) and Name set. A kind not allowed, or one the backend does
// not take, is an *agentcli.UnsupportedError; anything else wrong an
// *agentcli.RequestError naming "Attachments[i]". It starts nothing; a
// nil or empty atts returns nil.
func LoadAttachments(backend string, kinds []agentcli.AttachmentKind, atts []agentcli.Attachment) ([]agentcli.Attachment, error) {
	if len(atts) == 0 {
		return nil, nil
	}
	if len(kinds) == 0 {
		return nil, &agentcli.UnsupportedError{Backend: backend, Feature: "attachments"}
	}
	out := make([]agentcli.Attachment, 0, len(atts))
	total := 0
	for i, a := range atts {
		field := fmt.Sprintf("Attachments[%d]", i)
		l, err := loadAttachment(backend, field, i, a)
		if err != nil {
			return nil, err
		}
		kind := AttachmentKindOf(l)
		if !slices.Contains(kinds, kind) && !slices.Contains(kinds, agentcli.AttachmentKind(l.MediaType)) {
			return nil, &agentcli.UnsupportedError{Backend: backend, Feature: string(kind) + " attachments",
				Reason: fmt.Sprintf("%s (%s) is %s; the backend takes %s", field, l.Name, l.MediaType, kindList(kinds))}
		}
		total += len(l.Data)
		if total > agentcli.MaxAttachmentBytes {
			return nil, &agentcli.RequestError{Backend: backend, Field: "Attachments",
				Reason: fmt.Sprintf("more than %d bytes in all (agentcli.MaxAttachmentBytes)", agentcli.MaxAttachmentBytes)}
		}
		out = append(out, l)
	}
	return out, nil
}

func kindList(kinds []agentcli.AttachmentKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, " and ")
}

// AttachmentKindOf returns the kind of an attachment LoadAttachments
// returned: an image for an image/* type, text otherwise.
func AttachmentKindOf(a agentcli.Attachment) agentcli.AttachmentKind {
	if strings.HasPrefix(a.MediaType, "image/") {
		return agentcli.AttachmentImage
	}
	return agentcli.AttachmentText
}

// AttachmentExt returns the file name extension (with its dot) of a
// loaded attachment's type: ".png", ".jpg", ".gif", ".webp", ".txt".
func AttachmentExt(a agentcli.Attachment) string {
	switch a.MediaType {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ".txt"
}

// SniffImage returns the media type of an image in one of the formats
// agentcli takes, from its first bytes, or "".
func SniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// maxNameBytes bounds Attachment.Name.
const maxNameBytes = 255

func loadAttachment(backend, field string, i int, a agentcli.Attachment) (agentcli.Attachment, error) {
	bad := func(format string, args ...any) error {
		return &agentcli.RequestError{Backend: backend, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	data := a.Data
	switch {
	case a.Path != "" && a.Data != nil:
		return a, bad("both Data and Path are set; set one")
	case a.Path == "" && a.Data == nil:
		return a, bad("neither Data nor Path is set")
	case a.Path != "":
		var err error
		if data, err = readAttachment(a.Path); err != nil {
			return a, bad("%v", err)
		}
	}
	if len(data) == 0 {
		return a, bad("empty")
	}
	name := a.Name
	if name == "" {
		name = defaultName(a.Path, i)
	}
	if !utf8.ValidString(name) || len(name) > maxNameBytes || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return a, bad("Name is not valid UTF-8 of at most %d bytes without control characters", maxNameBytes)
	}
	declared, params := "", map[string]string(nil)
	if a.MediaType != "" {
		var err error
		if declared, params, err = mime.ParseMediaType(a.MediaType); err != nil {
			return a, bad("MediaType %q: %v", a.MediaType, err)
		}
	}
	l := agentcli.Attachment{Name: name, Data: data}
	if t := SniffImage(data); t != "" {
		l.MediaType = t
		if len(data) > agentcli.MaxImageBytes {
			return a, bad("image of %d bytes; the limit is %d (agentcli.MaxImageBytes)", len(data), agentcli.MaxImageBytes)
		}
		return l, nil
	}
	switch {
	case declared == "" || strings.HasPrefix(declared, "text/"):
	case strings.HasPrefix(declared, "image/"):
		if imageTypes[declared] {
			return a, bad("MediaType is %s but the bytes are not a PNG, JPEG, GIF or WebP image", declared)
		}
		return a, &agentcli.UnsupportedError{Backend: backend, Feature: "attachments of type " + declared,
			Reason: field + ": agentcli takes PNG, JPEG, GIF and WebP images"}
	default:
		return a, &agentcli.UnsupportedError{Backend: backend, Feature: "attachments of type " + declared,
			Reason: field + ": agentcli takes PNG, JPEG, GIF and WebP images and UTF-8 text files"}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
		return a, &agentcli.UnsupportedError{Backend: backend, Feature: "text attachments in charset " + cs,
			Reason: field + ": text files must be UTF-8"}
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return a, &agentcli.UnsupportedError{Backend: backend, Feature: "binary attachments",
			Reason: field + " (" + name + ") is neither a PNG, JPEG, GIF or WebP image nor UTF-8 text"}
	}
	if len(data) > agentcli.MaxTextBytes {
		return a, bad("text file of %d bytes; the limit is %d (agentcli.MaxTextBytes)", len(data), agentcli.MaxTextBytes)
	}
	l.MediaType = "text/plain"
	if declared != "" {
		l.MediaType = declared
	}
	return l, nil
}

// defaultName returns the name of the i-th attachment that has none: its
// file's name (from path), control characters and invalid UTF-8 made "_",
// or "attachment-N" for data, or for a file name over maxNameBytes.
func defaultName(path string, i int) string {
	name := fmt.Sprintf("attachment-%d", i+1)
	if path == "" {
		return name
	}
	base := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '_'
		}
		return r
	}, strings.ToValidUTF8(filepath.Base(path), "_"))
	if len(base) > maxNameBytes {
		return name
	}
	return base
}

var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// maxRead is the most readAttachment reads of a file: the larger of the
// two per-file limits, and one byte more to tell that a file exceeds it.
const maxRead = max(agentcli.MaxImageBytes, agentcli.MaxTextBytes)

// readAttachment reads the regular file at path, at most maxRead+1
// bytes. It opens without blocking (a FIFO put there does not hang the
// run) and checks the opened file, so that what is read is what was
// checked.
func readAttachment(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > maxRead {
		return nil, fmt.Errorf("%s is %d bytes; the limit is %d for an image, %d for a text file", path, fi.Size(), agentcli.MaxImageBytes, agentcli.MaxTextBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRead+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRead {
		return nil, fmt.Errorf("%s grew beyond %d bytes while it was read", path, maxRead)
	}
	return data, nil
}

// SplitAttachments returns the images and the text files of loaded
// attachments, each in order.
func SplitAttachments(atts []agentcli.Attachment) (images, texts []agentcli.Attachment) {
	for _, a := range atts {
		if AttachmentKindOf(a) == agentcli.AttachmentImage {
			images = append(images, a)
		} else {
			texts = append(texts, a)
		}
	}
	return images, texts
}

// InlineText returns prompt followed by the text files among atts, each
// framed by agentcli.TextAttachmentHeader and TextAttachmentFooter, for a
// CLI that takes text files only as part of the prompt. Images are left
// out.
func InlineText(prompt string, atts []agentcli.Attachment) string {
	_, texts := SplitAttachments(atts)
	if len(texts) == 0 {
		return prompt
	}
	var b strings.Builder
	b.WriteString(prompt)
	for _, t := range texts {
		b.WriteString("\n")
		fmt.Fprintf(&b, agentcli.TextAttachmentHeader, t.Name)
		b.Write(t.Data)
		fmt.Fprintf(&b, agentcli.TextAttachmentFooter, t.Name)
	}
	return b.String()
}

// WriteImages writes the images among loaded attachments into the run's
// private temporary directory, named "image-N" with their type's
// extension, and returns their paths, for a CLI that takes images by
// path. The names are agentcli's own (never Attachment.Name), so that a
// path holds no comma, space or leading dash of the caller's.
func (r *Run) WriteImages(atts []agentcli.Attachment) ([]string, error) {
	images, _ := SplitAttachments(atts)
	if len(images) == 0 {
		return nil, nil
	}
	dir, err := r.TempDir()
	if err != nil {
		return nil, err
	}
	dir, err = os.MkdirTemp(dir, "attachments-")
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(images))
	for i, a := range images {
		p := filepath.Join(dir, fmt.Sprintf("image-%d%s", i+1, AttachmentExt(a)))
		if err := os.WriteFile(p, a.Data, 0o600); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// checkAttachments refuses attachments in a request where they cannot
// go: on a backend that takes none, and on StartSession and Interactive
// (a live session's attachments go with a turn).
func checkAttachments(backend string, caps agentcli.Capabilities, req *agentcli.Request, oneShot bool) error {
	if len(req.Attachments) == 0 {
		return nil
	}
	if len(caps.Attachments) == 0 {
		return &agentcli.UnsupportedError{Backend: backend, Feature: "attachments"}
	}
	if !oneShot {
		return &agentcli.RequestError{Backend: backend, Field: "Attachments",
			Reason: "attachments go with a prompt: a live session's with a turn (agentcli.StreamTurn); StartSession and Interactive take none"}
	}
	return nil
}

// redactTurns is redactSession for a backend that takes the attachment
// kinds in kinds: each turn's attachments are checked and loaded
// (LoadAttachments) before the session underneath sends them.
func redactTurns(s agentcli.Session, red *Redactor, rawLimit int, backend string, kinds []agentcli.AttachmentKind) agentcli.Session {
	rs := redactSession(s, red, rawLimit).(*redactedSession)
	rs.backend, rs.kinds = backend, kinds
	return rs
}

// StreamTurn implements agentcli.TurnStreamer.
func (r *redactedSession) StreamTurn(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		if t == nil {
			t = &agentcli.Turn{}
		}
		atts, err := LoadAttachments(r.backend, r.kinds, t.Attachments)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		for ev, err := range r.redact(agentcli.StreamTurn(ctx, r.s, &agentcli.Turn{Prompt: t.Prompt, Attachments: atts})) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// StreamTurn implements agentcli.TurnStreamer, as Stream does with a
// prompt.
func (s *extrasSession) StreamTurn(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	if t == nil {
		t = &agentcli.Turn{}
	}
	return s.turn(ctx, t.Prompt, func(prompt string) iter.Seq2[agentcli.Event, error] {
		return agentcli.StreamTurn(ctx, s.Session, &agentcli.Turn{Prompt: prompt, Attachments: t.Attachments})
	})
}

// loadRequest returns a copy of req with its attachments loaded
// (LoadAttachments).
func loadRequest(backend string, kinds []agentcli.AttachmentKind, req *agentcli.Request) (*agentcli.Request, error) {
	atts, err := LoadAttachments(backend, kinds, req.Attachments)
	if err != nil {
		return nil, err
	}
	c := *req
	c.Attachments = atts
	return &c, nil
}
