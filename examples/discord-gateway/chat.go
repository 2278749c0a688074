package main

import (
	"context"
	"errors"
)

// Chat is where the runtime's output goes: Discord, or the console. Every
// method may block (a rate limit, a slow network) until ctx ends.
type Chat interface {
	// Post sends a new message to channel, as a reply to the message
	// replyTo when that is set, and returns its id. Nobody is pinged.
	Post(ctx context.Context, channel, replyTo, text string) (string, error)
	// Edit replaces the text of a message sent earlier and removes its
	// buttons and menus, if it had any.
	Edit(ctx context.Context, channel, id, text string) error
	// Typing shows that the agent is working in channel, for a few
	// seconds.
	Typing(ctx context.Context, channel string) error
	// Ask sends a card (text with buttons or a menu, mentioning someone)
	// and returns its id. An answer comes back through Runtime.Answer with
	// the button's ID, or the menu's ID and the values chosen.
	Ask(ctx context.Context, channel string, card Card) (string, error)
	// StartThread starts a thread from message messageID of channel,
	// named name, and returns the thread's channel id. A chat without
	// threads returns errNoThreads.
	StartThread(ctx context.Context, channel, messageID, name string) (string, error)
}

// errNoThreads is StartThread's error on a chat without threads.
var errNoThreads = errors.New("this chat has no threads")

// Card is a message that waits for an answer: a permission request, or
// one item of an agent's question, its options as buttons (a few options,
// one to pick) or a menu (see askQuestion).
type Card struct {
	// Text is the message.
	Text string
	// Mention is the user the card is for, pinged; "" pings nobody.
	Mention string
	// Buttons are shown in rows of 5, below the menu.
	Buttons []Button
	// Menu, when set, is a select menu below the text.
	Menu *Menu
}

// Button is one button of a Card.
type Button struct {
	// ID identifies the button to Runtime.Answer.
	ID string
	// Label is the button's text.
	Label string
	// Style is how it looks: "allow", "deny" or "" for neutral.
	Style string
}

// Menu is a select menu of a Card.
type Menu struct {
	// ID identifies the menu to Runtime.Answer.
	ID string
	// Placeholder is shown before anything is chosen.
	Placeholder string
	// Options are the choices (at most 25).
	Options []MenuOption
	// Min and Max bound how many options are picked; zero Max means 1.
	Min, Max int
}

// MenuOption is one choice of a Menu.
type MenuOption struct {
	// Value is what Runtime.Answer receives, Label what is shown,
	// Description a line below it.
	Value, Label, Description string
}
