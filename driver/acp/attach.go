package acp

import (
	"context"
	"encoding/base64"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// PromptWith sends session/prompt with attachments (live.Attacher): after
// the prompt's text block, an image block (base64 data, its media type)
// per image and a text block per text file, framed by
// agentcli.TextAttachmentHeader and TextAttachmentFooter, in the order
// given. Text goes as text rather than as an embedded resource or a
// resource link: gemini rewrites the prompt around a resource and asks
// for permission to read a link's file, and opencode prefixes a
// resource's text with its path. Whether an agent takes images depends
// on the agent (its initialize answer's promptCapabilities.image); the
// backend's Capabilities.Attachments says which kinds it takes.
func (c *client) PromptWith(ctx context.Context, prompt string, atts []agentcli.Attachment) error {
	blocks := make([]sdk.ContentBlock, 0, len(atts))
	for _, a := range atts {
		if driver.AttachmentKindOf(a) == agentcli.AttachmentImage {
			blocks = append(blocks, sdk.ImageBlock(base64.StdEncoding.EncodeToString(a.Data), a.MediaType))
			continue
		}
		blocks = append(blocks, sdk.TextBlock(fmt.Sprintf(agentcli.TextAttachmentHeader, a.Name)+string(a.Data)+fmt.Sprintf(agentcli.TextAttachmentFooter, a.Name)))
	}
	c.mu.Lock()
	c.atts = blocks
	c.mu.Unlock()
	return c.Prompt(ctx, prompt)
}
