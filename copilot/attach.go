package copilot

import "github.com/agentcli/agentcli"

// attachmentKinds: copilot takes images and text files, live and one-shot
// alike, as content blocks of an ACP session/prompt (driver/acp's
// PromptWith); a one-shot run with attachments is one turn of a live
// session (Spec.LiveRun).
var attachmentKinds = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
