package claude

import (
	"encoding/json"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestUserMessageWith: the prompt's text block, then an image block per
// image and a document block per text file, in order, not typed.
func TestUserMessageWith(t *testing.T) {
	line := userMessageWith("/help", []agentcli.Attachment{
		{Name: "n.txt", MediaType: "text/markdown", Data: []byte("T\n")},
		{Name: "i", MediaType: "image/png", Data: []byte{0x89, 'P'}},
	})
	var m struct {
		Type    string `json:"type"`
		Message struct {
			Role    string `json:"role"`
			Content []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				Title  string `json:"title"`
				Source struct {
					Type      string `json:"type"`
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
				} `json:"source"`
			} `json:"content"`
		} `json:"message"`
		TextNotTyped bool `json:"text_not_typed"`
	}
	if err := json.Unmarshal(line, &m); err != nil || line[len(line)-1] != '\n' {
		t.Fatalf("%q: %v", line, err)
	}
	c := m.Message.Content
	if m.Type != "user" || m.Message.Role != "user" || !m.TextNotTyped || len(c) != 3 {
		t.Fatalf("message %s", line)
	}
	if c[0].Type != "text" || c[0].Text != "/help" {
		t.Errorf("first block %+v", c[0])
	}
	if c[1].Type != "document" || c[1].Title != "n.txt" || c[1].Source.Type != "text" || c[1].Source.MediaType != "text/plain" || c[1].Source.Data != "T\n" {
		t.Errorf("document block %+v", c[1])
	}
	if c[2].Type != "image" || c[2].Source.Type != "base64" || c[2].Source.MediaType != "image/png" || c[2].Source.Data != "iVA=" {
		t.Errorf("image block %+v", c[2])
	}
	if string(userMessageWith("p", nil)) != string(userMessage("p")) {
		t.Error("without attachments the message differs from userMessage's")
	}
}
