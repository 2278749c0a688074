package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// discordMaxLen is Discord's limit on a message's content.
const discordMaxLen = 2000

// setDiscordAPI points discordgo at the REST API base api (such as
// https://discord.com/api/v9). discordgo keeps its endpoints in package
// variables, read at each request.
func setDiscordAPI(api string) {
	api = strings.TrimRight(api, "/") + "/"
	discordgo.EndpointAPI = api
	discordgo.EndpointGuilds = api + "guilds/"
	discordgo.EndpointChannels = api + "channels/"
	discordgo.EndpointUsers = api + "users/"
	discordgo.EndpointGateway = api + "gateway"
	discordgo.EndpointGatewayBot = discordgo.EndpointGateway + "/bot"
	discordgo.EndpointWebhooks = api + "webhooks/"
	discordgo.EndpointStickers = api + "stickers/"
	discordgo.EndpointStageInstances = api + "stage-instances"
	discordgo.EndpointSKUs = api + "skus"
	discordgo.EndpointApplications = api + "applications"
	discordgo.EndpointVoice = api + "/voice/"
	discordgo.EndpointVoiceRegions = discordgo.EndpointVoice + "regions"
}

// discordTransport is the HTTP transport of the discordgo session. It
// answers discordgo's question for the gateway's address with the
// configured one (DISCORD_GATEWAY_URL) when there is one, and it keeps
// Discord's global rate limit: after a 429 whose scope is global
// (X-RateLimit-Global, X-RateLimit-Scope: global, or "global": true), no
// request to any route goes out before its retry_after has passed (a
// request's context may give up waiting).
type discordTransport struct {
	base       http.RoundTripper
	gatewayURL string
	log        *slog.Logger

	mu          sync.Mutex
	globalUntil time.Time
}

func (t *discordTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.gatewayURL != "" && req.Method == http.MethodGet &&
		(req.URL.String() == discordgo.EndpointGateway || req.URL.String() == discordgo.EndpointGatewayBot) {
		body, _ := json.Marshal(map[string]any{"url": t.gatewayURL, "shards": 1})
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)), Request: req}, nil
	}
	if wait := t.globalWait(); wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	// Read the (small) body to see its scope, and hand it on.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var rl struct {
		Global     bool    `json:"global"`
		RetryAfter float64 `json:"retry_after"`
	}
	json.Unmarshal(body, &rl)
	global := rl.Global || strings.EqualFold(resp.Header.Get("X-RateLimit-Global"), "true") ||
		strings.EqualFold(resp.Header.Get("X-RateLimit-Scope"), "global")
	if global {
		retry := rl.RetryAfter
		if h, err := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64); err == nil && h > retry {
			retry = h
		}
		if retry <= 0 {
			retry = 1
		}
		until := time.Now().Add(time.Duration(retry * float64(time.Second)))
		t.mu.Lock()
		if until.After(t.globalUntil) {
			t.globalUntil = until
		}
		t.mu.Unlock()
		t.log.Warn("discord global rate limit: every route waits", "retry_after", retry)
	}
	return resp, nil
}

// globalWait returns how long the global rate limit still holds.
func (t *discordTransport) globalWait() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Until(t.globalUntil)
}

// discordChat is the Chat on a discordgo session.
//
// Rate limits: discordgo keeps a bucket per route from Discord's
// X-RateLimit-* headers and waits before a request that would exceed one.
// On a 429 it would by default sleep for retry_after and try again, with
// no bound and deaf to any context, holding the route's bucket meanwhile.
// Every request here turns that off (discordgo.WithRetryOnRatelimit(false))
// and handles the 429 itself: no request to that channel goes out before
// retry_after has passed (and none at all after a global 429, see
// discordTransport; the caller's context may give up waiting), and a call
// is retried at most rateRetries times.
type discordChat struct {
	s     *discordgo.Session
	log   *slog.Logger
	tr    *discordTransport
	files *http.Client // attachments

	mu        sync.Mutex
	notBefore map[string]time.Time // channel → end of its last 429's retry_after
	noThreads map[string]bool      // channels where a thread could not be started
}

// rateRetries bounds the 429 retries of one call.
const rateRetries = 5

// noMentions keeps the agent's text from pinging anyone (@everyone,
// roles, users): it is model output.
var noMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

// call runs one REST request on channel's routes, waiting out 429s.
func (d *discordChat) call(ctx context.Context, channel string, f func(opts ...discordgo.RequestOption) error) error {
	for attempt := 0; ; attempt++ {
		d.mu.Lock()
		wait := time.Until(d.notBefore[channel])
		d.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
		err := f(discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false))
		var rl *discordgo.RateLimitError
		if !errors.As(err, &rl) {
			return err
		}
		if attempt >= rateRetries {
			return err
		}
		if d.tr != nil && d.tr.globalWait() > 0 {
			continue // a global limit: the transport holds every request
		}
		retry := time.Second
		if rl.RateLimit != nil && rl.TooManyRequests != nil && rl.RetryAfter > 0 {
			retry = rl.RetryAfter
		}
		d.log.Info("discord rate limit", "channel", channel, "retry_after", retry)
		d.mu.Lock()
		if d.notBefore == nil {
			d.notBefore = map[string]time.Time{}
		}
		if until := time.Now().Add(retry); until.After(d.notBefore[channel]) {
			d.notBefore[channel] = until
		}
		d.mu.Unlock()
	}
}

func (d *discordChat) send(ctx context.Context, channel string, msg *discordgo.MessageSend) (string, error) {
	var id string
	err := d.call(ctx, channel, func(opts ...discordgo.RequestOption) error {
		m, err := d.s.ChannelMessageSendComplex(channel, msg, opts...)
		if err == nil {
			id = m.ID
		}
		return err
	})
	return id, err
}

func (d *discordChat) Post(ctx context.Context, channel, replyTo, text string) (string, error) {
	msg := &discordgo.MessageSend{Content: text, AllowedMentions: noMentions}
	if replyTo != "" {
		no := false
		msg.Reference = &discordgo.MessageReference{MessageID: replyTo, ChannelID: channel, FailIfNotExists: &no}
	}
	return d.send(ctx, channel, msg)
}

func (d *discordChat) Edit(ctx context.Context, channel, id, text string) error {
	edit := &discordgo.MessageEdit{
		ID: id, Channel: channel, Content: &text,
		Components: &[]discordgo.MessageComponent{}, AllowedMentions: noMentions,
	}
	return d.call(ctx, channel, func(opts ...discordgo.RequestOption) error {
		_, err := d.s.ChannelMessageEditComplex(edit, opts...)
		return err
	})
}

func (d *discordChat) Typing(ctx context.Context, channel string) error {
	return d.call(ctx, channel, func(opts ...discordgo.RequestOption) error {
		return d.s.ChannelTyping(channel, opts...)
	})
}

// Ask sends the card with its buttons in one row and its menu in another;
// only the user it mentions is pinged.
func (d *discordChat) Ask(ctx context.Context, channel string, card Card) (string, error) {
	var rows []discordgo.MessageComponent
	if m := card.Menu; m != nil {
		var opts []discordgo.SelectMenuOption
		for _, o := range m.Options {
			opts = append(opts, discordgo.SelectMenuOption{Label: shorten(o.Label, 100), Value: shorten(o.Value, 100),
				Description: shorten(o.Description, 100)})
		}
		maxValues := max(m.Max, 1)
		minValues := m.Min
		rows = append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.SelectMenu{
			MenuType: discordgo.StringSelectMenu, CustomID: m.ID, Placeholder: shorten(m.Placeholder, 150),
			Options: opts, MinValues: &minValues, MaxValues: maxValues,
		}}})
	}
	// Discord takes 5 buttons a row.
	for b := range slices.Chunk(card.Buttons, 5) {
		var row []discordgo.MessageComponent
		for _, b := range b {
			style := discordgo.SecondaryButton
			switch b.Style {
			case "allow":
				style = discordgo.SuccessButton
			case "deny":
				style = discordgo.DangerButton
			}
			row = append(row, discordgo.Button{Label: shorten(b.Label, 80), Style: style, CustomID: b.ID})
		}
		rows = append(rows, discordgo.ActionsRow{Components: row})
	}
	mentions := noMentions
	if card.Mention != "" {
		mentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}, Users: []string{card.Mention}}
	}
	return d.send(ctx, channel, &discordgo.MessageSend{Content: card.Text, AllowedMentions: mentions, Components: rows})
}

// StartThread starts a public thread from the message; Discord gives it
// the message's id. A channel where that fails (the bot may not create
// threads there, Discord says no) is remembered: its next messages are
// one conversation in the channel (see threadless).
func (d *discordChat) StartThread(ctx context.Context, channel, messageID, name string) (string, error) {
	if d.threadless(channel) {
		return "", errNoThreads
	}
	var id string
	err := d.call(ctx, channel, func(opts ...discordgo.RequestOption) error {
		ch, err := d.s.MessageThreadStartComplex(channel, messageID, &discordgo.ThreadStart{
			Name: shorten(name, 100), AutoArchiveDuration: 1440}, opts...)
		if err == nil {
			id = ch.ID
			if d.s.State != nil {
				d.s.State.ChannelAdd(ch)
			}
		}
		return err
	})
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
		d.mu.Lock()
		if d.noThreads == nil {
			d.noThreads = map[string]bool{}
		}
		first := !d.noThreads[channel]
		d.noThreads[channel] = true
		d.mu.Unlock()
		if first {
			d.log.Warn("cannot start threads in this channel (does the bot have Create Public Threads?): "+
				"it is one conversation from now on", "channel", channel, "err", err)
		}
	}
	return id, err
}

// threadless reports whether starting a thread in channel failed before.
func (d *discordChat) threadless(channel string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.noThreads[channel]
}

// Fetch downloads an attachment, at most limit bytes.
func (d *discordChat) Fetch(ctx context.Context, a Attachment, limit int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := d.files.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %s", a.Name, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

// newDiscordSession returns a discordgo session for a bot token that
// receives guild and direct messages with their content, and the guild
// events that tell channels from threads. Events are delivered in order,
// on the goroutine that reads the websocket (SyncEvents): the handlers
// only note them down (see intake), so that nothing reorders two messages
// of one channel.
func newDiscordSession(token, gatewayURL string, log *slog.Logger) (*discordgo.Session, *discordTransport, error) {
	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, nil, err
	}
	s.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages |
		discordgo.IntentMessageContent
	s.SyncEvents = true
	tr := &discordTransport{base: http.DefaultTransport.(*http.Transport).Clone(), gatewayURL: gatewayURL, log: log}
	s.Client = &http.Client{Transport: tr, Timeout: 60 * time.Second}
	return s, tr, nil
}

// intake runs the handling of Discord's events one at a time, in the order
// they arrived, on a goroutine of its own: discordgo's handlers (called in
// order, see newDiscordSession) only push, so that a slow step never
// holds the websocket, and the order of two messages of one channel is
// the order Discord sent them, whatever goroutine would have delivered
// them.
type intake struct {
	mu     sync.Mutex
	items  []func()
	wake   chan struct{}
	closed bool
	done   chan struct{}
}

// intakeMax bounds the events waiting; beyond it an event is dropped (and
// logged): the queue's own bounds answer "busy" long before.
const intakeMax = 10_000

func newIntake() *intake {
	in := &intake{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go in.loop()
	return in
}

// push adds f; false when the intake is full or closed.
func (in *intake) push(f func()) bool {
	in.mu.Lock()
	if in.closed || len(in.items) >= intakeMax {
		in.mu.Unlock()
		return false
	}
	in.items = append(in.items, f)
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
	return true
}

func (in *intake) loop() {
	defer close(in.done)
	for {
		in.mu.Lock()
		items := in.items
		in.items = nil
		closed := in.closed
		in.mu.Unlock()
		for i, f := range items {
			f()
			items[i] = nil
		}
		if len(items) == 0 {
			if closed {
				return
			}
			<-in.wake
		}
	}
}

// close runs what was pushed, then stops; it returns when the last item
// has run.
func (in *intake) close() {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
	<-in.done
}

// discordGateway routes a discordgo session's events to a Runtime.
type discordGateway struct {
	s       *discordgo.Session
	chat    *discordChat
	rt      *Runtime
	log     *slog.Logger
	in      *intake
	threads bool // a message in a text channel starts a task in a thread
	cmds    bool // register the slash commands
	guilds  []string

	mu    sync.Mutex
	kinds map[string]discordgo.ChannelType // channels looked up over REST
	seen  map[string]bool                  // message ids seen, against redelivery
	order []string                         // seen, oldest first
	reg   bool                             // commands registered
}

// seenMax bounds the message ids remembered against redelivery.
const seenMax = 4096

// attach routes s's messages, slash commands and component presses to
// g.rt. Messages of bots (this one included) are ignored; a leading
// mention of this bot is removed.
func (g *discordGateway) attach() {
	g.kinds = map[string]discordgo.ChannelType{}
	g.seen = map[string]bool{}
	g.s.AddHandler(func(s *discordgo.Session, r *discordgo.Ready) {
		if g.cmds {
			go g.register(r)
		}
	})
	g.s.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		if m.Author == nil || m.Author.Bot {
			return
		}
		if !g.in.push(func() { g.message(m) }) {
			g.log.Error("too many events waiting; dropping a message", "channel", m.ChannelID, "message", m.ID)
		}
	})
	g.s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		switch i.Type {
		case discordgo.InteractionApplicationCommand:
			// In order with the messages: /new must follow what was
			// sent before it.
			if !g.in.push(func() { g.command(i) }) {
				g.log.Error("too many events waiting; dropping a command", "channel", i.ChannelID)
			}
		case discordgo.InteractionApplicationCommandAutocomplete:
			go g.autocomplete(i)
		case discordgo.InteractionMessageComponent:
			go g.component(i)
		case discordgo.InteractionModalSubmit:
			go g.modal(i)
		}
	})
}

// message hands a message to the runtime; it runs on the intake.
func (g *discordGateway) message(m *discordgo.MessageCreate) {
	g.mu.Lock()
	dup := g.seen[m.ID]
	if !dup {
		g.seen[m.ID] = true
		g.order = append(g.order, m.ID)
		if len(g.order) > seenMax {
			delete(g.seen, g.order[0])
			g.order = g.order[1:]
		}
	}
	g.mu.Unlock()
	if dup {
		g.log.Debug("a message delivered twice; ignored", "message", m.ID)
		return
	}
	text := m.Content
	if me := g.selfID(); me != "" {
		text = strings.NewReplacer("<@"+me+">", "", "<@!"+me+">", "").Replace(text)
	}
	msg := Message{ID: m.ID, Channel: m.ChannelID, Author: m.Author.ID, AuthorName: displayName(m.Author, m.Member), Text: text}
	if m.Member != nil {
		msg.Roles = m.Member.Roles
	}
	for _, a := range m.Attachments {
		if a != nil {
			msg.Attachments = append(msg.Attachments, Attachment{Name: a.Filename, ContentType: a.ContentType, Size: a.Size, URL: a.URL})
		}
	}
	if g.threads && m.GuildID != "" && g.startsTask(m.ChannelID) {
		msg.NewTask, msg.Conv = true, m.ID
	}
	g.rt.Handle(msg)
}

func displayName(u *discordgo.User, m *discordgo.Member) string {
	switch {
	case m != nil && m.Nick != "":
		return m.Nick
	case u.GlobalName != "":
		return u.GlobalName
	}
	return u.Username
}

// startsTask reports whether a message in channel starts a task of its
// own: the channel is a text or announcement channel, not a thread (where
// the thread is the conversation) nor anything else, and threads could be
// started there so far. The channel's type comes from discordgo's state
// (filled by the guild events), else from the API (remembered); when
// neither knows, the channel is its own conversation.
func (g *discordGateway) startsTask(channel string) bool {
	if g.chat != nil && g.chat.threadless(channel) {
		return false
	}
	kind, ok := g.channelType(channel)
	if !ok {
		return false
	}
	return kind == discordgo.ChannelTypeGuildText || kind == discordgo.ChannelTypeGuildNews
}

// selfID returns the bot's own user id, or "" before READY. discordgo
// sets the state's User on READY under the state's lock: read it under
// that lock.
func (g *discordGateway) selfID() string {
	if g.s.State == nil {
		return ""
	}
	g.s.State.RLock()
	defer g.s.State.RUnlock()
	if g.s.State.User == nil {
		return ""
	}
	return g.s.State.User.ID
}

func (g *discordGateway) channelType(channel string) (discordgo.ChannelType, bool) {
	if g.s.State != nil {
		if c, err := g.s.State.Channel(channel); err == nil {
			// c is the state's own channel, which discordgo's ChannelAdd
			// (a thread this gateway started, a channel event) overwrites
			// in place under the state's lock: read it under that lock.
			g.s.State.RLock()
			kind := c.Type
			g.s.State.RUnlock()
			return kind, true
		}
	}
	g.mu.Lock()
	kind, ok := g.kinds[channel]
	g.mu.Unlock()
	if ok {
		return kind, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := g.s.Channel(channel, discordgo.WithContext(ctx))
	if err != nil {
		g.log.Warn("could not tell what kind of channel this is; taking it as one conversation", "channel", channel, "err", err)
		return 0, false
	}
	g.mu.Lock()
	g.kinds[channel] = c.Type
	g.mu.Unlock()
	return c.Type, true
}

// interactionUser returns who sent an interaction, with their roles.
func interactionUser(i *discordgo.InteractionCreate) (user, name string, roles []string) {
	switch {
	case i.Member != nil && i.Member.User != nil:
		return i.Member.User.ID, displayName(i.Member.User, i.Member), i.Member.Roles
	case i.User != nil:
		return i.User.ID, displayName(i.User, nil), nil
	}
	return "", "", nil
}

// respond answers an interaction (Discord wants it within three seconds).
func (g *discordGateway) respond(i *discordgo.Interaction, resp *discordgo.InteractionResponse) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := g.s.InteractionRespond(i, resp, discordgo.WithContext(ctx)); err != nil {
		g.log.Error("answering an interaction", "channel", i.ChannelID, "err", err)
	}
}

// private answers an interaction with a message only its user sees.
func (g *discordGateway) private(i *discordgo.Interaction, text string) {
	g.respond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: shorten(text, discordMaxLen), Flags: discordgo.MessageFlagsEphemeral,
			AllowedMentions: noMentions},
	})
}

// command hands a slash command to the runtime as the text command it
// stands for, answered privately; it runs on the intake.
func (g *discordGateway) command(i *discordgo.InteractionCreate) {
	data := i.ApplicationCommandData()
	text := "/" + data.Name
	for _, o := range data.Options {
		if o.Type == discordgo.ApplicationCommandOptionString {
			text += " " + o.StringValue()
		}
	}
	user, name, roles := interactionUser(i)
	var once sync.Once
	g.rt.Handle(Message{ID: i.ID, Channel: i.ChannelID, Author: user, AuthorName: name, Roles: roles, Text: text,
		respond: func(s string) { once.Do(func() { g.private(i.Interaction, s) }) }})
}

// autocomplete offers the models of /model.
func (g *discordGateway) autocomplete(i *discordgo.InteractionCreate) {
	typed := ""
	for _, o := range i.ApplicationCommandData().Options {
		if o.Focused {
			typed = fmt.Sprint(o.Value)
		}
	}
	var choices []*discordgo.ApplicationCommandOptionChoice
	for _, m := range g.rt.ModelChoices(typed) {
		if len(choices) == 25 {
			break
		}
		choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: shorten(m, 100), Value: m})
	}
	g.respond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices},
	})
}

// component answers a button press or a menu pick on a card: the card is
// updated (its buttons removed) when the answer decided it, else the user
// is told why not, privately.
func (g *discordGateway) component(i *discordgo.InteractionCreate) {
	user, _, roles := interactionUser(i)
	data := i.MessageComponentData()
	if !g.rt.Owns(data.CustomID) {
		return // another replica's card: it answers
	}
	if strings.HasSuffix(data.CustomID, ":"+freeTextButton) {
		g.openText(i, user, roles, data.CustomID)
		return
	}
	text, ok := g.rt.Answer(i.ChannelID, data.CustomID, user, roles, data.Values)
	if !ok {
		g.private(i.Interaction, text)
		return
	}
	g.respond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: shorten(text, discordMaxLen),
			Components: []discordgo.MessageComponent{}, AllowedMentions: noMentions},
	})
}

// openText answers a press of a card's "Other…" button: a form with a
// text field, for the card's user or an approver; anyone else is told
// why not, privately.
func (g *discordGateway) openText(i *discordgo.InteractionCreate, user string, roles []string, id string) {
	formID, title, placeholder, ok := g.rt.OpenText(i.ChannelID, id, user, roles)
	if !ok {
		g.private(i.Interaction, placeholder) // the reason
		return
	}
	g.respond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{CustomID: formID, Title: title,
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.TextInput{CustomID: "answer", Label: "Your answer", Style: discordgo.TextInputParagraph,
					Placeholder: placeholder, Required: true, MaxLength: maxFreeText},
			}}}},
	})
}

// modal takes a submitted form: the answer in the user's own words to a
// card, which is updated as by a press.
func (g *discordGateway) modal(i *discordgo.InteractionCreate) {
	user, _, roles := interactionUser(i)
	data := i.ModalSubmitData()
	if !g.rt.Owns(data.CustomID) {
		return
	}
	var answer string
	for _, row := range data.Components {
		r, ok := row.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		for _, c := range r.Components {
			if t, ok := c.(*discordgo.TextInput); ok && t.CustomID == "answer" {
				answer = t.Value
			}
		}
	}
	text, ok := g.rt.Answer(i.ChannelID, data.CustomID, user, roles, []string{answer})
	if !ok {
		g.private(i.Interaction, text)
		return
	}
	g.respond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: shorten(text, discordMaxLen),
			Components: []discordgo.MessageComponent{}, AllowedMentions: noMentions},
	})
}

// slashCommands are the commands registered with Discord.
var slashCommands = []*discordgo.ApplicationCommand{
	{Name: "new", Description: "Start this conversation afresh (after the messages already waiting)"},
	{Name: "stop", Description: "Stop the answer in progress here"},
	{Name: "backend", Description: "Show the agent backend, model and permission mode"},
	{Name: "model", Description: "Show or choose the model of this conversation", Options: []*discordgo.ApplicationCommandOption{
		{Type: discordgo.ApplicationCommandOptionString, Name: "name", Description: "The model", Autocomplete: true},
	}},
	{Name: "status", Description: "Show what this conversation is doing"},
	{Name: "usage", Description: "Show the tokens and cost of this conversation"},
	{Name: "help", Description: "How to use this bot"},
}

// register registers the slash commands, in the configured servers or
// globally, once per process.
func (g *discordGateway) register(r *discordgo.Ready) {
	g.mu.Lock()
	done := g.reg
	g.reg = true
	g.mu.Unlock()
	if done {
		return
	}
	app := ""
	switch {
	case r.Application != nil && r.Application.ID != "":
		app = r.Application.ID
	case r.User != nil:
		app = r.User.ID
	}
	guilds := g.guilds
	if len(guilds) == 0 {
		guilds = []string{""}
	}
	for _, guild := range guilds {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := g.s.ApplicationCommandBulkOverwrite(app, guild, slashCommands, discordgo.WithContext(ctx))
		cancel()
		if err != nil {
			g.log.Error("registering the slash commands (the text commands still work)", "guild", guild, "err", err)
			continue
		}
		g.log.Info("slash commands registered", "guild", guild)
	}
}
