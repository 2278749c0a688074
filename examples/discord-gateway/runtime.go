package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcli/agentcli"
	"golang.org/x/sync/semaphore"
)

// Options configure a Runtime.
type Options struct {
	// Backend runs the prompts. Wrap it in agentcli.WithLimit for a global
	// limit on concurrent runs; the runtime retries by itself (Retry).
	Backend agentcli.Backend
	// Store keeps what is known of each conversation.
	Store SessionStore
	// Queue orders the messages of each conversation.
	Queue Queue
	// Journal, when set, records the messages taken and not yet answered
	// (see Recover).
	Journal Journal
	// Chat is where replies go.
	Chat Chat
	// Request is the template of every run: Model, MaxTurns, AllowedTools,
	// Dir, Env, ReplaceEnv, Timeout, SystemPrompt, Permission,
	// PermissionTimeout. Prompt, SessionID, OnPermission and OnQuestion
	// are the runtime's.
	Request agentcli.Request
	// Retry configures the retries of failed runs: MaxAttempts (zero means
	// 3), BaseDelay (zero means 1s, doubling), MaxDelay (zero means 30s).
	// OnRetry is not used. Only transient errors are retried (see
	// transient), and only while the run has shown nothing.
	Retry agentcli.RetryOptions
	// Live asks for one live session per conversation where the backend
	// has them (agentcli.StartSession); otherwise every message runs its
	// own CLI process, resuming the conversation's session.
	Live bool
	// LiveIdle closes a conversation's live session after this long
	// without a message (the next message resumes it). Zero means 15
	// minutes.
	LiveIdle time.Duration
	// MaxLive caps the live sessions held at once; zero means no cap. To
	// start one more, the least recently used idle one is closed; when all
	// are busy, the message runs in a CLI process of its own.
	MaxLive int
	// Warm keeps this many live sessions started ahead of need (an
	// agentcli.Pool, see warm.go) for conversations that start a new
	// session; they count against MaxLive. Zero means none. Only with
	// Live, on a backend with live sessions.
	Warm int
	// Preview posts a placeholder at once and edits it as the answer
	// streams (Discord). Without it, tool calls are posted as they happen
	// and the answer when it is complete (the console).
	Preview bool
	// EditInterval is the least time between two edits of a placeholder.
	// Zero means one second.
	EditInterval time.Duration
	// TypingInterval is how often the typing indicator is renewed while
	// the agent works. Zero means 8 seconds.
	TypingInterval time.Duration
	// MaxLen is the longest message the chat takes; longer replies are
	// split. Zero means no limit.
	MaxLen int
	// Allowed says who may send prompts; nil lets everyone.
	Allowed func(user string, roles []string) bool
	// Approver says who may answer any permission request and stop or
	// reset any conversation; nil means nobody beyond the requester and
	// the conversation's owner.
	Approver func(user string, roles []string) bool
	// Mention names the requester in every prompt ("Message from <@id>
	// (name)") and pings them with their permission requests and the
	// agent's questions (Discord).
	Mention bool
	// Questions puts the agent's questions (Request.OnQuestion) to the
	// requester as cards: a button per option, or a menu (see
	// askQuestion). NewRuntime turns it off for a backend without
	// Capabilities.Questions; off, the agent is told nobody is there to
	// answer (agentcli.NotAvailableMessage).
	Questions bool
	// Models are the models /model accepts; empty makes /model show the
	// model only.
	Models []string
	// AttachmentMax bounds the text attachments inlined into one prompt,
	// in bytes; zero means 100,000.
	AttachmentMax int
	// ImageMax bounds each image sent to the agent, in bytes; zero or more
	// than agentcli.MaxImageBytes means agentcli.MaxImageBytes. The images
	// of one message together are bounded by agentcli.MaxAttachmentBytes.
	ImageMax int
	// NoImages says why images are refused, when the backend takes none;
	// empty: "the <backend> agent cannot take images".
	NoImages string
	// Fetch downloads an attachment, at most limit bytes (more is an
	// error); nil refuses every attachment.
	Fetch func(ctx context.Context, a Attachment, limit int) ([]byte, error)
	// Summary adds a line under every answer: how long it took, its tokens
	// and its cost, where the CLI reports them.
	Summary bool
	// DeliveryTimeout bounds each call to Chat. Zero means 30 seconds.
	DeliveryTimeout time.Duration
	// Logger receives the runtime's logs; nil means slog.Default().
	Logger *slog.Logger

	// Locks, when set, makes the runtime one of several replicas sharing
	// the conversations (Store must then be shared too): before a message
	// is answered, its conversation is taken for this replica (Replica)
	// and the message is claimed in the conversation's entry (Entry.Last);
	// a message another replica claimed already, or one older than it, is
	// dropped without a word. See the README, "Several replicas".
	Locks ConvLocks
	// Replica names this runtime among the replicas (with Locks).
	Replica string
}

// ConvLocks gives a conversation to one replica of the gateway at a time.
type ConvLocks interface {
	// Lock blocks until this replica holds conv or ctx ends. The context
	// it returns ends when the lock is lost (it could not be renewed in
	// time: another replica may take the conversation over); unlock
	// releases the lock.
	Lock(ctx context.Context, conv string) (held context.Context, unlock func(), err error)
}

// Runtime is the gateway without Discord: it takes messages (Handle) and
// answers to cards (Answer), runs them on the backend one at a time per
// conversation, and answers through the Chat.
type Runtime struct {
	o       Options
	log     *slog.Logger
	base    context.Context
	stop    context.CancelCauseFunc
	liveOK  atomic.Bool
	lastSeq atomic.Int64

	// imageMem holds the bytes of the images of the messages being
	// answered (imageMemory).
	imageMem *semaphore.Weighted

	mu      sync.Mutex
	convs   map[string]*convState
	waits   map[string]*waiter
	waitSeq uint64
	// waitPrefix starts the ids of this replica's cards (Options.Replica),
	// so that a replica can tell another's card from an expired one of
	// its own.
	waitPrefix string
	starting   int // live sessions being started (counted against MaxLive)
	shut       bool
	totals     usageTotals
	closers    sync.WaitGroup // live sessions being closed
	pool       *agentcli.Pool // warm sessions (Options.Warm), once started
	warmOn     bool           // the pool is (being) made: its sessions count against MaxLive
	warmWG     sync.WaitGroup // the pool's creation
	warmCancel func()         // cancels the pool's starts in progress
	warmReady  chan struct{}  // closed once the pool is made (or not)

	wg    sync.WaitGroup // the dispatcher and every message in progress
	async sync.WaitGroup // immediate answers being delivered
}

// convState is what the runtime holds for a conversation between and
// during turns.
type convState struct {
	live      agentcli.Session
	liveModel string    // the model the live session was started with
	lastUsed  time.Time // end of its last turn
	idle      *time.Timer
	turn      *turnState
}

// turnState is the run in progress in a conversation.
type turnState struct {
	cancel    context.CancelCauseFunc
	session   agentcli.Session // the live session the turn runs in, if any
	requester string
	channel   string // where its answer and its cards go
}

// usageTotals sums the runs of this process (/usage).
type usageTotals struct {
	usage   agentcli.Usage
	cost    float64
	answers int
}

// NewRuntime returns a Runtime; call Start to begin answering.
func NewRuntime(o Options) *Runtime {
	if o.LiveIdle <= 0 {
		o.LiveIdle = 15 * time.Minute
	}
	if o.EditInterval <= 0 {
		o.EditInterval = time.Second
	}
	if o.TypingInterval <= 0 {
		o.TypingInterval = 8 * time.Second
	}
	if o.DeliveryTimeout <= 0 {
		o.DeliveryTimeout = 30 * time.Second
	}
	if o.AttachmentMax <= 0 {
		o.AttachmentMax = 100_000
	}
	if o.ImageMax <= 0 || o.ImageMax > agentcli.MaxImageBytes {
		o.ImageMax = agentcli.MaxImageBytes
	}
	if o.Retry.MaxAttempts <= 0 {
		o.Retry.MaxAttempts = 3
	}
	if o.Retry.BaseDelay <= 0 {
		o.Retry.BaseDelay = time.Second
	}
	if o.Retry.MaxDelay <= 0 {
		o.Retry.MaxDelay = 30 * time.Second
	}
	o.Retry.MaxDelay = max(o.Retry.MaxDelay, o.Retry.BaseDelay)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	// OnQuestion on a backend that cannot ask is an *UnsupportedError.
	o.Questions = o.Questions && o.Backend != nil && o.Backend.Capabilities().Questions
	rt := &Runtime{o: o, log: o.Logger, convs: map[string]*convState{}, waits: map[string]*waiter{},
		imageMem: semaphore.NewWeighted(imageMemory)}
	if o.Replica != "" {
		h := sha256.Sum256([]byte(o.Replica))
		rt.waitPrefix = hex.EncodeToString(h[:4]) + "-"
	}
	rt.base, rt.stop = context.WithCancelCause(context.Background())
	rt.liveOK.Store(o.Live)
	return rt
}

// Start starts taking messages off the queue. It returns at once.
func (rt *Runtime) Start() {
	rt.startWarm()
	rt.wg.Add(1)
	go rt.dispatch()
}

func (rt *Runtime) dispatch() {
	defer rt.wg.Done()
	for {
		m, err := rt.o.Queue.Take(context.Background())
		if err != nil {
			return
		}
		rt.wg.Add(1)
		go func() {
			defer rt.wg.Done()
			rt.process(m)
		}()
	}
}

// Shutdown stops taking messages and waits until every message taken
// before has been answered. When ctx ends first, the runs still going are
// cancelled and the messages still waiting are answered with a request to
// send them again; Shutdown then returns once those answers are out. It
// closes every live session before it returns.
func (rt *Runtime) Shutdown(ctx context.Context) {
	rt.o.Queue.Close()
	done := make(chan struct{})
	go func() { rt.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		rt.log.Warn("shutdown: cancelling the runs still going")
		rt.stop(errShutdown)
		<-done
	}
	rt.mu.Lock()
	rt.shut = true
	var live []agentcli.Session
	for _, cs := range rt.convs {
		if cs.idle != nil {
			cs.idle.Stop()
		}
		if cs.live != nil {
			live = append(live, cs.live)
		}
	}
	rt.convs = map[string]*convState{}
	rt.mu.Unlock()
	rt.closeWarm()
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() { defer wg.Done(); s.Close() }()
	}
	wg.Wait()
	rt.closers.Wait()
	rt.async.Wait()
	rt.stop(errShutdown)
}

// Recover goes through what a previous run of the gateway left in the
// journal; call it before Start. A message that was being answered when
// that run died is answered with a request to send it again (its
// placeholder says so), since its run was cut short and running it again
// unasked could repeat its tool calls; a message that was still waiting is
// queued again, in its place. It returns how many of each it found.
func (rt *Runtime) Recover(ctx context.Context) (resent, requeued int) {
	if rt.o.Journal == nil {
		return 0, 0
	}
	entries, err := rt.o.Journal.Pending()
	if err != nil {
		rt.log.Warn("journal", "err", err)
	}
	for _, e := range entries {
		m := e.Message
		if m.Seq > rt.lastSeq.Load() {
			rt.lastSeq.Store(m.Seq)
		}
		if !e.Running {
			if err := rt.o.Queue.Put(rt.base, m); err != nil {
				rt.log.Error("requeueing a message after a restart", "message", m.ID, "err", err)
				rt.reply(m, "⚠️ The gateway restarted and could not take this message again; please send it again.")
				rt.o.Journal.Done(m)
				continue
			}
			requeued++
			continue
		}
		resent++
		text := "⚠️ Interrupted: the gateway restarted while answering this, so the answer was cut short " +
			"(tool calls it had started may have run). Please send it again."
		dctx, cancel := context.WithTimeout(ctx, rt.o.DeliveryTimeout)
		channel, replyTo := e.Channel, ""
		if channel == "" || channel == m.Channel {
			channel, replyTo = m.Channel, m.ID
		}
		var derr error
		if e.Placeholder != "" {
			derr = rt.o.Chat.Edit(dctx, channel, e.Placeholder, text)
		}
		if e.Placeholder == "" || derr != nil {
			_, derr = rt.o.Chat.Post(dctx, channel, replyTo, text)
		}
		cancel()
		if derr != nil {
			rt.log.Error("telling a user to resend after a restart", "message", m.ID, "err", derr)
		}
		rt.o.Journal.Done(m)
	}
	if resent+requeued > 0 {
		rt.log.Info("recovered the messages of the previous run", "asked_to_resend", resent, "queued_again", requeued)
	}
	return resent, requeued
}

// Handle takes one incoming message: a command is answered at once, a
// prompt is queued for its conversation (or answered "busy"). It does not
// block on the chat: immediate answers are delivered in the background.
func (rt *Runtime) Handle(m Message) {
	if rt.o.Allowed != nil && !rt.o.Allowed(m.Author, m.Roles) {
		rt.log.Info("ignoring a message from a user who is not allowed", "channel", m.Channel, "user", m.Author)
		if m.respond != nil {
			rt.later(func() { m.respond("You are not allowed to use this bot.") })
		}
		return
	}
	m.Text = strings.TrimSpace(m.Text)
	if m.Text == "" && len(m.Attachments) == 0 {
		return
	}
	cmd, arg := command(m.Text)
	if cmd != "" {
		m.NewTask, m.Conv = false, "" // a command is about the channel (or thread) it is typed in
	} else if len(m.Attachments) == 0 && rt.answerByMessage(m) {
		return // the answer to a question of the agent (freetext.go)
	}
	switch cmd {
	case "stop":
		rt.later(func() { rt.reply(m, rt.stopTurn(m)) })
		return
	case "backend":
		rt.later(func() { rt.reply(m, rt.describe(m.conv())) })
		return
	case "status":
		rt.later(func() { rt.reply(m, rt.status(m.conv())) })
		return
	case "usage":
		rt.later(func() { rt.reply(m, rt.usage(m.conv())) })
		return
	case "model":
		rt.later(func() { rt.reply(m, rt.setModel(m, arg)) })
		return
	case "help":
		rt.later(func() { rt.reply(m, helpText) })
		return
	case "new":
		if why := rt.mayControl(m, "start this conversation afresh"); why != "" {
			rt.later(func() { rt.reply(m, why) })
			return
		}
		m.Command = "new"
		if m.respond != nil {
			respond := m.respond
			m.respond = nil
			rt.later(func() {
				respond("🆕 The conversation starts afresh after the messages already waiting here.")
			})
		}
	}
	m.Seq = rt.nextSeq()
	if rt.o.Journal != nil {
		if err := rt.o.Journal.Queued(m); err != nil {
			rt.log.Warn("journal", "message", m.ID, "err", err)
		}
	}
	err := rt.o.Queue.Put(rt.base, m)
	if err != nil && rt.o.Journal != nil {
		rt.o.Journal.Done(m)
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrBusy):
		rt.later(func() {
			rt.reply(m, "⏳ Busy: too many messages are waiting already. Please send that again once the agent has answered.")
		})
	case errors.Is(err, ErrClosed):
		rt.later(func() { rt.reply(m, errorText(errShutdown, 0)) })
	default:
		rt.log.Error("queue", "conversation", m.conv(), "err", err)
		rt.later(func() { rt.reply(m, "⚠️ Could not queue that message; please send it again.") })
	}
}

const helpText = "Send a message and the agent answers, one message at a time per conversation.\n" +
	"`/stop` stops the current answer · `/new` starts the conversation afresh · `/model` shows or picks the model · " +
	"`/status` and `/usage` show this conversation · `/backend` shows what answers here."

// nextSeq returns a number larger than every one handed out before, in
// this run or (through the journal) the previous ones.
func (rt *Runtime) nextSeq() int64 {
	for {
		last := rt.lastSeq.Load()
		n := max(time.Now().UnixNano(), last+1)
		if rt.lastSeq.CompareAndSwap(last, n) {
			return n
		}
	}
}

// later runs f in the background; Shutdown waits for it.
func (rt *Runtime) later(f func()) {
	rt.async.Add(1)
	go func() {
		defer rt.async.Done()
		f()
	}()
}

// command returns the command a message starts with ("stop", "new", ...)
// and the rest of its text, or "" when it is no command.
func command(text string) (string, string) {
	f := strings.Fields(text)
	if len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return "", ""
	}
	switch c := strings.ToLower(f[0][1:]); c {
	case "stop", "new", "backend", "status", "usage", "model", "help":
		return c, strings.TrimSpace(strings.TrimPrefix(text, f[0]))
	}
	return "", ""
}

// deliveryCtx bounds one call to the chat; it does not end with the
// runtime, so that the last answers still go out during a shutdown.
func (rt *Runtime) deliveryCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), rt.o.DeliveryTimeout)
}

// reply answers m with text: privately when m came with a way to do so (a
// slash command), else as a reply in its channel.
func (rt *Runtime) reply(m Message, text string) {
	if m.respond != nil {
		m.respond(text)
		return
	}
	ctx, cancel := rt.deliveryCtx()
	defer cancel()
	if _, err := rt.o.Chat.Post(ctx, m.Channel, m.ID, text); err != nil {
		rt.log.Error("posting a reply", "channel", m.Channel, "err", err)
	}
}

// state returns the conversation's state, creating it; rt.mu is held.
func (rt *Runtime) state(conv string) *convState {
	cs := rt.convs[conv]
	if cs == nil {
		cs = &convState{}
		rt.convs[conv] = cs
	}
	return cs
}

// forget drops an empty conversation state; rt.mu is held.
func (rt *Runtime) forget(conv string) {
	if cs := rt.convs[conv]; cs != nil && cs.live == nil && cs.turn == nil {
		delete(rt.convs, conv)
	}
}

// mayControl returns "" when m's author may stop or reset m's
// conversation (the requester of the turn in progress, the conversation's
// owner, or an approver), else why not.
func (rt *Runtime) mayControl(m Message, what string) string {
	if rt.o.Approver != nil && rt.o.Approver(m.Author, m.Roles) {
		return ""
	}
	conv := m.conv()
	rt.mu.Lock()
	requester := ""
	if cs := rt.convs[conv]; cs != nil && cs.turn != nil {
		requester = cs.turn.requester
	}
	rt.mu.Unlock()
	if requester == m.Author {
		return ""
	}
	e, _ := rt.o.Store.Get(context.Background(), conv)
	if e.Owner == "" && requester == "" || e.Owner == m.Author {
		return ""
	}
	owner := e.Owner
	if owner == "" {
		owner = requester
	}
	return fmt.Sprintf("🚫 Only <@%s>, who started this conversation, or an approver may %s.", owner, what)
}

func (rt *Runtime) process(m Message) {
	defer rt.o.Queue.Done(m)
	if rt.o.Journal != nil {
		defer rt.o.Journal.Done(m)
	}
	parent := rt.base
	if rt.o.Locks != nil {
		held, release, ok := rt.exclusive(m)
		if !ok {
			return
		}
		defer release()
		parent = held
	}
	if m.Command == "new" {
		rt.fresh(m)
		return
	}
	if rt.base.Err() != nil {
		rt.reply(m, errorText(errShutdown, 0))
		return
	}
	conv := m.conv()
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)

	target := rt.target(m)
	t := &turnState{cancel: cancel, requester: m.Author, channel: target.channel}
	rt.mu.Lock()
	rt.state(conv).turn = t
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		if cs := rt.convs[conv]; cs != nil && cs.turn == t {
			cs.turn = nil
			rt.forget(conv)
		}
		rt.mu.Unlock()
	}()
	if rt.o.Journal != nil {
		rt.o.Journal.Running(m, target.channel, "")
	}

	turn, release, refusal := rt.prompt(ctx, m)
	defer release()
	if refusal != "" {
		rt.deliver(target, refusal)
		return
	}
	out := rt.newOutput(m, target)
	if rt.o.Journal != nil && out.id != "" {
		rt.o.Journal.Running(m, target.channel, out.id)
	}
	reply, res := rt.answer(ctx, m, turn, out)
	rt.record(context.WithoutCancel(ctx), m, reply, res)
	out.finish(reply)
}

// target returns where the answer to m goes: the task's own thread (a new
// task's, started now), or a reply in the channel.
func (rt *Runtime) target(m Message) replyTarget {
	if !m.NewTask {
		return replyTarget{channel: m.Channel, replyTo: m.ID}
	}
	dctx, dcancel := rt.deliveryCtx()
	thread, err := rt.o.Chat.StartThread(dctx, m.Channel, m.ID, threadName(m))
	dcancel()
	if err != nil {
		rt.log.Warn("could not start a thread for the task; answering in the channel", "channel", m.Channel, "err", err)
		return replyTarget{channel: m.Channel, replyTo: m.ID}
	}
	return replyTarget{channel: thread}
}

// record stores what the answer to m changed in its conversation (its
// owner, session, usage and cost) and adds its usage to the totals.
func (rt *Runtime) record(ctx context.Context, m Message, reply Reply, res *agentcli.Result) {
	conv := m.conv()
	if _, err := rt.o.Store.Update(ctx, conv, func(e *Entry) {
		if e.Owner == "" {
			e.Owner = m.Author
		}
		if reply.SessionID != "" {
			e.SessionID = reply.SessionID
		}
		if res != nil {
			if res.Usage.Cumulative {
				e.Usage = res.Usage
			} else {
				e.Usage = e.Usage.Add(res.Usage)
			}
			if res.CostUSD != nil {
				e.CostUSD += *res.CostUSD
			}
			e.Answers++
		}
	}); err != nil {
		rt.log.Error("storing the conversation", "conversation", conv, "err", err)
	}
	if res != nil {
		rt.mu.Lock()
		rt.totals.usage = rt.totals.usage.Add(res.Usage)
		if res.CostUSD != nil {
			rt.totals.cost += *res.CostUSD
		}
		rt.totals.answers++
		rt.mu.Unlock()
	}
}

// exclusive takes m's conversation for this replica (Options.Locks) and
// claims m in the conversation's entry. It returns false, having released
// the lock, when m is not to be answered here: another replica claimed it
// or a later message of the conversation already (it saw the same
// messages), or the lock could not be had (m's author is told). Otherwise
// the caller answers m within held, which ends if the lock is lost, and
// calls release when done. When another replica answered the
// conversation last, this replica's live session of it is closed: it
// missed those turns, and the next one resumes the stored session.
func (rt *Runtime) exclusive(m Message) (held context.Context, release func(), ok bool) {
	conv := m.conv()
	held, unlock, err := rt.o.Locks.Lock(rt.base, conv)
	if err != nil {
		if rt.base.Err() != nil {
			rt.reply(m, errorText(errShutdown, 0))
		} else {
			rt.log.Error("taking the conversation", "conversation", conv, "err", err)
			rt.reply(m, "⚠️ Could not take this conversation (the shared store is unreachable); please send it again.")
		}
		return nil, nil, false
	}
	skip, other := false, ""
	_, err = rt.o.Store.Update(held, conv, func(e *Entry) {
		if e.Last != "" && !later(m.ID, e.Last) {
			skip = true
			return
		}
		other = e.Replica
		e.Last, e.Replica = m.ID, rt.o.Replica
	})
	switch {
	case err != nil:
		unlock()
		rt.log.Error("claiming a message", "conversation", conv, "message", m.ID, "err", err)
		rt.reply(m, "⚠️ Could not take this message (the shared store is unreachable); please send it again.")
		return nil, nil, false
	case skip:
		unlock()
		rt.log.Debug("another replica answered this message", "conversation", conv, "message", m.ID)
		return nil, nil, false
	}
	if other != "" && other != rt.o.Replica {
		rt.dropLive(conv)
	}
	return held, unlock, true
}

// later reports whether message id a comes after b in their channel:
// Discord's ids (snowflakes) grow with time. Ids that are not numbers
// cannot be ordered: a is taken as later.
func later(a, b string) bool {
	if !isDigits(a) || !isDigits(b) {
		return true
	}
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// replyTarget is where a message's answer goes.
type replyTarget struct {
	channel string
	replyTo string // the message answered, when the answer is a reply
}

// deliver posts text to target.
func (rt *Runtime) deliver(target replyTarget, text string) {
	ctx, cancel := rt.deliveryCtx()
	defer cancel()
	if _, err := rt.o.Chat.Post(ctx, target.channel, target.replyTo, text); err != nil {
		rt.log.Error("posting a reply", "channel", target.channel, "err", err)
	}
}

// threadName names the thread of a task after the first line of its
// prompt.
func threadName(m Message) string {
	s := m.Text
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = shorten(oneLine(s), 80)
	if s == "" && len(m.Attachments) > 0 {
		s = m.Attachments[0].Name
	}
	if s == "" {
		s = "Task"
	}
	return s
}

// prompt returns the turn of m: its text, who sent it (Options.Mention),
// its text attachments inlined and its images; or, when an attachment
// cannot be taken, a refusal to post instead. The caller calls release
// once done with the turn (it frees the memory its images hold).
func (rt *Runtime) prompt(ctx context.Context, m Message) (_ *agentcli.Turn, release func(), refusal string) {
	text := m.Text
	var images []agentcli.Attachment
	release = func() {}
	if len(m.Attachments) > 0 {
		var inlined string
		var atts []agentcli.Attachment
		inlined, atts, release, refusal = rt.attachments(ctx, m.Attachments)
		if refusal != "" {
			return nil, release, refusal
		}
		text, images = strings.TrimSpace(text+inlined), atts
		if text == "" { // images alone: a prompt is required
			text = "(see the attached image)"
			if len(images) > 1 {
				text = "(see the attached images)"
			}
		}
	}
	if rt.o.Mention && m.Author != "" {
		who := "<@" + m.Author + ">"
		if m.AuthorName != "" {
			who += " (" + m.AuthorName + ")"
		}
		text = "Message from " + who + ":\n" + text
	}
	return &agentcli.Turn{Prompt: text, Attachments: images}, release, ""
}

// answer runs m's prompt and returns its reply and result (nil when it
// failed). Transient failures are retried with exponential backoff up to
// Retry.MaxAttempts attempts, on one-shot runs and live sessions alike,
// but only while the run has shown nothing: a run that failed after its
// first visible output is not run again (its tool calls could repeat);
// the reply shows what it had produced and says so. A stored session the
// CLI no longer knows is forgotten and the message run once more without
// it.
func (rt *Runtime) answer(ctx context.Context, m Message, turn *agentcli.Turn, out *output) (Reply, *agentcli.Result) {
	conv := m.conv()
	start := time.Now()
	e, err := rt.o.Store.Get(ctx, conv)
	if err != nil {
		rt.log.Warn("session store: going on without a session", "conversation", conv, "err", err)
	}
	fresh := false
	for attempt := 1; ; attempt++ {
		res, err := rt.runOnce(ctx, m, turn, &e, out)
		if err == nil {
			r := ReplyFor(conv, res, nil)
			if rt.o.Summary {
				r.Summary = summary(time.Since(start), res)
			}
			return r, res
		}
		rt.log.Warn("run failed", "conversation", conv, "message", m.ID, "attempt", attempt, "err", err)
		if errors.Is(err, agentcli.ErrSessionNotFound) && e.SessionID != "" && !fresh && !out.shown() {
			rt.log.Warn("the CLI does not know the conversation's session; starting a fresh one",
				"conversation", conv, "session", e.SessionID)
			if _, derr := rt.o.Store.Update(ctx, conv, func(x *Entry) { x.SessionID = "" }); derr != nil {
				rt.log.Error("session store", "conversation", conv, "err", derr)
			}
			rt.dropLive(conv)
			e.SessionID, fresh = "", true
			attempt--
			out.reset()
			continue
		}
		r := ReplyFor(conv, res, err)
		if out.shown() {
			r.Partial = out.produced()
			return r, nil
		}
		if attempt >= rt.o.Retry.MaxAttempts || !transient(err) || ctx.Err() != nil {
			return r, nil
		}
		wait := rt.backoff(attempt)
		out.note(fmt.Sprintf("⚠️ %s — retrying in %v (attempt %d of %d)", shorten(errorDetail(err), 120),
			wait.Round(time.Second/10), attempt+1, rt.o.Retry.MaxAttempts))
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ReplyFor(conv, nil, &agentcli.CanceledError{Backend: rt.o.Backend.Name(), Err: context.Cause(ctx)}), nil
		}
	}
}

// backoff returns the wait after failed attempt n (1-based): drawn from
// [d/2, d] with d = BaseDelay·2^(n-1), capped at MaxDelay.
func (rt *Runtime) backoff(n int) time.Duration {
	d := rt.o.Retry.BaseDelay
	for i := 1; i < n && d < rt.o.Retry.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, rt.o.Retry.MaxDelay)
	return d/2 + rand.N(d-d/2+1)
}

// transient reports whether a failed run is worth another attempt: what
// agentcli.IsTransient says (a timeout, a rate limit, a 5xx, a CLI killed
// by a signal or gone without a result), plus a CLI that exited with
// status 1 without saying why in a way agentcli recognizes (an uncaught
// exception) and a live session whose CLI died under the turn.
func transient(err error) bool {
	if agentcli.IsTransient(err) {
		return true
	}
	for _, never := range []error{agentcli.ErrCanceled, agentcli.ErrAuth, agentcli.ErrSessionNotFound,
		agentcli.ErrUnsupported, agentcli.ErrInterrupted, agentcli.ErrBadRequest, context.Canceled} {
		if errors.Is(err, never) {
			return false
		}
	}
	var crash *sessionCrash
	if errors.As(err, &crash) {
		return true
	}
	var ee *agentcli.ExitError
	return errors.As(err, &ee) && ee.Code == 1 && ee.Kind == nil
}

// sessionCrash is a live turn that failed because its CLI died.
type sessionCrash struct {
	turn error // the turn's error
	why  error // the session's (Session.Err)
}

func (e *sessionCrash) Error() string {
	return "the live session's CLI died: " + e.why.Error()
}

func (e *sessionCrash) Unwrap() []error { return []error{e.why, e.turn} }

// runOnce makes one attempt at m's turn (its prompt and images, sent
// again on every attempt): as the next turn of the conversation's live
// session when the backend has them, else as a run of its own resuming
// the conversation's session.
//
// When a live session's CLI dies under the turn, e.SessionID is set to its
// session (if it had none), so that the next attempt resumes it.
func (rt *Runtime) runOnce(ctx context.Context, m Message, turn *agentcli.Turn, e *Entry, out *output) (*agentcli.Result, error) {
	conv := m.conv()
	if rt.liveOK.Load() {
		sess, err := rt.liveSession(ctx, m, *e)
		switch {
		case errors.Is(err, agentcli.ErrUnsupported):
			if rt.liveOK.Swap(false) {
				rt.log.Info("no live sessions on this backend; running one CLI process per message", "err", err)
			}
		case errors.Is(err, errNoRoom):
			rt.log.Info("every live session is busy (MAX_LIVE_SESSIONS); this message runs in a process of its own",
				"conversation", conv)
		case err != nil:
			return nil, err
		default:
			rt.setTurnSession(conv, sess)
			res, err := rt.consume(ctx, out, agentcli.StreamTurn(ctx, sess, turn))
			rt.setTurnSession(conv, nil)
			if why := sess.Err(); why != nil {
				rt.log.Warn("live session ended", "conversation", conv, "err", why)
				rt.dropLive(conv)
				if err != nil && !errors.Is(why, agentcli.ErrSessionClosed) && ctx.Err() == nil {
					err = &sessionCrash{turn: err, why: why}
				}
				if e.SessionID == "" {
					e.SessionID = sess.ID()
				}
			} else {
				rt.idleLater(conv, sess)
			}
			return res, err
		}
	}
	req := rt.request(conv, *e)
	req.Prompt, req.Attachments = turn.Prompt, turn.Attachments
	return rt.consume(ctx, out, rt.o.Backend.Stream(ctx, req))
}

func (rt *Runtime) setTurnSession(conv string, s agentcli.Session) {
	rt.mu.Lock()
	if cs := rt.convs[conv]; cs != nil && cs.turn != nil {
		cs.turn.session = s
	}
	rt.mu.Unlock()
}

// request returns the run template for conversation conv with entry e.
func (rt *Runtime) request(conv string, e Entry) *agentcli.Request {
	req := rt.o.Request
	req.Prompt = ""
	req.SessionID = e.SessionID
	if e.Model != "" {
		req.Model = e.Model
	}
	req.OnText = nil
	req.OnPermission = nil
	if req.Permission == agentcli.PermissionAsk {
		req.OnPermission = func(ctx context.Context, p *agentcli.PermissionRequest) agentcli.PermissionDecision {
			return rt.askPermission(ctx, conv, p)
		}
	}
	req.OnQuestion = nil
	if rt.o.Questions {
		req.OnQuestion = func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
			return rt.askQuestion(ctx, conv, q), nil
		}
	}
	return &req
}

// errNoRoom: MaxLive sessions are held and every one is busy.
var errNoRoom = errors.New("no room for another live session")

// liveSession returns the conversation's live session, starting it
// (resuming e's session) when there is none, it has ended or its model is
// no longer the conversation's.
func (rt *Runtime) liveSession(ctx context.Context, m Message, e Entry) (agentcli.Session, error) {
	conv := m.conv()
	rt.mu.Lock()
	cs := rt.state(conv)
	s, model := cs.live, cs.liveModel
	if cs.idle != nil {
		cs.idle.Stop()
		cs.idle = nil
	}
	rt.mu.Unlock()
	if s != nil {
		if s.Err() == nil && model == e.Model {
			return s, nil
		}
		if id := s.ID(); id != "" && e.SessionID == "" {
			e.SessionID = id
		}
		rt.dropLive(conv)
	}
	if !rt.reserveLive(conv) {
		return nil, errNoRoom
	}
	s, err := rt.takeWarm(ctx, conv, e)
	if s == nil && err == nil {
		s, err = agentcli.StartSession(ctx, rt.o.Backend, rt.request(conv, e))
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.starting--
	if err != nil {
		return nil, err
	}
	if rt.shut {
		rt.closers.Add(1)
		go func() { defer rt.closers.Done(); s.Close() }()
		return nil, errShutdown
	}
	cs = rt.state(conv)
	cs.live, cs.liveModel = s, e.Model
	return s, nil
}

// reserveLive makes room for one more live session under MaxLive, closing
// the least recently used idle one if need be; false when every session
// held is busy.
func (rt *Runtime) reserveLive(conv string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.o.MaxLive <= 0 {
		rt.starting++
		return true
	}
	held := rt.starting + rt.warmSlots()
	var victim string
	var oldest time.Time
	for c, cs := range rt.convs {
		if cs.live == nil {
			continue
		}
		held++
		if cs.turn == nil && c != conv && (victim == "" || cs.lastUsed.Before(oldest)) {
			victim, oldest = c, cs.lastUsed
		}
	}
	if held < rt.o.MaxLive {
		rt.starting++
		return true
	}
	if victim == "" {
		return false
	}
	cs := rt.convs[victim]
	s := cs.live
	cs.live = nil
	if cs.idle != nil {
		cs.idle.Stop()
		cs.idle = nil
	}
	rt.forget(victim)
	rt.closers.Add(1)
	go func() {
		defer rt.closers.Done()
		rt.log.Info("closing the least recently used live session (MAX_LIVE_SESSIONS)", "conversation", victim, "session", s.ID())
		s.Close()
	}()
	rt.starting++
	return true
}

// idleLater closes the conversation's live session s after LiveIdle
// without a turn.
func (rt *Runtime) idleLater(conv string, s agentcli.Session) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	cs := rt.convs[conv]
	if cs == nil || cs.live != s || rt.shut {
		return
	}
	cs.lastUsed = time.Now()
	if cs.idle != nil {
		cs.idle.Stop()
	}
	cs.idle = time.AfterFunc(rt.o.LiveIdle, func() {
		rt.mu.Lock()
		cs := rt.convs[conv]
		if rt.shut || cs == nil || cs.live != s || cs.turn != nil {
			rt.mu.Unlock()
			return
		}
		cs.live, cs.idle = nil, nil
		rt.forget(conv)
		rt.closers.Add(1)
		rt.mu.Unlock()
		defer rt.closers.Done()
		rt.log.Info("closing an idle live session", "conversation", conv, "session", s.ID())
		s.Close()
	})
}

// dropLive closes the conversation's live session, if any.
func (rt *Runtime) dropLive(conv string) {
	rt.mu.Lock()
	cs := rt.convs[conv]
	var s agentcli.Session
	if cs != nil {
		s = cs.live
		cs.live = nil
		if cs.idle != nil {
			cs.idle.Stop()
			cs.idle = nil
		}
	}
	rt.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// consume reads a run's events: text and tool calls go to the output, the
// result is returned.
func (rt *Runtime) consume(ctx context.Context, out *output, seq iter.Seq2[agentcli.Event, error]) (*agentcli.Result, error) {
	var res *agentcli.Result
	deltas := false
	for ev, err := range seq {
		if err != nil {
			var re *agentcli.ResultError
			if errors.As(err, &re) && re.Result != nil {
				return re.Result, err
			}
			return res, err
		}
		if ev.Subagent != "" {
			continue // sub-agent traffic: not the answer
		}
		switch ev.Kind {
		case agentcli.EventTextDelta:
			deltas = true
			out.text(ev.Text)
		case agentcli.EventText:
			// CLIs that stream deltas repeat the whole block afterwards.
			if !deltas {
				out.text(ev.Text)
			}
			deltas = false
			out.paragraph()
		case agentcli.EventToolUse:
			if ev.Tool != nil {
				out.tool(toolLine(ev.Tool))
			}
		case agentcli.EventResult:
			res = ev.Result
		}
	}
	if res == nil {
		return nil, &agentcli.NoResultError{Backend: rt.o.Backend.Name()}
	}
	return res, nil
}

// fresh answers /new: the conversation's next message starts a new
// session (its model stays).
func (rt *Runtime) fresh(m Message) {
	conv := m.conv()
	rt.dropLive(conv)
	if _, err := rt.o.Store.Update(context.Background(), conv, func(e *Entry) {
		*e = Entry{Model: e.Model, Last: e.Last, Replica: e.Replica}
	}); err != nil {
		rt.log.Error("session store", "conversation", conv, "err", err)
		rt.reply(m, "⚠️ Could not forget the session: "+shorten(err.Error(), 200))
		return
	}
	rt.mu.Lock()
	rt.forget(conv)
	rt.mu.Unlock()
	rt.reply(m, "🆕 Fresh start: the next message begins a new conversation.")
}

// stopTurn answers /stop: it stops the conversation's current run, if m's
// author may, and says what it did.
func (rt *Runtime) stopTurn(m Message) string {
	conv := m.conv()
	rt.mu.Lock()
	var t *turnState
	var s agentcli.Session
	if cs := rt.convs[conv]; cs != nil && cs.turn != nil {
		t, s = cs.turn, cs.turn.session
	}
	rt.mu.Unlock()
	if t == nil {
		return "Nothing is running here."
	}
	if why := rt.mayControl(m, "stop it"); why != "" {
		return why
	}
	if s != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.Interrupt(ctx)
		cancel()
		if err == nil {
			return "⏹ Stopping the current answer."
		}
		rt.log.Warn("interrupt failed; cancelling the turn", "conversation", conv, "err", err)
	}
	t.cancel(errStopped)
	return "⏹ Stopping the current answer."
}

// model returns the model of a conversation with entry e.
func (rt *Runtime) model(e Entry) string {
	switch {
	case e.Model != "":
		return e.Model
	case rt.o.Request.Model != "":
		return rt.o.Request.Model
	}
	return "the CLI's default"
}

// describe answers /backend.
func (rt *Runtime) describe(conv string) string {
	e, _ := rt.o.Store.Get(context.Background(), conv)
	perm := rt.o.Request.Permission
	if perm == "" {
		perm = agentcli.PermissionDeny // agentcli's zero value
	}
	mode := "one CLI process per message"
	if rt.liveOK.Load() {
		mode = "live sessions"
	}
	return fmt.Sprintf("Backend: **%s** · model: %s · %s · permissions: %s", rt.o.Backend.Name(), rt.model(e), mode, perm)
}

// status answers /status.
func (rt *Runtime) status(conv string) string {
	e, _ := rt.o.Store.Get(context.Background(), conv)
	rt.mu.Lock()
	state, session := "idle", e.SessionID
	if cs := rt.convs[conv]; cs != nil {
		if cs.turn != nil {
			state = "answering <@" + cs.turn.requester + ">"
		}
		if cs.live != nil {
			if id := cs.live.ID(); id != "" {
				session = id
			}
			state += ", live session open"
		}
	}
	rt.mu.Unlock()
	if session == "" {
		session = "none yet"
	}
	owner := "nobody yet"
	if e.Owner != "" {
		owner = "<@" + e.Owner + ">"
	}
	return fmt.Sprintf("Status: %s · waiting: %d · session: `%s` · model: %s · started by %s",
		state, rt.o.Queue.Waiting(conv), session, rt.model(e), owner)
}

// usage answers /usage.
func (rt *Runtime) usage(conv string) string {
	e, _ := rt.o.Store.Get(context.Background(), conv)
	rt.mu.Lock()
	tot := rt.totals
	rt.mu.Unlock()
	line := func(u agentcli.Usage, cost float64, answers int) string {
		s := fmt.Sprintf("%d answers · %s tokens in, %s out", answers,
			thousands(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens), thousands(u.OutputTokens))
		if cost > 0 {
			s += fmt.Sprintf(" · $%.4f", cost)
		}
		return s
	}
	return "This conversation: " + line(e.Usage, e.CostUSD, e.Answers) +
		"\nThis gateway since it started: " + line(tot.usage, tot.cost, tot.answers)
}

// setModel answers /model: without an argument it shows the model; with
// one of Options.Models it makes it the conversation's (the live session,
// if any, is closed; the next message resumes the session on that model).
func (rt *Runtime) setModel(m Message, name string) string {
	conv := m.conv()
	e, _ := rt.o.Store.Get(context.Background(), conv)
	if name == "" {
		s := "Model: " + rt.model(e)
		if len(rt.o.Models) > 0 {
			s += " · choices: " + strings.Join(rt.o.Models, ", ")
		}
		return s
	}
	if len(rt.o.Models) == 0 {
		return "🚫 The operator has not configured models to choose from (MODELS)."
	}
	if !slices.Contains(rt.o.Models, name) {
		return "🚫 Unknown model `" + shorten(strings.ReplaceAll(name, "`", "'"), 80) + "`; choices: " + strings.Join(rt.o.Models, ", ")
	}
	if why := rt.mayControl(m, "change its model"); why != "" {
		return why
	}
	if _, err := rt.o.Store.Update(context.Background(), conv, func(e *Entry) {
		e.Model = name
		if e.Model == rt.o.Request.Model {
			e.Model = ""
		}
	}); err != nil {
		rt.log.Error("session store", "conversation", conv, "err", err)
		return "⚠️ Could not store the model: " + shorten(err.Error(), 200)
	}
	return "🔁 Model of this conversation: " + name + " (from the next message on)."
}

// ModelChoices returns the models of Options.Models that contain prefix,
// for autocompletion.
func (rt *Runtime) ModelChoices(prefix string) []string {
	var out []string
	for _, m := range rt.o.Models {
		if strings.Contains(strings.ToLower(m), strings.ToLower(prefix)) {
			out = append(out, m)
		}
	}
	return out
}

// waiter is a card waiting for an answer: a permission request or one
// of the agent's questions.
type waiter struct {
	conv, channel string
	requester     string
	text          string              // the card's text without the mention
	decide        func(Choice) bool   // validates a choice; false: not one of the card's
	label         func(Choice) string // what a choice decided, for the card's new text; nil: choiceLabels
	answer        chan Choice         // buffered: one answer
	// free lets the card be answered in words of one's own (a question's
	// item, see freetext.go): a Choice with Button "text" and the words
	// in Values[0].
	free bool
	form [2]string // the title and placeholder of the free-text form
	seq  uint64    // order of registration
}

// Choice is an answer to a card: the button pressed or the values picked.
type Choice struct {
	Button string
	Values []string
	By     string
	edit   bool // not a press of the card: the asker updates it
}

// register adds w and returns its id.
func (rt *Runtime) register(w *waiter) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.waitSeq++
	id := rt.waitPrefix + strconv.FormatUint(rt.waitSeq, 36)
	w.seq = rt.waitSeq
	rt.waits[id] = w
	return id
}

// unregister removes waiter id and reports whether it was still there.
func (rt *Runtime) unregister(id string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	_, ok := rt.waits[id]
	delete(rt.waits, id)
	return ok
}

// askPermission posts a permission request with Allow / Always / Deny
// buttons, mentioning the requester of the conversation's turn, and waits
// for their press (or an approver's), the request's deadline or the end of
// the turn. Anything but a press denies.
func (rt *Runtime) askPermission(ctx context.Context, conv string, p *agentcli.PermissionRequest) agentcli.PermissionDecision {
	timeout := rt.o.Request.PermissionTimeout
	if timeout <= 0 {
		timeout = agentcli.DefaultPermissionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deny := agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "The user did not allow this."}

	rt.mu.Lock()
	var requester, channel string
	if cs := rt.convs[conv]; cs != nil && cs.turn != nil {
		requester, channel = cs.turn.requester, cs.turn.channel
	}
	rt.mu.Unlock()
	if channel == "" {
		rt.log.Error("a permission request outside of a turn; denying it", "conversation", conv)
		return deny
	}
	text := "🔐 The agent asks to use a tool:\n" + toolLine(&p.Tool)
	if p.Title != "" {
		text += "\n" + shorten(oneLine(p.Title), 200)
	}
	w := &waiter{conv: conv, channel: channel, requester: requester, text: text, answer: make(chan Choice, 1),
		decide: func(c Choice) bool { return c.Button == "allow" || c.Button == "always" || c.Button == "deny" }}
	id := rt.register(w)
	shown := text + fmt.Sprintf("\n(no answer within %v denies it)", timeout)
	if rt.o.Mention && requester != "" {
		shown = "<@" + requester + "> " + shown
	}
	dctx, dcancel := rt.deliveryCtx()
	msgID, err := rt.o.Chat.Ask(dctx, channel, Card{Text: shown, Mention: requester, Buttons: []Button{
		{ID: "w:" + id + ":allow", Label: "Allow", Style: "allow"},
		{ID: "w:" + id + ":always", Label: "Always", Style: "allow"},
		{ID: "w:" + id + ":deny", Label: "Deny", Style: "deny"},
	}})
	dcancel()
	if err != nil {
		rt.unregister(id)
		rt.log.Error("posting a permission request; denying it", "channel", channel, "err", err)
		return deny
	}
	var c Choice
	select {
	case c = <-w.answer:
	case <-ctx.Done():
		if !rt.unregister(id) {
			c = <-w.answer // answered just now
			break
		}
		why := "⏱ No answer in time: denied."
		if context.Cause(ctx) != context.DeadlineExceeded {
			why = "⏹ The turn ended: denied."
		}
		dctx, dcancel := rt.deliveryCtx()
		defer dcancel()
		if err := rt.o.Chat.Edit(dctx, channel, msgID, text+"\n"+why); err != nil {
			rt.log.Error("updating a permission request", "channel", channel, "err", err)
		}
		return deny
	}
	switch c.Button {
	case "allow":
		return agentcli.PermissionDecision{Kind: agentcli.AllowOnce}
	case "always":
		return agentcli.PermissionDecision{Kind: agentcli.AllowAlways}
	}
	return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "The user denied this."}
}

// choiceLabels say what a press decided, for the card's new text.
var choiceLabels = map[string]string{
	"allow": "✅ Allowed once", "always": "✅ Allowed for this session", "deny": "🚫 Denied",
}

// Owns reports whether the card with component componentID is this
// replica's, or may be: false only for a card another replica posted
// (Options.Replica), which that replica answers.
func (rt *Runtime) Owns(componentID string) bool {
	f := strings.Split(componentID, ":")
	return rt.waitPrefix == "" || len(f) < 2 || f[0] != "w" || strings.HasPrefix(f[1], rt.waitPrefix) ||
		!strings.Contains(f[1], "-")
}

// Answer takes a press of a card's button (componentID is the button's
// ID) or a pick in its menu (the menu's ID, and values) by user (with
// roles) in channel. It returns the card's new text and true when the
// answer decided it, or the reason and false when it did not: the user is
// not the one the card is for nor an approver, or the card no longer
// waits.
func (rt *Runtime) Answer(channel, componentID, user string, roles []string, values []string) (string, bool) {
	f := strings.Split(componentID, ":")
	if len(f) < 2 || len(f) > 3 || f[0] != "w" {
		return "Unknown button.", false
	}
	c := Choice{Values: values, By: user}
	if len(f) == 3 {
		c.Button = f[2]
	}
	rt.mu.Lock()
	w := rt.waits[f[1]]
	if w == nil || w.channel != channel || !w.decide(c) {
		rt.mu.Unlock()
		return "This request is no longer waiting for an answer.", false
	}
	if why := rt.mayAnswer(w, user, roles); why != "" {
		rt.mu.Unlock()
		return why, false
	}
	delete(rt.waits, f[1])
	rt.mu.Unlock()
	w.answer <- c
	return w.text + "\n" + rt.decided(w, c), true
}

// mayAnswer returns why user (with roles) may not answer w's card, or ""
// when they may: the card's user or an approver.
func (rt *Runtime) mayAnswer(w *waiter, user string, roles []string) string {
	approver := rt.o.Approver != nil && rt.o.Approver(user, roles)
	if !approver && (w.requester != "" && user != w.requester || rt.o.Allowed != nil && !rt.o.Allowed(user, roles)) {
		if w.requester != "" {
			return "🚫 Only <@" + w.requester + ">, who asked for this, or an approver may answer it."
		}
		return "🚫 You are not allowed to answer this."
	}
	return ""
}

// decided says what choice c decided on w's card, and by whom.
func (rt *Runtime) decided(w *waiter, c Choice) string {
	values, user := c.Values, c.By
	label := choiceLabels[c.Button]
	if w.label != nil {
		label = w.label(c)
	}
	if label == "" {
		label = "✅ " + strings.Join(values, ", ")
	}
	return label + " by <@" + user + ">"
}

// output shows one message's run: the typing indicator, the placeholder
// and its edits (Preview), then the reply.
type output struct {
	rt     *Runtime
	m      Message
	target replyTarget
	id     string // the placeholder's id, if one was posted

	ctx    context.Context // ends at finish: no further edit starts
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	buf     strings.Builder
	tools   []string
	notes   []string // retries: not the run's output
	para    bool     // start a new paragraph before the next text
	dirty   bool
	visible bool // the run has produced text or a tool call
}

func (rt *Runtime) newOutput(m Message, target replyTarget) *output {
	o := &output{rt: rt, m: m, target: target, done: make(chan struct{})}
	o.ctx, o.cancel = context.WithCancel(context.Background())
	if rt.o.Preview {
		ctx, cancel := rt.deliveryCtx()
		id, err := rt.o.Chat.Post(ctx, target.channel, target.replyTo, preview(nil, "", rt.o.MaxLen))
		cancel()
		if err != nil {
			rt.log.Error("posting the placeholder", "channel", target.channel, "err", err)
		}
		o.id = id
	}
	go o.loop()
	return o
}

// loop renews the typing indicator and edits the placeholder until
// finish.
func (o *output) loop() {
	defer close(o.done)
	o.typing()
	typing := time.NewTicker(o.rt.o.TypingInterval)
	defer typing.Stop()
	edit := time.NewTicker(o.rt.o.EditInterval)
	defer edit.Stop()
	for {
		select {
		case <-o.ctx.Done():
			return
		case <-typing.C:
			o.typing()
		case <-edit.C:
			o.flush()
		}
	}
}

// typing renews the typing indicator. Like flush, it does not end with
// o.ctx: a request cancelled in flight can take another request's answer
// with it in net/http (seen under load: a placeholder posted that its
// poster never heard of), so the loop only stops starting new ones.
func (o *output) typing() {
	ctx, cancel := context.WithTimeout(context.Background(), min(o.rt.o.DeliveryTimeout, 10*time.Second))
	defer cancel()
	if err := o.rt.o.Chat.Typing(ctx, o.target.channel); err != nil && o.ctx.Err() == nil {
		o.rt.log.Debug("typing indicator", "channel", o.target.channel, "err", err)
	}
}

// flush edits the placeholder when something changed since the last edit.
func (o *output) flush() {
	o.mu.Lock()
	if !o.dirty || o.id == "" {
		o.mu.Unlock()
		return
	}
	o.dirty = false
	s := preview(slices.Concat(o.notes, o.tools), o.buf.String(), o.rt.o.MaxLen)
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), min(o.rt.o.DeliveryTimeout, 10*time.Second))
	defer cancel()
	if err := o.rt.o.Chat.Edit(ctx, o.target.channel, o.id, s); err != nil && o.ctx.Err() == nil {
		o.rt.log.Warn("editing the placeholder", "channel", o.target.channel, "err", err)
	}
}

// text adds streamed answer text.
func (o *output) text(s string) {
	if s == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.para && o.buf.Len() > 0 {
		o.buf.WriteString("\n\n")
	}
	o.para = false
	o.buf.WriteString(s)
	o.dirty = true
	o.visible = true
}

// paragraph marks the end of a text block.
func (o *output) paragraph() {
	o.mu.Lock()
	o.para = true
	o.mu.Unlock()
}

// tool shows a tool call.
func (o *output) tool(line string) {
	o.mu.Lock()
	o.visible = true
	if !o.rt.o.Preview {
		o.mu.Unlock()
		o.postNow(line)
		return
	}
	o.tools = append(o.tools, line)
	o.para = true
	o.dirty = true
	o.mu.Unlock()
}

// note shows a line about the run itself (a retry).
func (o *output) note(line string) {
	if !o.rt.o.Preview {
		o.postNow(line)
		return
	}
	o.mu.Lock()
	o.notes = append(o.notes, line)
	o.dirty = true
	o.mu.Unlock()
}

// shown reports whether the run has produced anything (text or a tool
// call) that a retry could not take back.
func (o *output) shown() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.visible
}

// produced returns the run's output so far: its tool calls and text.
func (o *output) produced() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := strings.Join(o.tools, "\n")
	if t := strings.TrimSpace(o.buf.String()); t != "" {
		if s != "" {
			s += "\n"
		}
		s += t
	}
	return s
}

// postNow posts a line of progress as its own message (no Preview).
func (o *output) postNow(line string) {
	ctx, cancel := o.rt.deliveryCtx()
	defer cancel()
	if _, err := o.rt.o.Chat.Post(ctx, o.target.channel, "", line); err != nil {
		o.rt.log.Warn("posting progress", "channel", o.target.channel, "err", err)
	}
}

// reset forgets what was streamed (the run starts over).
func (o *output) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Reset()
	o.tools = nil
	o.para = false
	o.dirty = true
	o.visible = false
}

// finish stops the indicator and the edits, and delivers the reply: the
// placeholder becomes its first part, further parts follow.
func (o *output) finish(r Reply) {
	o.cancel()
	<-o.done
	var text string
	switch {
	case r.Err != nil && r.Partial != "":
		text = r.Partial + "\n\n" + errorText(r.Err, o.rt.o.Request.Timeout) +
			"\n(It failed after it had started answering, so it was not run again: tool calls would repeat. What it produced is above.)"
	case r.Err != nil:
		text = errorText(r.Err, o.rt.o.Request.Timeout)
	default:
		text = r.Text
	}
	parts := splitMessage(text, o.rt.o.MaxLen)
	if r.Summary != "" {
		last := parts[len(parts)-1] + "\n" + r.Summary
		if o.rt.o.MaxLen <= 0 || textLen(last) <= o.rt.o.MaxLen {
			parts[len(parts)-1] = last
		} else {
			parts = append(parts, r.Summary)
		}
	}
	if o.id != "" {
		// The placeholder becomes the answer. An edit that fails is tried
		// again before the answer is posted anew: a placeholder left
		// "Working…" beside it would say the answer never came.
		for attempt := 1; ; attempt++ {
			ctx, cancel := o.rt.deliveryCtx()
			err := o.rt.o.Chat.Edit(ctx, o.target.channel, o.id, parts[0])
			cancel()
			if err == nil {
				parts = parts[1:]
				break
			}
			o.rt.log.Error("delivering the reply", "channel", o.target.channel, "attempt", attempt, "err", err)
			if attempt == 3 {
				break
			}
			time.Sleep(time.Duration(attempt) * time.Second)
		}
	}
	ctx, cancel := o.rt.deliveryCtx()
	defer cancel()
	for _, p := range parts {
		if _, err := o.rt.o.Chat.Post(ctx, o.target.channel, o.target.replyTo, p); err != nil {
			o.rt.log.Error("delivering the reply", "channel", o.target.channel, "err", err)
			return
		}
	}
}
