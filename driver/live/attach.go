package live

import (
	"context"
	"fmt"
	"iter"

	"github.com/agentcli/agentcli"
)

// Attacher is implemented by a Proto whose CLI takes attachments with a
// prompt (agentcli.StreamTurn).
type Attacher interface {
	// PromptWith is Prompt with attachments, loaded and checked already
	// (driver.LoadAttachments: Data set, MediaType canonical, kinds the
	// backend takes); atts is never empty.
	PromptWith(ctx context.Context, prompt string, atts []agentcli.Attachment) error
}

// StreamTurn implements agentcli.TurnStreamer: Stream with t's
// attachments, which the backend's driver has loaded and checked
// (driver.LoadAttachments). A Proto that is not an Attacher fails a turn
// with attachments with an *agentcli.UnsupportedError; nothing is sent.
func (s *Session) StreamTurn(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	if t == nil {
		t = &agentcli.Turn{}
	}
	for i, a := range t.Attachments {
		if a.Path != "" || a.Data == nil || a.MediaType == "" {
			err := &agentcli.RequestError{Backend: s.backend, Field: fmt.Sprintf("Attachments[%d]", i),
				Reason: "not loaded (driver.LoadAttachments)"}
			return func(yield func(agentcli.Event, error) bool) { yield(agentcli.Event{}, err) }
		}
	}
	if _, ok := s.proto.(Attacher); !ok && len(t.Attachments) > 0 {
		return func(yield func(agentcli.Event, error) bool) {
			yield(agentcli.Event{}, &agentcli.UnsupportedError{Backend: s.backend, Feature: "attachments in a live session"})
		}
	}
	return s.stream(ctx, t.Prompt, t.Attachments)
}

// prompt sends the turn's prompt, with its attachments if any.
func (s *Session) prompt(ctx context.Context, prompt string, atts []agentcli.Attachment) error {
	if len(atts) > 0 {
		return s.proto.(Attacher).PromptWith(ctx, prompt, atts)
	}
	return s.proto.Prompt(ctx, prompt)
}
