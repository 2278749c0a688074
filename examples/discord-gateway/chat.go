package main

import "context"

// Chat is where the runtime's output goes: Discord, or the console. Every
// method may block (a rate limit, a slow network) until ctx ends.
type Chat interface {
	// Post sends a new message to channel, as a reply to the message
	// replyTo when that is set, and returns its id.
	Post(ctx context.Context, channel, replyTo, text string) (string, error)
	// Edit replaces the text of a message sent earlier and removes its
	// buttons, if it had any.
	Edit(ctx context.Context, channel, id, text string) error
	// Typing shows that the agent is working in channel, for a few
	// seconds.
	Typing(ctx context.Context, channel string) error
	// Ask sends a message with buttons and returns its id. A press comes
	// back through Runtime.Press with the button's ID.
	Ask(ctx context.Context, channel, text string, buttons []Button) (string, error)
}

// Button is one button of a message sent with Chat.Ask.
type Button struct {
	// ID identifies the button to Runtime.Press.
	ID string
	// Label is the button's text.
	Label string
	// Style is how it looks: "allow", "deny" or "" for neutral.
	Style string
}
