package opencode

import "github.com/agentcli/agentcli"

// attachmentKinds: opencode takes images and text files, live and one-shot
// alike, as content blocks of an ACP session/prompt (driver/acp's
// PromptWith): an image block per image, which opencode sends to the
// model unchanged when it is at most 2000×2000 pixels (a larger one is
// downscaled), and a text block per text file, framed by
// agentcli.TextAttachmentHeader and TextAttachmentFooter, which reaches
// the model verbatim.
//
// The model must take image input in opencode's configuration (models
// from models.dev say so; a custom provider's model needs
// "modalities": {"input": ["text", "image"]}); otherwise opencode
// replaces each image with a note that the model cannot read it and the
// turn goes on.
//
// A one-shot run with attachments is one turn of a live session
// (Spec.LiveRun) rather than `opencode run --file=PATH`: --file presents
// each file as a call of opencode's Read tool with its path, and a text
// file line-numbered, not verbatim.
var attachmentKinds = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
