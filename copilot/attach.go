package copilot

import "github.com/agentcli/agentcli"

// attachmentKinds: copilot takes images and text files, live and one-shot
// alike, as content blocks of an ACP session/prompt (driver/acp's
// PromptWith: an image block per image, a text block per text file,
// framed by agentcli.TextAttachmentHeader and TextAttachmentFooter). Its
// ACP agent advertises promptCapabilities.image; the conformance suite
// checks that the images reach the model request byte for byte and the
// text verbatim (an "@path" in it is not read as a file). A one-shot run
// with attachments is one turn of a live session (Spec.LiveRun), the one
// way agentcli knows to hand copilot bytes rather than a path.
var attachmentKinds = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
