package main

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
)

// errTooLarge is Fetch's error for a file beyond its limit.
var errTooLarge = errors.New("file too large")

// attachmentKind sorts an attachment: "text" (inlined into the prompt),
// "image" (sent to the agent as an agentcli.Attachment) or "" (refused).
func attachmentKind(a Attachment) string {
	ct, _, _ := mime.ParseMediaType(a.ContentType)
	switch {
	case strings.HasPrefix(ct, "text/"), ct == "application/json", ct == "application/xml",
		ct == "application/x-yaml", ct == "application/yaml", ct == "application/javascript",
		ct == "application/x-sh", ct == "application/toml", ct == "application/sql":
		return "text"
	case imageTypes[ct]:
		return "image"
	case ct == "" || ct == "application/octet-stream":
		ext := strings.ToLower(filepath.Ext(a.Name))
		if textExt[ext] {
			return "text"
		}
		if imageExt[ext] {
			return "image"
		}
	}
	return ""
}

// imageTypes are the images the gateway sends on: those agentcli takes.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imageExt are the file name extensions taken as images when the
// platform names no content type.
var imageExt = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true}

// textExt are the file name extensions taken as text when the platform
// names no content type.
var textExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(".txt .md .log .csv .tsv .json .jsonl .yaml .yml .toml .ini .cfg .conf .xml .html .css " +
		".go .py .js .mjs .ts .tsx .jsx .rs .c .h .cc .cpp .hpp .java .kt .swift .rb .php .sh .bash .zsh .sql .diff .patch .env.example") {
		textExt[e] = true
	}
}

// takesImage reports whether the backend takes images of media type mt
// (Capabilities.Attachments lists "image", or mt itself); with mt "",
// whether it takes images of any type.
func (rt *Runtime) takesImage(mt string) bool {
	for _, k := range rt.o.Backend.Capabilities().Attachments {
		if k == agentcli.AttachmentImage || string(k) == mt || mt == "" && strings.HasPrefix(string(k), "image/") {
			return true
		}
	}
	return false
}

// attachments fetches the attachments of a message. It returns its text
// files inlined, to be appended to its prompt, and its images, to be sent
// with it (agentcli.Attachment); or a refusal to post instead of running
// the message at all: a file that is neither text nor a PNG, JPEG, GIF or
// WebP image, an image the backend cannot take (Options.NoImages says
// why), more text than Options.AttachmentMax, an image over
// Options.ImageMax or images over agentcli.MaxAttachmentBytes together, a
// file that cannot be downloaded, text that is not UTF-8, an "image" whose
// bytes are not one. A message is refused whole, text included: its words
// are likely about the file, and an answer without it would mislead.
//
// The images of the messages being answered hold at most imageMemory
// bytes together: a message waits for its share (the most its images may
// take) before downloading them, and gives back what they did not take.
// release frees what they took; call it once done with them.
func (rt *Runtime) attachments(ctx context.Context, as []Attachment) (inlined string, atts []agentcli.Attachment, release func(), refusal string) {
	release = func() {}
	inlined, atts, held, refusal := rt.fetchAttachments(ctx, as)
	if held > 0 {
		var once sync.Once
		release = func() { once.Do(func() { rt.imageMem.Release(held) }) }
	}
	return inlined, atts, release, refusal
}

// imageMemory bounds the bytes of images held at once by the messages
// being answered: four messages' worth of agentcli.MaxAttachmentBytes.
const imageMemory = 4 * agentcli.MaxAttachmentBytes

// fetchAttachments does the work of attachments; held is what it holds of
// rt.imageMem (none on a refusal).
func (rt *Runtime) fetchAttachments(ctx context.Context, as []Attachment) (inlined string, atts []agentcli.Attachment, held int64, refusal string) {
	images, refusal := rt.refuseAttachments(as)
	if refusal != "" {
		return "", nil, 0, refusal
	}
	if images > 0 {
		held = int64(min(agentcli.MaxAttachmentBytes, images*rt.o.ImageMax))
		if err := rt.imageMem.Acquire(ctx, held); err != nil {
			return "", nil, 0, errorText(context.Cause(ctx), 0)
		}
		reserved := held
		defer func() { // give back what the images did not take, or all on a refusal
			if len(atts) < images {
				held = 0
			}
			rt.imageMem.Release(reserved - held)
		}()
		held = 0 // counts what the images take from here on
	}
	textBudget, imageBudget := rt.o.AttachmentMax, agentcli.MaxAttachmentBytes
	textTooLarge := func(a Attachment) string {
		return fmt.Sprintf("📎 %s is too large: at most %s bytes of text per message (ATTACHMENT_MAX_BYTES). Please send a shorter excerpt.",
			quoteNames([]string{a.Name}), thousands(int64(rt.o.AttachmentMax)))
	}
	var b strings.Builder
	for _, a := range as {
		if attachmentKind(a) == "image" {
			att, refusal := rt.fetchImage(ctx, a, imageBudget, len(atts)+1)
			if refusal != "" {
				return "", nil, 0, refusal
			}
			imageBudget -= len(att.Data)
			held += int64(len(att.Data))
			atts = append(atts, att)
			continue
		}
		if a.Size > textBudget {
			return "", nil, 0, textTooLarge(a)
		}
		data, err := rt.o.Fetch(ctx, a, textBudget)
		switch {
		case errors.Is(err, errTooLarge):
			return "", nil, 0, textTooLarge(a)
		case err != nil:
			rt.log.Warn("downloading an attachment", "name", a.Name, "err", err)
			return "", nil, 0, "📎 Could not download " + quoteNames([]string{a.Name}) + "; please send it again."
		case !utf8.Valid(data):
			return "", nil, 0, "📎 " + quoteNames([]string{a.Name}) + " is not UTF-8 text; not sent to the agent."
		}
		textBudget -= len(data)
		fmt.Fprintf(&b, "\n\n[attached file %s, %d bytes]\n%s\n[end of %s]", safeName(a.Name), len(data), data, safeName(a.Name))
	}
	return b.String(), atts, held, ""
}

// refuseAttachments returns how many of as are images, and the refusal
// of a message whose attachments cannot all go to the agent: a kind that
// is neither text nor an image, images the agent cannot take, or no way
// to download them.
func (rt *Runtime) refuseAttachments(as []Attachment) (int, string) {
	var others, images []string
	for _, a := range as {
		switch attachmentKind(a) {
		case "image":
			images = append(images, a.Name)
		case "":
			others = append(others, a.Name)
		}
	}
	if len(others) > 0 {
		return 0, "📎 Not sent to the agent: I can only pass on text files and images (PNG, JPEG, GIF, WebP): " +
			quoteNames(others) + ". Please send the message again without them; paste what matters as text."
	}
	if len(images) > 0 && !rt.takesImage("") {
		why := rt.o.NoImages
		if why == "" {
			why = "the " + rt.o.Backend.Name() + " agent cannot take images"
		}
		return 0, "📎 Not sent to the agent: " + quoteNames(images) + " — " + why +
			". Please send the message again without images; describe what matters in words."
	}
	if rt.o.Fetch == nil {
		return 0, "📎 Attachments are not supported here."
	}
	return len(images), ""
}

// fetchImage downloads image a, the n-th of its message, within budget
// (what the message's images may still take), and checks it is one the
// agent takes; it returns the attachment, or the refusal of the message.
func (rt *Runtime) fetchImage(ctx context.Context, a Attachment, budget, n int) (agentcli.Attachment, string) {
	tooLarge := func(total bool) string {
		if total {
			return fmt.Sprintf("📎 The images of this message are too large together: at most %s per message. Please send fewer or smaller images.",
				byteSize(agentcli.MaxAttachmentBytes))
		}
		return fmt.Sprintf("📎 %s is too large: at most %s per image (IMAGE_MAX_BYTES). Please send a smaller image.",
			quoteNames([]string{a.Name}), byteSize(rt.o.ImageMax))
	}
	switch {
	case a.Size > rt.o.ImageMax:
		return agentcli.Attachment{}, tooLarge(false)
	case a.Size > budget:
		return agentcli.Attachment{}, tooLarge(true)
	}
	limit := min(rt.o.ImageMax, budget)
	data, err := rt.o.Fetch(ctx, a, limit)
	switch {
	case errors.Is(err, errTooLarge):
		return agentcli.Attachment{}, tooLarge(limit < rt.o.ImageMax)
	case err != nil:
		rt.log.Warn("downloading an attachment", "name", a.Name, "err", err)
		return agentcli.Attachment{}, "📎 Could not download " + quoteNames([]string{a.Name}) + "; please send it again."
	}
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(data))
	if !imageTypes[mt] {
		return agentcli.Attachment{}, "📎 " + quoteNames([]string{a.Name}) + " is not a PNG, JPEG, GIF or WebP image; not sent to the agent."
	}
	if !rt.takesImage(mt) {
		return agentcli.Attachment{}, "📎 Not sent to the agent: " + quoteNames([]string{a.Name}) + " — the " + rt.o.Backend.Name() +
			" agent cannot take " + strings.TrimPrefix(mt, "image/") + " images. Please send it as PNG or JPEG."
	}
	return agentcli.Attachment{Name: attachmentName(a.Name, n), MediaType: mt, Data: data}, ""
}

// attachmentName is a file name as agentcli takes one (valid UTF-8 of at
// most 255 bytes without control characters): the platform's, cleaned
// and shortened, or "image-n".
func attachmentName(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	s = shorten(oneLine(s), 60) // at most 59 runes of 4 bytes and "…"
	if s == "" {
		return fmt.Sprintf("image-%d", n)
	}
	return s
}

// byteSize shows n bytes, and in MiB too when that is a whole number.
func byteSize(n int) string {
	s := thousands(int64(n)) + " bytes"
	if n >= 1<<20 && n%(1<<20) == 0 {
		s += fmt.Sprintf(" (%d MiB)", n>>20)
	}
	return s
}

// safeName is a file name fit for one line of a prompt.
func safeName(s string) string {
	s = shorten(oneLine(s), 100)
	if s == "" {
		return "(unnamed)"
	}
	return s
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + strings.ReplaceAll(safeName(n), "`", "'") + "`"
	}
	return strings.Join(q, ", ")
}
