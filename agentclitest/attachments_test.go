package agentclitest

import (
	"context"
	"errors"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestInputParts: the images and documents of each API's request body,
// decoded, in order; text, URLs and what does not decode are left out.
func TestInputParts(t *testing.T) {
	for _, c := range []struct {
		api, body string
		want      []InputPart
	}{
		{"anthropic", `{"messages":[{"role":"user","content":"plain"},{"role":"user","content":[{"type":"text","text":"t"},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVA="}},
			{"type":"image","source":{"type":"url","url":"http://x"}},
			{"type":"document","title":"n.txt","source":{"type":"text","media_type":"text/plain","data":"T\n"}},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"!!"}}]}]}`,
			[]InputPart{{Role: "user", Kind: "image", MediaType: "image/png", Data: []byte{0x89, 'P'}},
				{Role: "user", Kind: "document", MediaType: "text/plain", Data: []byte("T\n"), Title: "n.txt"}}},
		{"responses", `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"t"},
			{"type":"input_image","image_url":"data:image/jpeg;base64,/9g=","detail":"high"},
			{"type":"input_image","image_url":"https://x/y.png"}]}]}`,
			[]InputPart{{Role: "user", Kind: "image", MediaType: "image/jpeg", Data: []byte{0xff, 0xd8}}}},
		{"responses", `{"input":"just text"}`, nil},
		{"gemini", `{"contents":[{"role":"user","parts":[{"text":"t"},{"inlineData":{"mimeType":"image/gif","data":"R0lG"}}]}]}`,
			[]InputPart{{Role: "user", Kind: "image", MediaType: "image/gif", Data: []byte("GIF")}}},
		{"chat", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"t"},
			{"type":"image_url","image_url":{"url":"data:image/webp;base64,UklGRg=="}}]}]}`,
			[]InputPart{{Role: "user", Kind: "image", MediaType: "image/webp", Data: []byte("RIFF")}}},
	} {
		got := ModelRequest{API: c.api, Body: []byte(c.body)}.InputParts()
		if len(got) != len(c.want) {
			t.Errorf("%s: got %+v, want %+v", c.api, got, c.want)
			continue
		}
		for i := range got {
			g, w := got[i], c.want[i]
			if g.Role != w.Role || g.Kind != w.Kind || g.MediaType != w.MediaType || string(g.Data) != string(w.Data) || g.Title != w.Title {
				t.Errorf("%s part %d: got %+v, want %+v", c.api, i, g, w)
			}
		}
	}
}

// TestScriptedAttachments: the scripted backend checks attachments as a
// real backend does, against Caps.Attachments when Caps is set, and
// records them loaded (a Path read).
func TestScriptedAttachments(t *testing.T) {
	b := NewBackend(Reply("ok", "s"))
	b.Caps = agentcli.Capabilities{PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass},
		Attachments: []agentcli.AttachmentKind{agentcli.AttachmentImage}}
	req := &agentcli.Request{Prompt: "p", Permission: agentcli.PermissionBypass, Attachments: []agentcli.Attachment{{Data: []byte("text")}}}
	if _, err := b.Run(context.Background(), req); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Fatalf("a text file where Caps takes images only: %v", err)
	}
	req.Attachments = []agentcli.Attachment{{Data: []byte("GIF89a")}}
	if _, err := b.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	reqs := b.Requests()
	if got := reqs[len(reqs)-1].Attachments; len(got) != 1 || got[0].MediaType != "image/gif" || got[0].Name != "attachment-1" {
		t.Errorf("recorded %+v", got)
	}
	b.Caps.Attachments = nil
	b.Push(Reply("ok", "s"))
	if _, err := b.Run(context.Background(), req); !errors.Is(err, agentcli.ErrUnsupported) {
		t.Errorf("no Caps.Attachments: %v, want ErrUnsupported", err)
	}
}
