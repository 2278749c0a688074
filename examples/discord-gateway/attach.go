package main

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// errTooLarge is Fetch's error for a file beyond its limit.
var errTooLarge = errors.New("file too large")

// attachmentKind sorts an attachment: "text" (inlined into the prompt),
// "image" (for Request.Attachments once agentcli has it; refused until
// then) or "" (refused).
func attachmentKind(a Attachment) string {
	ct, _, _ := mime.ParseMediaType(a.ContentType)
	switch {
	case strings.HasPrefix(ct, "text/"), ct == "application/json", ct == "application/xml",
		ct == "application/x-yaml", ct == "application/yaml", ct == "application/javascript",
		ct == "application/x-sh", ct == "application/toml", ct == "application/sql":
		return "text"
	case ct == "image/png", ct == "image/jpeg", ct == "image/gif", ct == "image/webp":
		return "image"
	case ct == "" || ct == "application/octet-stream":
		if textExt[strings.ToLower(filepath.Ext(a.Name))] {
			return "text"
		}
	}
	return ""
}

// textExt are the file name extensions taken as text when the platform
// names no content type.
var textExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(".txt .md .log .csv .tsv .json .jsonl .yaml .yml .toml .ini .cfg .conf .xml .html .css " +
		".go .py .js .mjs .ts .tsx .jsx .rs .c .h .cc .cpp .hpp .java .kt .swift .rb .php .sh .bash .zsh .sql .diff .patch .env.example") {
		textExt[e] = true
	}
}

// attachments returns the text attachments of a message inlined, to be
// appended to its prompt, or a refusal to post instead of running it: a
// file that is no text (images go to the agent once agentcli takes them
// in a Request), more text than Options.AttachmentMax, a file that cannot
// be downloaded or is not UTF-8.
func (rt *Runtime) attachments(ctx context.Context, as []Attachment) (string, string) {
	var images, others []string
	for _, a := range as {
		switch attachmentKind(a) {
		case "image":
			images = append(images, a.Name)
		case "":
			others = append(others, a.Name)
		}
	}
	if len(images)+len(others) > 0 {
		s := "📎 Not sent to the agent: I can only pass text files on for now"
		if len(images) > 0 {
			s += " (images are not supported yet)"
		}
		return "", s + ": " + quoteNames(append(images, others...)) +
			". Please send the message again without them; paste what matters as text."
	}
	if rt.o.Fetch == nil {
		return "", "📎 Attachments are not supported here."
	}
	budget := rt.o.AttachmentMax
	var b strings.Builder
	for _, a := range as {
		if a.Size > budget {
			return "", fmt.Sprintf("📎 %s is too large: at most %s bytes of text per message. Please send a shorter excerpt.",
				quoteNames([]string{a.Name}), thousands(int64(rt.o.AttachmentMax)))
		}
		data, err := rt.o.Fetch(ctx, a, budget)
		switch {
		case errors.Is(err, errTooLarge):
			return "", fmt.Sprintf("📎 %s is too large: at most %s bytes of text per message. Please send a shorter excerpt.",
				quoteNames([]string{a.Name}), thousands(int64(rt.o.AttachmentMax)))
		case err != nil:
			rt.log.Warn("downloading an attachment", "name", a.Name, "err", err)
			return "", "📎 Could not download " + quoteNames([]string{a.Name}) + "; please send it again."
		case !utf8.Valid(data):
			return "", "📎 " + quoteNames([]string{a.Name}) + " is not UTF-8 text; not sent to the agent."
		}
		budget -= len(data)
		fmt.Fprintf(&b, "\n\n[attached file %s, %d bytes]\n%s\n[end of %s]", safeName(a.Name), len(data), data, safeName(a.Name))
	}
	return b.String(), ""
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
