package agentclitest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"iter"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// allAttachments: what a scripted Backend with Capabilities left unset
// takes.
var allAttachments = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}

// attachmentKinds returns the attachment kinds the scripted backend
// takes: Caps.Attachments, or every kind when Caps is left unset (no
// PermissionModes).
func (b *Backend) attachmentKinds() []agentcli.AttachmentKind {
	if len(b.Caps.PermissionModes) == 0 {
		return allAttachments
	}
	return b.Caps.Attachments
}

// loadAttachments checks and loads a one-shot request's attachments as a
// real backend does (driver.LoadAttachments): the recorded request (the
// last in Requests; b.mu is held) then has them loaded, Data set and
// MediaType the type agentcli decided from the bytes.
func (b *Backend) loadAttachments(req *agentcli.Request, oneShot bool) error {
	if !oneShot || len(req.Attachments) == 0 {
		return nil
	}
	atts, err := driver.LoadAttachments(b.Name(), b.attachmentKinds(), req.Attachments)
	if err != nil {
		return err
	}
	if n := len(b.requests); n > 0 {
		b.requests[n-1].Attachments = atts
	}
	return nil
}

// StreamTurn implements agentcli.TurnStreamer: a turn with attachments,
// checked and loaded as a real backend does them (driver.LoadAttachments;
// Caps.Attachments says which kinds the scripted backend takes, every
// kind when Caps is left unset) and recorded, loaded, in the turn's
// Request (Backend.Requests).
func (s *scriptedSession) StreamTurn(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	if t == nil {
		t = &agentcli.Turn{}
	}
	atts, err := driver.LoadAttachments(s.b.Name(), s.b.attachmentKinds(), t.Attachments)
	if err != nil {
		return func(yield func(agentcli.Event, error) bool) { yield(agentcli.Event{}, err) }
	}
	return s.stream(ctx, t.Prompt, atts)
}

// InputPart is a part of a model request other than text: an image or a
// document, decoded.
type InputPart struct {
	// Role is the role of the message the part is in ("user").
	Role string
	// Kind is "image" or "document".
	Kind string
	// MediaType is the part's declared media type ("image/png").
	MediaType string
	// Data is the part's content: an image's bytes decoded from base64,
	// a text document's text.
	Data []byte
	// Title is a document's title, when it has one.
	Title string
}

// InputParts returns the non-text input parts of the request, in order,
// from its Body: Anthropic image blocks (base64 source) and document
// blocks (text or base64 source); Responses input_image items (data: URL);
// Gemini inlineData parts; Chat Completions image_url parts (data: URL).
// An image given by URL or file id rather than data is left out; so is a
// part that does not decode.
func (r ModelRequest) InputParts() []InputPart {
	switch r.API {
	case "anthropic":
		return anthropicParts(r.Body)
	case "responses":
		return responsesParts(r.Body)
	case "gemini":
		return geminiParts(r.Body)
	case "chat":
		return chatParts(r.Body)
	}
	return nil
}

// anthropicParts returns the Messages API's image and document blocks.
func anthropicParts(raw []byte) []InputPart {
	var out []InputPart
	var body anthropicReq // as the server reads it
	if json.Unmarshal(raw, &body) != nil {
		return nil
	}
	for _, m := range body.Messages {
		var blocks []struct {
			Type   string `json:"type"`
			Title  string `json:"title"`
			Source struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a string
		}
		for _, b := range blocks {
			if b.Type != "image" && b.Type != "document" {
				continue
			}
			p := InputPart{Role: m.Role, Kind: b.Type, MediaType: b.Source.MediaType, Title: b.Title}
			switch b.Source.Type {
			case "base64":
				d, err := base64.StdEncoding.DecodeString(b.Source.Data)
				if err != nil {
					continue
				}
				p.Data = d
			case "text":
				p.Data = []byte(b.Source.Data)
			default:
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// responsesParts returns the Responses API's input_image items.
func responsesParts(raw []byte) []InputPart {
	var out []InputPart
	var body struct {
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return nil
	}
	var items []responsesItem
	if json.Unmarshal(body.Input, &items) != nil {
		return nil
	}
	for _, it := range items {
		var parts []struct {
			Type     string `json:"type"`
			ImageURL string `json:"image_url"`
		}
		if json.Unmarshal(it.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if p.Type != "input_image" {
				continue
			}
			if mt, d, ok := dataURL(p.ImageURL); ok {
				out = append(out, InputPart{Role: it.Role, Kind: "image", MediaType: mt, Data: d})
			}
		}
	}
	return out
}

// geminiParts returns Gemini's inlineData parts.
func geminiParts(raw []byte) []InputPart {
	var out []InputPart
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				InlineData *struct {
					MimeType string `json:"mimeType"`
					Data     string `json:"data"`
				} `json:"inlineData"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return nil
	}
	for _, c := range body.Contents {
		for _, p := range c.Parts {
			if p.InlineData == nil {
				continue
			}
			d, err := base64.StdEncoding.DecodeString(p.InlineData.Data)
			if err != nil {
				continue
			}
			kind := "document"
			if strings.HasPrefix(p.InlineData.MimeType, "image/") {
				kind = "image"
			}
			out = append(out, InputPart{Role: c.Role, Kind: kind, MediaType: p.InlineData.MimeType, Data: d})
		}
	}
	return out
}

// chatParts returns Chat Completions' image_url parts.
func chatParts(raw []byte) []InputPart {
	var out []InputPart
	var body chatReq
	if json.Unmarshal(raw, &body) != nil {
		return nil
	}
	for _, m := range body.Messages {
		var parts []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if json.Unmarshal(m.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if p.Type != "image_url" {
				continue
			}
			if mt, d, ok := dataURL(p.ImageURL.URL); ok {
				out = append(out, InputPart{Role: m.Role, Kind: "image", MediaType: mt, Data: d})
			}
		}
	}
	return out
}

// dataURL decodes a base64 data: URL.
func dataURL(u string) (mediaType string, data []byte, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", nil, false
	}
	meta, b64, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, false
	}
	mt, enc, _ := strings.Cut(meta, ";")
	if enc != "base64" {
		return "", nil, false
	}
	d, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", nil, false
	}
	return mt, d, true
}
