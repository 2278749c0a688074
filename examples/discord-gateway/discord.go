package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// discordMaxLen is Discord's limit on a message's content.
const discordMaxLen = 2000

// discordChat is the Chat on a discordgo session.
//
// Rate limits: discordgo keeps a bucket per route from Discord's
// X-RateLimit-* headers and waits before a request that would exceed one.
// On a 429 it would by default sleep for retry_after and try again, with
// no bound and deaf to any context, holding the route's bucket meanwhile.
// Every request here turns that off (discordgo.WithRetryOnRatelimit(false))
// and handles the 429 itself: no request to that channel goes out before
// retry_after has passed (the caller's context may give up waiting), and a
// call is retried at most rateRetries times.
type discordChat struct {
	s   *discordgo.Session
	log *slog.Logger

	mu        sync.Mutex
	notBefore map[string]time.Time // channel → end of its last 429's retry_after
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
		if attempt >= rateRetries {
			return err
		}
	}
}

func (d *discordChat) Post(ctx context.Context, channel, replyTo, text string) (string, error) {
	msg := &discordgo.MessageSend{Content: text, AllowedMentions: noMentions}
	if replyTo != "" {
		no := false
		msg.Reference = &discordgo.MessageReference{MessageID: replyTo, ChannelID: channel, FailIfNotExists: &no}
	}
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

func (d *discordChat) Ask(ctx context.Context, channel, text string, buttons []Button) (string, error) {
	var row []discordgo.MessageComponent
	for _, b := range buttons {
		style := discordgo.SecondaryButton
		switch b.Style {
		case "allow":
			style = discordgo.SuccessButton
		case "deny":
			style = discordgo.DangerButton
		}
		row = append(row, discordgo.Button{Label: b.Label, Style: style, CustomID: b.ID})
	}
	msg := &discordgo.MessageSend{
		Content:         text,
		AllowedMentions: noMentions,
		Components:      []discordgo.MessageComponent{discordgo.ActionsRow{Components: row}},
	}
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

// newDiscordSession returns a discordgo session for a bot token that
// receives guild and direct messages with their content.
func newDiscordSession(token string) (*discordgo.Session, error) {
	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, err
	}
	s.Identify.Intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages |
		discordgo.IntentMessageContent
	return s, nil
}

// attachDiscord routes the session's messages and button presses to rt.
// Messages of bots (this one included) are ignored; a leading mention of
// this bot is removed.
func attachDiscord(s *discordgo.Session, rt *Runtime, log *slog.Logger) {
	s.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		if m.Author == nil || m.Author.Bot {
			return
		}
		text := m.Content
		if s.State != nil && s.State.User != nil {
			me := s.State.User.ID
			text = strings.NewReplacer("<@"+me+">", "", "<@!"+me+">", "").Replace(text)
		}
		var roles []string
		if m.Member != nil {
			roles = m.Member.Roles
		}
		rt.Handle(Message{ID: m.ID, Channel: m.ChannelID, Author: m.Author.ID, Roles: roles, Text: text})
	})
	s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		if i.Type != discordgo.InteractionMessageComponent {
			return
		}
		var user string
		var roles []string
		switch {
		case i.Member != nil && i.Member.User != nil:
			user, roles = i.Member.User.ID, i.Member.Roles
		case i.User != nil:
			user = i.User.ID
		}
		text, ok := rt.Press(i.ChannelID, i.MessageComponentData().CustomID, user, roles)
		resp := &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: text, Flags: discordgo.MessageFlagsEphemeral,
				AllowedMentions: noMentions},
		}
		if ok {
			resp = &discordgo.InteractionResponse{
				Type: discordgo.InteractionResponseUpdateMessage,
				Data: &discordgo.InteractionResponseData{Content: text + " by <@" + user + ">",
					Components: []discordgo.MessageComponent{}, AllowedMentions: noMentions},
			}
		}
		// Discord wants the answer within three seconds.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := s.InteractionRespond(i.Interaction, resp, discordgo.WithContext(ctx)); err != nil {
			log.Error("answering a button press", "channel", i.ChannelID, "err", err)
		}
	})
}
