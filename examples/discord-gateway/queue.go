package main

import (
	"context"
	"errors"
	"sync"
)

// Message is one incoming chat message (or command).
type Message struct {
	// ID is the platform's id of the message; replies refer to it. For a
	// slash command it is the interaction's id.
	ID string `json:"id"`
	// Channel is where the message was posted.
	Channel string `json:"channel"`
	// Conv is the conversation the message belongs to: one session and one
	// queue per conversation. Empty means Channel. A message that starts a
	// task of its own (NewTask) has Conv = ID.
	Conv string `json:"conv,omitempty"`
	// NewTask asks for a thread started from the message, where the task
	// is answered and goes on. Discord gives that thread the message's id,
	// so Conv is ID.
	NewTask bool `json:"new_task,omitempty"`
	// Author is the sender's user id, AuthorName the name shown for it.
	Author     string `json:"author"`
	AuthorName string `json:"author_name,omitempty"`
	// Roles are the sender's role ids, where the platform has roles.
	Roles []string `json:"roles,omitempty"`
	// Text is the message text, the bot's mention removed.
	Text string `json:"text"`
	// Attachments are the files sent with the message.
	Attachments []Attachment `json:"attachments,omitempty"`
	// Seq orders the messages as they arrived, across restarts.
	Seq int64 `json:"seq"`
	// Command is set on the control messages that are queued in order
	// with the prompts ("new").
	Command string `json:"command,omitempty"`

	// respond, when set, answers the message privately instead of posting
	// a reply (a slash command's interaction). It may be called once.
	respond func(text string)
}

// conv returns the conversation key of m.
func (m Message) conv() string {
	if m.Conv != "" {
		return m.Conv
	}
	return m.Channel
}

// Attachment is a file sent with a message.
type Attachment struct {
	// Name is the file name, ContentType its MIME type as the platform
	// says it ("" when it does not).
	Name        string `json:"name"`
	ContentType string `json:"content_type,omitempty"`
	// Size is the size in bytes the platform announces.
	Size int `json:"size"`
	// URL is where its bytes are.
	URL string `json:"url"`
}

// Errors of a Queue.
var (
	// ErrBusy: the queue is full; the message was not taken.
	ErrBusy = errors.New("queue full")
	// ErrClosed: the queue takes no more messages, and has none left.
	ErrClosed = errors.New("queue closed")
)

// Queue holds the messages waiting for their turn. It hands out the
// messages of one conversation (Message.conv) in the order they were put,
// one at a time: a conversation's next message is taken only once the
// previous one is Done. A Queue is safe for concurrent use.
//
// Each replica of the gateway has its own (see the README, "Several
// replicas"); it is the seam a queue shared by the replicas would
// replace: Put a publish, Take a fetch by a consumer, Done an
// acknowledgement.
type Queue interface {
	// Put appends m to the queue of its conversation. It fails with ErrBusy when
	// the queue is full and with ErrClosed after Close; it does not block
	// for long.
	Put(ctx context.Context, m Message) error
	// Take blocks until a message is ready (the oldest of a conversation
	// that has none in progress) and returns it, marked in progress. After
	// Close it goes on returning the messages left, then ErrClosed. It
	// returns ctx's error when ctx ends first.
	Take(ctx context.Context) (Message, error)
	// Done reports that the message Take returned has been answered; its
	// conversation's next message becomes ready.
	Done(m Message)
	// Close stops Put. It does not block.
	Close()
	// Waiting returns how many messages of conversation conv wait behind
	// the one in progress.
	Waiting(conv string) int
}

// MemQueue is the in-process Queue: per channel FIFO, bounded per
// channel and in total. Messages are lost when the process exits.
type MemQueue struct {
	perChannel, total int

	mu      sync.Mutex
	chans   map[string]*chanQueue
	ready   []string // channels with a message waiting and none in progress, oldest first
	pending int      // messages put and not yet taken
	closed  bool
	changed chan struct{} // closed and replaced whenever ready or closed changes
}

type chanQueue struct {
	msgs []Message
	busy bool
}

// NewMemQueue returns a MemQueue that holds at most perChannel waiting
// messages per channel and total in all (values below 1 mean 1).
func NewMemQueue(perChannel, total int) *MemQueue {
	return &MemQueue{
		perChannel: max(perChannel, 1),
		total:      max(total, 1),
		chans:      map[string]*chanQueue{},
		changed:    make(chan struct{}),
	}
}

// signal wakes every Take; q.mu is held.
func (q *MemQueue) signal() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// Put implements Queue.
func (q *MemQueue) Put(ctx context.Context, m Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	key := m.conv()
	c := q.chans[key]
	if c == nil {
		c = &chanQueue{}
		q.chans[key] = c
	}
	if len(c.msgs) >= q.perChannel || q.pending >= q.total {
		return ErrBusy
	}
	c.msgs = append(c.msgs, m)
	q.pending++
	if !c.busy && len(c.msgs) == 1 {
		q.ready = append(q.ready, key)
		q.signal()
	}
	return nil
}

// Take implements Queue.
func (q *MemQueue) Take(ctx context.Context) (Message, error) {
	for {
		q.mu.Lock()
		if len(q.ready) > 0 {
			ch := q.ready[0]
			q.ready = q.ready[1:]
			c := q.chans[ch]
			m := c.msgs[0]
			c.msgs[0] = Message{}
			c.msgs = c.msgs[1:]
			c.busy = true
			q.pending--
			q.mu.Unlock()
			return m, nil
		}
		if q.closed && q.pending == 0 {
			q.mu.Unlock()
			return Message{}, ErrClosed
		}
		changed := q.changed
		q.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Done implements Queue.
func (q *MemQueue) Done(m Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := m.conv()
	c := q.chans[key]
	if c == nil || !c.busy {
		return
	}
	c.busy = false
	if len(c.msgs) > 0 {
		q.ready = append(q.ready, key)
	} else {
		delete(q.chans, key)
	}
	q.signal()
}

// Close implements Queue.
func (q *MemQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.signal()
	}
}

// Waiting implements Queue.
func (q *MemQueue) Waiting(conv string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.chans[conv]; c != nil {
		return len(c.msgs)
	}
	return 0
}
