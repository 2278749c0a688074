package claude

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// attachmentKinds: claude takes images and text files, one-shot and
// live, in the content of its stream-json user message.
var attachmentKinds = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}

// userMessageWith is userMessage with attachments (loaded by
// driver.LoadAttachments): the message's content is an array of blocks,
// the prompt's text block, then per attachment in order an image block
// (base64 source, its media type) or a document block (text source,
// titled with the attachment's name). Claude Code passes both to the
// API's messages as they are (an image of at most 2000×2000 pixels and
// about 500 KB byte for byte; a larger one it re-encodes), and, as with a
// plain prompt, marks nothing of it as typed: a first text that starts
// with "/" is not a command.
func userMessageWith(prompt string, atts []agentcli.Attachment) []byte {
	if len(atts) == 0 {
		return userMessage(prompt)
	}
	type source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	type block struct {
		Type   string  `json:"type"`
		Text   *string `json:"text,omitempty"`
		Title  string  `json:"title,omitempty"`
		Source *source `json:"source,omitempty"`
	}
	text := strings.ToValidUTF8(prompt, "\uFFFD")
	content := []block{{Type: "text", Text: &text}}
	for _, a := range atts {
		if driver.AttachmentKindOf(a) == agentcli.AttachmentImage {
			content = append(content, block{Type: "image",
				Source: &source{Type: "base64", MediaType: a.MediaType, Data: base64.StdEncoding.EncodeToString(a.Data)}})
			continue
		}
		// The API takes text documents as text/plain only; the text
		// is UTF-8 (LoadAttachments checked it).
		content = append(content, block{Type: "document", Title: a.Name,
			Source: &source{Type: "text", MediaType: "text/plain", Data: string(a.Data)}})
	}
	return userLine(content)
}

// PromptWith sends prompt with attachments as a not-typed user message
// (live.Attacher).
func (p *liveProto) PromptWith(ctx context.Context, prompt string, atts []agentcli.Attachment) error {
	st := &parser{}
	p.mu.Lock()
	p.parser = &turnParser{Parser: driver.Lines(Name, st), st: st}
	p.mu.Unlock()
	return p.h.Send(ctx, userMessageWith(prompt, atts))
}
