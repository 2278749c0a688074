package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// consoleChannel is the one channel of console mode.
const consoleChannel = "console"

// consoleUser is who types on the console.
const consoleUser = "console"

// consoleChat is the Chat of console mode: every message is printed to w
// as it is posted or edited. Buttons become commands: a permission request
// is answered with /allow, /always or /deny.
type consoleChat struct {
	mu      sync.Mutex
	w       io.Writer
	seq     int
	buttons []Button // of the last permission request
}

func (c *consoleChat) print(text string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	fmt.Fprintln(c.w, text)
	return strconv.Itoa(c.seq)
}

func (c *consoleChat) Post(ctx context.Context, channel, replyTo, text string) (string, error) {
	return c.print(text), nil
}

func (c *consoleChat) Edit(ctx context.Context, channel, id, text string) error {
	c.print(text)
	return nil
}

func (c *consoleChat) Typing(ctx context.Context, channel string) error { return nil }

func (c *consoleChat) Ask(ctx context.Context, channel string, card Card) (string, error) {
	var labels []string
	for _, b := range card.Buttons {
		labels = append(labels, "/"+strings.ToLower(b.Label))
	}
	c.mu.Lock()
	c.buttons = card.Buttons
	c.mu.Unlock()
	return c.print(card.Text + "\n[answer with " + strings.Join(labels, ", ") + "]"), nil
}

func (c *consoleChat) StartThread(ctx context.Context, channel, messageID, name string) (string, error) {
	return "", errNoThreads
}

// press turns "/allow", "/always" or "/deny" into a press of that button
// of the last permission request; false when line is none of them.
func (c *consoleChat) press(rt *Runtime, line string) bool {
	word := strings.ToLower(strings.TrimSpace(line))
	c.mu.Lock()
	var id string
	for _, b := range c.buttons {
		if word == "/"+strings.ToLower(b.Label) {
			id = b.ID
		}
	}
	c.mu.Unlock()
	switch word {
	case "/allow", "/always", "/deny":
	default:
		return false
	}
	if id == "" {
		c.print("No permission request is waiting.")
		return true
	}
	text, _ := rt.Answer(consoleChannel, id, consoleUser, nil, nil)
	c.print(text)
	return true
}

// runConsole feeds the lines of in to rt as messages of one channel until
// in ends or ctx is done.
func runConsole(ctx context.Context, rt *Runtime, c *consoleChat, in io.Reader) {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return
		case line, ok := <-lines:
			if !ok {
				return
			}
			if c.press(rt, line) {
				continue
			}
			n++
			rt.Handle(Message{ID: "line-" + strconv.Itoa(n), Channel: consoleChannel, Author: consoleUser, Text: line})
		}
	}
}
