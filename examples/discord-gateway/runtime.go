package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcli/agentcli"
)

// Options configure a Runtime.
type Options struct {
	// Backend runs the prompts. Wrap it in agentcli.WithLimit for a global
	// limit on concurrent runs; the runtime adds agentcli.WithRetry.
	Backend agentcli.Backend
	// Store keeps the session of each channel.
	Store SessionStore
	// Queue orders the messages of each channel.
	Queue Queue
	// Chat is where replies go.
	Chat Chat
	// Request is the template of every run: Model, MaxTurns, AllowedTools,
	// Dir, Env, Timeout, SystemPrompt, Permission, PermissionTimeout.
	// Prompt, SessionID and OnPermission are the runtime's.
	Request agentcli.Request
	// Retry configures the retries of failed runs (transient errors only).
	Retry agentcli.RetryOptions
	// Live asks for one live session per channel where the backend has
	// them (agentcli.StartSession); otherwise every message runs its own
	// CLI process, resuming the channel's session.
	Live bool
	// LiveIdle closes a channel's live session after this long without a
	// message (the next message resumes it). Zero means 15 minutes.
	LiveIdle time.Duration
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
	// Allowed says who may send prompts and answer permission requests;
	// nil lets everyone.
	Allowed func(user string, roles []string) bool
	// DeliveryTimeout bounds each call to Chat. Zero means 30 seconds.
	DeliveryTimeout time.Duration
	// Logger receives the runtime's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Runtime is the gateway without Discord: it takes messages (Handle) and
// button presses (Press), runs them on the backend one at a time per
// channel, and answers through the Chat.
type Runtime struct {
	o      Options
	log    *slog.Logger
	base   context.Context
	stop   context.CancelCauseFunc
	liveOK atomic.Bool

	mu      sync.Mutex
	chans   map[string]*chanState
	perms   map[string]*permWait
	seq     uint64
	shut    bool
	closers sync.WaitGroup // idle live sessions being closed

	wg sync.WaitGroup // the dispatcher and every message in progress
}

// chanState is what the runtime holds for a channel between and during
// turns.
type chanState struct {
	live agentcli.Session
	idle *time.Timer
	turn *turnState
}

// turnState is the run in progress in a channel, for /stop.
type turnState struct {
	cancel  context.CancelCauseFunc
	session agentcli.Session // the live session the turn runs in, if any
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
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	rt := &Runtime{o: o, log: o.Logger, chans: map[string]*chanState{}, perms: map[string]*permWait{}}
	rt.base, rt.stop = context.WithCancelCause(context.Background())
	rt.liveOK.Store(o.Live)
	return rt
}

// Start starts taking messages off the queue. It returns at once.
func (rt *Runtime) Start() {
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
	for _, cs := range rt.chans {
		if cs.idle != nil {
			cs.idle.Stop()
		}
		if cs.live != nil {
			live = append(live, cs.live)
		}
	}
	rt.chans = map[string]*chanState{}
	rt.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() { defer wg.Done(); s.Close() }()
	}
	wg.Wait()
	rt.closers.Wait()
	rt.stop(errShutdown)
}

// Handle takes one incoming message: a command is answered at once, a
// prompt is queued for its channel (or answered "busy"). It blocks only to
// post such an immediate answer.
func (rt *Runtime) Handle(m Message) {
	if rt.o.Allowed != nil && !rt.o.Allowed(m.Author, m.Roles) {
		rt.log.Info("ignoring a message from a user who is not allowed", "channel", m.Channel, "user", m.Author)
		return
	}
	m.Text = strings.TrimSpace(m.Text)
	if m.Text == "" {
		return
	}
	switch command(m.Text) {
	case "/stop":
		rt.post(m, rt.stopTurn(m.Channel))
		return
	case "/backend":
		rt.post(m, rt.describe(m.Channel))
		return
	case "/help":
		rt.post(m, "Send a message and the agent answers, one message at a time per channel.\n"+
			"`/stop` stops the current answer · `/new` starts a fresh conversation · `/backend` shows what answers here.")
		return
	case "/new":
		m.command = "new"
	}
	err := rt.o.Queue.Put(rt.base, m)
	switch {
	case err == nil:
	case errors.Is(err, ErrBusy):
		rt.post(m, "⏳ Busy: too many messages are waiting already. Please send that again once the agent has answered.")
	case errors.Is(err, ErrClosed):
		rt.post(m, errorText(errShutdown, 0))
	default:
		rt.log.Error("queue", "channel", m.Channel, "err", err)
		rt.post(m, "⚠️ Could not queue that message; please send it again.")
	}
}

// command returns the command a message starts with, or "".
func command(text string) string {
	f := strings.Fields(text)
	if len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return ""
	}
	switch c := strings.ToLower(f[0]); c {
	case "/stop", "/new", "/backend", "/help":
		return c
	}
	return ""
}

// deliveryCtx bounds one call to the chat; it does not end with the
// runtime, so that the last answers still go out during a shutdown.
func (rt *Runtime) deliveryCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), rt.o.DeliveryTimeout)
}

// post answers m with text.
func (rt *Runtime) post(m Message, text string) {
	ctx, cancel := rt.deliveryCtx()
	defer cancel()
	if _, err := rt.o.Chat.Post(ctx, m.Channel, m.ID, text); err != nil {
		rt.log.Error("posting a reply", "channel", m.Channel, "err", err)
	}
}

// state returns the channel's state, creating it; rt.mu is held.
func (rt *Runtime) state(channel string) *chanState {
	cs := rt.chans[channel]
	if cs == nil {
		cs = &chanState{}
		rt.chans[channel] = cs
	}
	return cs
}

// forget drops an empty channel state; rt.mu is held.
func (rt *Runtime) forget(channel string) {
	if cs := rt.chans[channel]; cs != nil && cs.live == nil && cs.turn == nil {
		delete(rt.chans, channel)
	}
}

func (rt *Runtime) process(m Message) {
	defer rt.o.Queue.Done(m)
	if m.command == "new" {
		rt.fresh(m)
		return
	}
	if rt.base.Err() != nil {
		rt.post(m, errorText(errShutdown, 0))
		return
	}
	ctx, cancel := context.WithCancelCause(rt.base)
	defer cancel(nil)
	t := &turnState{cancel: cancel}
	rt.mu.Lock()
	rt.state(m.Channel).turn = t
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		if cs := rt.chans[m.Channel]; cs != nil && cs.turn == t {
			cs.turn = nil
			rt.forget(m.Channel)
		}
		rt.mu.Unlock()
	}()

	out := rt.newOutput(m)
	reply := rt.answer(ctx, m, t, out)
	if reply.SessionID != "" {
		if err := rt.o.Store.Set(context.WithoutCancel(ctx), m.Channel, reply.SessionID); err != nil {
			rt.log.Error("storing the session", "channel", m.Channel, "err", err)
		}
	}
	out.finish(reply)
}

// answer runs m and returns its reply. A stored session the CLI no longer
// knows is forgotten and the message run once more without it.
func (rt *Runtime) answer(ctx context.Context, m Message, t *turnState, out *output) Reply {
	sid, err := rt.o.Store.Get(ctx, m.Channel)
	if err != nil {
		rt.log.Warn("session store: going on without a session", "channel", m.Channel, "err", err)
		sid = ""
	}
	res, err := rt.run(ctx, m, sid, t, out)
	if errors.Is(err, agentcli.ErrSessionNotFound) {
		rt.log.Warn("the CLI does not know the channel's session; starting a fresh one",
			"channel", m.Channel, "session", sid)
		if derr := rt.o.Store.Delete(ctx, m.Channel); derr != nil {
			rt.log.Error("session store", "channel", m.Channel, "err", derr)
		}
		rt.dropLive(m.Channel)
		out.reset()
		res, err = rt.run(ctx, m, "", t, out)
	}
	if err != nil {
		rt.log.Warn("run failed", "channel", m.Channel, "message", m.ID, "err", err)
	}
	return ReplyFor(m.Channel, res, err)
}

// run runs one prompt: as the next turn of the channel's live session when
// the backend has them, else as its own run resuming sid.
func (rt *Runtime) run(ctx context.Context, m Message, sid string, t *turnState, out *output) (*agentcli.Result, error) {
	if rt.liveOK.Load() {
		sess, err := rt.liveSession(ctx, m.Channel, sid)
		switch {
		case errors.Is(err, agentcli.ErrUnsupported):
			if rt.liveOK.Swap(false) {
				rt.log.Info("no live sessions on this backend; running one CLI process per message", "err", err)
			}
		case err != nil:
			return nil, err
		default:
			rt.mu.Lock()
			t.session = sess
			rt.mu.Unlock()
			res, err := rt.consume(ctx, out, sess.Stream(ctx, m.Text))
			rt.mu.Lock()
			t.session = nil
			rt.mu.Unlock()
			if sess.Err() != nil {
				rt.log.Warn("live session ended", "channel", m.Channel, "err", sess.Err())
				rt.dropLive(m.Channel)
			} else {
				rt.idleLater(m.Channel, sess)
			}
			return res, err
		}
	}
	req := rt.request(m.Channel, sid)
	req.Prompt = m.Text
	retry := rt.o.Retry
	retry.OnRetry = func(attempt int, err error, wait time.Duration) {
		rt.log.Warn("transient failure; retrying", "channel", m.Channel, "attempt", attempt, "wait", wait, "err", err)
		out.note(fmt.Sprintf("⚠️ %s — retrying in %v", shorten(errorLine(err), 120), wait.Round(time.Second/10)))
	}
	b := agentcli.WithRetry(rt.o.Backend, &retry)
	return rt.consume(ctx, out, b.Stream(ctx, req))
}

func errorLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// request returns the run template for channel, resuming sid.
func (rt *Runtime) request(channel, sid string) *agentcli.Request {
	req := rt.o.Request
	req.Prompt = ""
	req.SessionID = sid
	req.OnText = nil
	req.OnPermission = nil
	if req.Permission == agentcli.PermissionAsk {
		req.OnPermission = func(ctx context.Context, p *agentcli.PermissionRequest) agentcli.PermissionDecision {
			return rt.askPermission(ctx, channel, p)
		}
	}
	return &req
}

// liveSession returns the channel's live session, starting it (resuming
// sid) when there is none or it has ended.
func (rt *Runtime) liveSession(ctx context.Context, channel, sid string) (agentcli.Session, error) {
	rt.mu.Lock()
	cs := rt.state(channel)
	s := cs.live
	if cs.idle != nil {
		cs.idle.Stop()
		cs.idle = nil
	}
	rt.mu.Unlock()
	if s != nil {
		if s.Err() == nil {
			return s, nil
		}
		if id := s.ID(); id != "" && sid == "" {
			sid = id
		}
		rt.dropLive(channel)
	}
	starter := agentcli.WithRetry(rt.o.Backend, &rt.o.Retry)
	s, err := agentcli.StartSession(ctx, starter, rt.request(channel, sid))
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	if rt.shut {
		rt.mu.Unlock()
		s.Close()
		return nil, errShutdown
	}
	rt.state(channel).live = s
	rt.mu.Unlock()
	return s, nil
}

// idleLater closes the channel's live session s after LiveIdle without a
// turn.
func (rt *Runtime) idleLater(channel string, s agentcli.Session) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	cs := rt.chans[channel]
	if cs == nil || cs.live != s || rt.shut {
		return
	}
	if cs.idle != nil {
		cs.idle.Stop()
	}
	cs.idle = time.AfterFunc(rt.o.LiveIdle, func() {
		rt.mu.Lock()
		cs := rt.chans[channel]
		if rt.shut || cs == nil || cs.live != s || cs.turn != nil {
			rt.mu.Unlock()
			return
		}
		cs.live, cs.idle = nil, nil
		rt.forget(channel)
		rt.closers.Add(1)
		rt.mu.Unlock()
		defer rt.closers.Done()
		rt.log.Info("closing an idle live session", "channel", channel, "session", s.ID())
		s.Close()
	})
}

// dropLive closes the channel's live session, if any.
func (rt *Runtime) dropLive(channel string) {
	rt.mu.Lock()
	cs := rt.chans[channel]
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

// fresh answers /new: the channel's next message starts a new session.
func (rt *Runtime) fresh(m Message) {
	rt.dropLive(m.Channel)
	if err := rt.o.Store.Delete(context.Background(), m.Channel); err != nil {
		rt.log.Error("session store", "channel", m.Channel, "err", err)
		rt.post(m, "⚠️ Could not forget the session: "+shorten(err.Error(), 200))
		return
	}
	rt.mu.Lock()
	rt.forget(m.Channel)
	rt.mu.Unlock()
	rt.post(m, "🆕 Fresh start: the next message begins a new conversation.")
}

// stopTurn stops the channel's current run, if any, and says what it did.
func (rt *Runtime) stopTurn(channel string) string {
	rt.mu.Lock()
	var t *turnState
	var s agentcli.Session
	if cs := rt.chans[channel]; cs != nil && cs.turn != nil {
		t, s = cs.turn, cs.turn.session
	}
	rt.mu.Unlock()
	if t == nil {
		return "Nothing is running here."
	}
	if s != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.Interrupt(ctx)
		cancel()
		if err == nil {
			return "⏹ Stopping the current answer."
		}
		rt.log.Warn("interrupt failed; cancelling the turn", "channel", channel, "err", err)
	}
	t.cancel(errStopped)
	return "⏹ Stopping the current answer."
}

// describe answers /backend.
func (rt *Runtime) describe(channel string) string {
	model := rt.o.Request.Model
	if model == "" {
		model = "the CLI's default"
	}
	mode := "one CLI process per message"
	session := ""
	rt.mu.Lock()
	if cs := rt.chans[channel]; cs != nil && cs.live != nil {
		mode = "a live session"
		session = cs.live.ID()
	}
	rt.mu.Unlock()
	if session == "" {
		session, _ = rt.o.Store.Get(context.Background(), channel)
	}
	if session == "" {
		session = "none yet"
	}
	perm := rt.o.Request.Permission
	if perm == "" {
		perm = agentcli.PermissionBypass
	}
	return fmt.Sprintf("Backend: **%s** · model: %s · %s · permissions: %s · session: `%s`",
		rt.o.Backend.Name(), model, mode, perm, session)
}

// permWait is a permission request waiting for a button press.
type permWait struct {
	channel string
	text    string
	answer  chan agentcli.PermissionDecision // buffered: one answer
}

// askPermission posts a permission request with Allow / Always / Deny
// buttons and waits for a press, the request's deadline or the end of the
// turn. Anything but a press denies.
func (rt *Runtime) askPermission(ctx context.Context, channel string, p *agentcli.PermissionRequest) agentcli.PermissionDecision {
	timeout := rt.o.Request.PermissionTimeout
	if timeout <= 0 {
		timeout = agentcli.DefaultPermissionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	w := &permWait{channel: channel, answer: make(chan agentcli.PermissionDecision, 1)}
	w.text = "🔐 The agent asks to use a tool:\n" + toolLine(&p.Tool)
	if p.Title != "" {
		w.text += "\n" + shorten(oneLine(p.Title), 200)
	}
	rt.mu.Lock()
	rt.seq++
	id := strconv.FormatUint(rt.seq, 36)
	rt.perms[id] = w
	rt.mu.Unlock()
	unregister := func() bool {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		_, ok := rt.perms[id]
		delete(rt.perms, id)
		return ok
	}
	deny := agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "The user did not allow this."}

	dctx, dcancel := rt.deliveryCtx()
	msgID, err := rt.o.Chat.Ask(dctx, channel, fmt.Sprintf("%s\n(no answer within %v denies it)", w.text, timeout), []Button{
		{ID: "perm:" + id + ":allow", Label: "Allow", Style: "allow"},
		{ID: "perm:" + id + ":always", Label: "Always", Style: "allow"},
		{ID: "perm:" + id + ":deny", Label: "Deny", Style: "deny"},
	})
	dcancel()
	if err != nil {
		unregister()
		rt.log.Error("posting a permission request; denying it", "channel", channel, "err", err)
		return deny
	}
	select {
	case d := <-w.answer:
		return d
	case <-ctx.Done():
	}
	if !unregister() {
		return <-w.answer // pressed just now
	}
	why := "⏱ No answer in time: denied."
	if context.Cause(ctx) != context.DeadlineExceeded {
		why = "⏹ The turn ended: denied."
	}
	dctx, dcancel = rt.deliveryCtx()
	defer dcancel()
	if err := rt.o.Chat.Edit(dctx, channel, msgID, w.text+"\n"+why); err != nil {
		rt.log.Error("updating a permission request", "channel", channel, "err", err)
	}
	return deny
}

// Press answers a button press by user (with roles) on a permission
// request in channel. It returns the request's new text and true when the
// press decided it, or the reason and false when it did not (the user is
// not allowed, the request is no longer waiting).
func (rt *Runtime) Press(channel, buttonID, user string, roles []string) (string, bool) {
	f := strings.Split(buttonID, ":")
	if len(f) != 3 || f[0] != "perm" {
		return "Unknown button.", false
	}
	if rt.o.Allowed != nil && !rt.o.Allowed(user, roles) {
		return "You are not allowed to answer this.", false
	}
	var d agentcli.PermissionDecision
	var label string
	switch f[2] {
	case "allow":
		d, label = agentcli.PermissionDecision{Kind: agentcli.AllowOnce}, "✅ Allowed once"
	case "always":
		d, label = agentcli.PermissionDecision{Kind: agentcli.AllowAlways}, "✅ Allowed for this session"
	case "deny":
		d, label = agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "The user denied this."}, "🚫 Denied"
	default:
		return "Unknown button.", false
	}
	rt.mu.Lock()
	w := rt.perms[f[1]]
	if w == nil || w.channel != channel {
		rt.mu.Unlock()
		return "This request is no longer waiting for an answer.", false
	}
	delete(rt.perms, f[1])
	rt.mu.Unlock()
	w.answer <- d
	return w.text + "\n" + label, true
}

// output shows one message's run: the typing indicator, the placeholder
// and its edits (Preview), then the reply.
type output struct {
	rt *Runtime
	m  Message
	id string // the placeholder's id, if one was posted

	ctx    context.Context // ends at finish: pending edits are dropped
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	buf   strings.Builder
	tools []string
	para  bool // start a new paragraph before the next text
	dirty bool
}

func (rt *Runtime) newOutput(m Message) *output {
	o := &output{rt: rt, m: m, done: make(chan struct{})}
	o.ctx, o.cancel = context.WithCancel(context.Background())
	if rt.o.Preview {
		ctx, cancel := rt.deliveryCtx()
		id, err := rt.o.Chat.Post(ctx, m.Channel, m.ID, preview(nil, "", rt.o.MaxLen))
		cancel()
		if err != nil {
			rt.log.Error("posting the placeholder", "channel", m.Channel, "err", err)
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

func (o *output) typing() {
	ctx, cancel := context.WithTimeout(o.ctx, o.rt.o.DeliveryTimeout)
	defer cancel()
	if err := o.rt.o.Chat.Typing(ctx, o.m.Channel); err != nil && o.ctx.Err() == nil {
		o.rt.log.Debug("typing indicator", "channel", o.m.Channel, "err", err)
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
	s := preview(o.tools, o.buf.String(), o.rt.o.MaxLen)
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(o.ctx, o.rt.o.DeliveryTimeout)
	defer cancel()
	if err := o.rt.o.Chat.Edit(ctx, o.m.Channel, o.id, s); err != nil && o.ctx.Err() == nil {
		o.rt.log.Warn("editing the placeholder", "channel", o.m.Channel, "err", err)
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
}

// paragraph marks the end of a text block.
func (o *output) paragraph() {
	o.mu.Lock()
	o.para = true
	o.mu.Unlock()
}

// tool shows a tool call.
func (o *output) tool(line string) {
	if !o.rt.o.Preview {
		o.postNow(line)
		return
	}
	o.mu.Lock()
	o.tools = append(o.tools, line)
	o.para = true
	o.dirty = true
	o.mu.Unlock()
}

// note shows a line about the run itself (a retry).
func (o *output) note(line string) {
	o.tool(line)
}

// postNow posts a line of progress as its own message (no Preview).
func (o *output) postNow(line string) {
	ctx, cancel := o.rt.deliveryCtx()
	defer cancel()
	if _, err := o.rt.o.Chat.Post(ctx, o.m.Channel, "", line); err != nil {
		o.rt.log.Warn("posting progress", "channel", o.m.Channel, "err", err)
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
}

// finish stops the indicator and the edits, and delivers the reply: the
// placeholder becomes its first part, further parts follow as replies.
func (o *output) finish(r Reply) {
	o.cancel()
	<-o.done
	var parts []string
	if r.Err != nil {
		parts = []string{errorText(r.Err, o.rt.o.Request.Timeout)}
	} else {
		parts = splitMessage(r.Text, o.rt.o.MaxLen)
	}
	ctx, cancel := o.rt.deliveryCtx()
	defer cancel()
	if o.id != "" {
		if err := o.rt.o.Chat.Edit(ctx, o.m.Channel, o.id, parts[0]); err != nil {
			o.rt.log.Error("delivering the reply", "channel", o.m.Channel, "err", err)
		} else {
			parts = parts[1:]
		}
	}
	for _, p := range parts {
		if _, err := o.rt.o.Chat.Post(ctx, o.m.Channel, o.m.ID, p); err != nil {
			o.rt.log.Error("delivering the reply", "channel", o.m.Channel, "err", err)
			return
		}
	}
}
