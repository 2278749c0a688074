package codex

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// attachmentKinds: codex takes images and text files, one-shot and live.
//
// One-shot (codex exec) an image goes as --image=PATH: agentcli writes it
// into the run's private temporary directory under a name of its own
// (image-N.png), since codex splits the option's value at commas and a
// path is never the caller's string on the command line; the options sit
// before `resume` and the "-" of the stdin prompt. Text files have no
// option: they follow the prompt on stdin, framed by
// agentcli.TextAttachmentHeader and TextAttachmentFooter.
//
// Live (codex app-server) turn/start takes the prompt's text item, then
// an image item with a data: URL per image (no path reaches the model)
// and a text item per text file (framed the same way), in the order given.
//
// codex sends PNG, JPEG and WebP images of at most 2048×2048 pixels to
// the model byte for byte; it converts every GIF to PNG and downscales a
// larger image.
var attachmentKinds = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}

// imageArgs inserts an --image option per image of atts into args built
// by buildArgsFiles, before `resume -- ID` (when resumed is set) and the
// final "-".
func imageArgs(r *driver.Run, args []string, atts []agentcli.Attachment, resumed bool) ([]string, error) {
	paths, err := r.WriteImages(atts)
	if err != nil || len(paths) == 0 {
		return args, err
	}
	at := len(args) - 1 // "-"
	if resumed {
		at -= 3 // "resume", "--", ID
	}
	opts := make([]string, 0, len(paths))
	for _, p := range paths {
		if strings.ContainsRune(p, ',') {
			// Only the temporary directory (TMPDIR) can hold one.
			return nil, fmt.Errorf("codex: the temporary directory %s has a comma in its path, which codex's --image would split; set TMPDIR to another", p)
		}
		opts = append(opts, "--image="+p)
	}
	out := make([]string, 0, len(args)+len(opts))
	out = append(out, args[:at]...)
	out = append(out, opts...)
	return append(out, args[at:]...), nil
}

// turnInput returns turn/start's input items for a prompt with
// attachments.
func turnInput(prompt string, atts []agentcli.Attachment) []map[string]any {
	in := []map[string]any{{"type": "text", "text": strings.ToValidUTF8(prompt, "\uFFFD")}}
	for _, a := range atts {
		if driver.AttachmentKindOf(a) == agentcli.AttachmentImage {
			in = append(in, map[string]any{"type": "image",
				"url": "data:" + a.MediaType + ";base64," + base64.StdEncoding.EncodeToString(a.Data)})
			continue
		}
		in = append(in, map[string]any{"type": "text",
			"text": fmt.Sprintf(agentcli.TextAttachmentHeader, a.Name) + string(a.Data) + fmt.Sprintf(agentcli.TextAttachmentFooter, a.Name)})
	}
	return in
}

// PromptWith starts a turn with attachments (live.Attacher): Prompt, with
// turn/start's input carrying them.
func (p *appServer) PromptWith(ctx context.Context, prompt string, atts []agentcli.Attachment) error {
	p.mu.Lock()
	p.atts = atts
	p.mu.Unlock()
	return p.Prompt(ctx, prompt)
}
