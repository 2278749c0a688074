package gemini

import "github.com/agentcli/agentcli"

// attachmentKinds: gemini takes images and text files, live and one-shot
// alike, as content blocks of an ACP session/prompt (driver/acp's
// PromptWith): an image block per image, whose bytes gemini passes to the
// Gemini API as inlineData unchanged (it neither resizes nor re-encodes),
// and a text block per text file, framed by agentcli.TextAttachmentHeader
// and TextAttachmentFooter, which reaches the model verbatim.
//
// A one-shot run with attachments is therefore one turn of a live
// session (Spec.LiveRun), not a headless `gemini -p` run: headless gemini
// takes files only as "@path" in the prompt, for paths inside the
// workspace or an --include-directories directory, rewrites the prompt
// around them, drops a text file's final newline, and leaves a path it
// cannot read as literal text without a word.
var attachmentKinds = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
