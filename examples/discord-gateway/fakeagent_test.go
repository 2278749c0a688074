package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
)

// fakeAgent is a Backend with live sessions, driven by the prompt:
//
//   - "slow ...": streams a little text, then waits until the turn is
//     interrupted (live) or its context ends;
//   - "ask ...": asks permission for a Bash call and answers with the
//     decision's kind;
//   - "question ...": puts question (or a default one) to
//     Request.OnQuestion and answers "answers: " and the Answer's JSON,
//     "answers: none" for a nil one, "answers: unavailable" without
//     OnQuestion;
//   - "partial ...": streams some text, then fails with a 503;
//   - "usage ...": answers with token counts and a cost;
//   - anything else: answers "echo: <prompt>".
//
// Sessions are kept as in echoBackend: an unknown SessionID fails with
// ErrSessionNotFound.
type fakeAgent struct {
	mu         sync.Mutex
	sessions   map[string][]string
	next       int
	starts     []agentcli.Request // StartSession requests
	runs       []agentcli.Request // Run/Stream requests
	live       []*fakeLive
	interrupts int
	turnDelay  time.Duration // before the first event of every turn
	textDelay  time.Duration // after the streamed text, before the result
	// fault, when set, is asked at the start of every turn: an error
	// fails the turn before any output (and an *agentcli.ExitError kills
	// a live session's CLI); it may count attempts.
	fault func(prompt string) error
	turns int // turns played
	// question is what "question ..." asks; noQuestions hides
	// Capabilities.Questions.
	question    *agentcli.Question
	noQuestions bool
	// attach is Capabilities.Attachments; atts records the attachments
	// of every turn (every attempt) that had some.
	attach []agentcli.AttachmentKind
	atts   []attachedTurn
	// gate, when set, holds every StartSession until it is closed (or
	// the start's context ends): a CLI that takes its time to boot.
	gate chan struct{}
}

func newFakeAgent() *fakeAgent { return &fakeAgent{sessions: map[string][]string{}} }

func (a *fakeAgent) Name() string                    { return "fake" }
func (a *fakeAgent) Check(ctx context.Context) error { return nil }
func (a *fakeAgent) Capabilities() agentcli.Capabilities {
	return agentcli.Capabilities{TextDeltas: true, Resume: true, Sessions: true, Interrupt: true,
		PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk},
		Questions:       !a.noQuestions, Attachments: a.attach}
}

// attachedTurn is a turn with attachments, as the fake agent got it.
type attachedTurn struct {
	live   bool // a live session's turn (StreamTurn), not a run of its own
	prompt string
	atts   []agentcli.Attachment
}

// noteAttachments records atts, and refuses them as agentcli does when
// the fake does not list their kind.
func (a *fakeAgent) noteAttachments(live bool, prompt string, atts []agentcli.Attachment) error {
	if len(atts) == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, at := range atts {
		kind := agentcli.AttachmentText
		if strings.HasPrefix(at.MediaType, "image/") {
			kind = agentcli.AttachmentImage
		}
		if !slices.Contains(a.attach, kind) && !slices.Contains(a.attach, agentcli.AttachmentKind(at.MediaType)) {
			return &agentcli.UnsupportedError{Backend: "fake", Feature: "attachments of type " + at.MediaType}
		}
	}
	c := make([]agentcli.Attachment, len(atts))
	for i, at := range atts {
		c[i] = at
		c[i].Data = slices.Clone(at.Data)
	}
	a.atts = append(a.atts, attachedTurn{live: live, prompt: prompt, atts: c})
	return nil
}

func (a *fakeAgent) attachedCopy() []attachedTurn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.atts)
}

// session resolves a request's session: the same one, a new one, or
// ErrSessionNotFound.
func (a *fakeAgent) session(id string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id == "" {
		a.next++
		id = fmt.Sprint("fs-", a.next)
		a.sessions[id] = nil
		return id, nil
	}
	if _, ok := a.sessions[id]; !ok {
		return "", &agentcli.ExitError{Backend: "fake", Code: 1, Kind: agentcli.ErrSessionNotFound}
	}
	return id, nil
}

func (a *fakeAgent) record(id, prompt string) {
	a.mu.Lock()
	a.sessions[id] = append(a.sessions[id], prompt)
	a.mu.Unlock()
}

func (a *fakeAgent) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range a.Stream(ctx, req) {
		if err != nil {
			return res, err
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	return res, nil
}

func (a *fakeAgent) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		a.mu.Lock()
		a.runs = append(a.runs, *req)
		a.mu.Unlock()
		if err := a.noteAttachments(false, req.Prompt, req.Attachments); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		id, err := a.session(req.SessionID)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		a.turn(ctx, id, req.Prompt, req, nil, yield)
	}
}

// body returns the prompt without the gateway's "Message from ..." line.
func body(prompt string) string {
	if strings.HasPrefix(prompt, "Message from ") {
		if i := strings.IndexByte(prompt, '\n'); i >= 0 {
			return prompt[i+1:]
		}
	}
	return prompt
}

// turn plays one turn of session id.
func (a *fakeAgent) turn(ctx context.Context, id, prompt string, req *agentcli.Request, live *fakeLive,
	yield func(agentcli.Event, error) bool) {
	var interrupted <-chan struct{}
	if live != nil {
		interrupted = live.currentIntr()
	}
	a.mu.Lock()
	a.turns++
	fault := a.fault
	a.mu.Unlock()
	if fault != nil {
		if err := fault(prompt); err != nil {
			var ee *agentcli.ExitError
			if live != nil && errors.As(err, &ee) {
				live.die(err)
				err = fmt.Errorf("fake: %w", agentcli.ErrSessionClosed)
			}
			yield(agentcli.Event{}, err)
			return
		}
	}
	a.record(id, prompt)
	if a.turnDelay > 0 {
		select {
		case <-time.After(a.turnDelay):
		case <-ctx.Done():
		}
	}
	if !yield(agentcli.Event{Kind: agentcli.EventInit, SessionID: id}, nil) {
		return
	}
	text := "echo: " + prompt
	var res agentcli.Result
	switch b := body(prompt); {
	case strings.HasPrefix(b, "partial"):
		if yield(agentcli.Event{Kind: agentcli.EventTextDelta, SessionID: id, Text: "half an answer"}, nil) {
			yield(agentcli.Event{}, &agentcli.ResultError{Backend: "fake", APIStatus: 503, Message: "overloaded"})
		}
		return
	case strings.HasPrefix(b, "usage"):
		cost := 0.0123
		res.Usage = agentcli.Usage{InputTokens: 1000, CacheReadTokens: 234, OutputTokens: 56}
		res.CostUSD = &cost
	case strings.HasPrefix(b, "slow"):
		if !yield(agentcli.Event{Kind: agentcli.EventTextDelta, SessionID: id, Text: "thinking about it…"}, nil) {
			return
		}
		select {
		case <-interrupted:
			yield(agentcli.Event{}, fmt.Errorf("fake: %w", agentcli.ErrInterrupted))
		case <-ctx.Done():
			yield(agentcli.Event{}, &agentcli.CanceledError{Backend: "fake", Err: context.Cause(ctx)})
		}
		return
	case strings.HasPrefix(b, "ask"):
		tool := agentcli.ToolUse{ID: "t1", Name: "Bash", RawName: "Bash", Kind: agentcli.ToolExecute,
			Input: json.RawMessage(`{"command":"rm -rf build"}`)}
		if !yield(agentcli.Event{Kind: agentcli.EventToolUse, SessionID: id, Tool: &tool}, nil) {
			return
		}
		d := agentcli.PermissionDecision{}
		if req.Permission == agentcli.PermissionAsk && req.OnPermission != nil {
			timeout := req.PermissionTimeout
			if timeout <= 0 {
				timeout = agentcli.DefaultPermissionTimeout
			}
			pctx, cancel := context.WithTimeout(ctx, timeout)
			d = req.OnPermission(pctx, &agentcli.PermissionRequest{SessionID: id, Tool: tool, Title: "rm -rf build",
				Options: []agentcli.PermissionOption{{ID: "a", Kind: agentcli.AllowOnce}, {ID: "r", Kind: agentcli.RejectOnce}}})
			cancel()
		}
		kind := d.Kind
		if kind == "" {
			kind = agentcli.RejectOnce
		}
		text = "decision: " + string(kind)
	case strings.HasPrefix(b, "question"):
		text = "answers: unavailable"
		if req.OnQuestion != nil {
			a.mu.Lock()
			q := a.question
			a.mu.Unlock()
			if q == nil {
				q = &agentcli.Question{Items: []agentcli.QuestionItem{{Header: "Color", Text: "Which color?",
					Options: []agentcli.QuestionOption{{Label: "Red"}, {Label: "Blue"}}}}}
			}
			// As agentcli does: the question's deadline is the request's
			// PermissionTimeout.
			timeout := req.PermissionTimeout
			if timeout <= 0 {
				timeout = agentcli.DefaultPermissionTimeout
			}
			qctx, cancel := context.WithTimeout(ctx, timeout)
			ans, err := req.OnQuestion(qctx, q)
			cancel()
			switch {
			case err != nil:
				text = "answers: error " + err.Error()
			case ans == nil:
				text = "answers: none"
			default:
				j, _ := json.Marshal(ans.Answers)
				text = "answers: " + string(j)
			}
		}
	}
	if !yield(agentcli.Event{Kind: agentcli.EventTextDelta, SessionID: id, Text: text}, nil) {
		return
	}
	if a.textDelay > 0 {
		select {
		case <-time.After(a.textDelay):
		case <-ctx.Done():
		}
	}
	for _, ev := range []agentcli.Event{
		{Kind: agentcli.EventText, SessionID: id, Text: text},
		{Kind: agentcli.EventResult, SessionID: id, Result: &agentcli.Result{Text: text, SessionID: id,
			Usage: res.Usage, CostUSD: res.CostUSD}},
	} {
		if !yield(ev, nil) {
			return
		}
	}
}

func (a *fakeAgent) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	a.mu.Lock()
	gate := a.gate
	a.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, &agentcli.CanceledError{Backend: "fake", Err: context.Cause(ctx)}
		}
	}
	a.mu.Lock()
	a.starts = append(a.starts, *req)
	a.mu.Unlock()
	id, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	s := &fakeLive{a: a, id: id, req: *req}
	a.mu.Lock()
	a.live = append(a.live, s)
	a.mu.Unlock()
	return s, nil
}

// openSessions counts the live sessions not closed.
func (a *fakeAgent) openSessions() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, s := range a.live {
		if s.Err() == nil {
			n++
		}
	}
	return n
}

func (a *fakeAgent) startsCopy() []agentcli.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agentcli.Request(nil), a.starts...)
}

type fakeLive struct {
	a   *fakeAgent
	id  string
	req agentcli.Request

	mu     sync.Mutex
	closed bool
	died   error         // the CLI's crash, when it crashed
	intr   chan struct{} // of the current turn
}

func (s *fakeLive) currentIntr() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.intr
}

// die ends the session as a crashed CLI would.
func (s *fakeLive) die(err error) {
	s.mu.Lock()
	s.closed, s.died = true, err
	s.mu.Unlock()
}

func (s *fakeLive) ID() string { return s.id }

func (s *fakeLive) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.died != nil {
		return s.died
	}
	if s.closed {
		return agentcli.ErrSessionClosed
	}
	return nil
}

func (s *fakeLive) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

func (s *fakeLive) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.a.mu.Lock()
	s.a.interrupts++
	s.a.mu.Unlock()
	if s.intr != nil {
		close(s.intr)
		s.intr = nil
	}
	return nil
}

func (s *fakeLive) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	var res *agentcli.Result
	for ev, err := range s.Stream(ctx, prompt) {
		if err != nil {
			return res, err
		}
		if ev.Kind == agentcli.EventResult {
			res = ev.Result
		}
	}
	return res, nil
}

func (s *fakeLive) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return s.StreamTurn(ctx, &agentcli.Turn{Prompt: prompt})
}

// StreamTurn implements agentcli.TurnStreamer.
func (s *fakeLive) StreamTurn(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	prompt := t.Prompt
	return func(yield func(agentcli.Event, error) bool) {
		if err := s.a.noteAttachments(true, prompt, t.Attachments); err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			yield(agentcli.Event{}, fmt.Errorf("fake: %w", agentcli.ErrSessionClosed))
			return
		}
		intr := make(chan struct{})
		s.intr = intr
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.intr == intr {
				s.intr = nil
			}
			s.mu.Unlock()
		}()
		s.a.turn(ctx, s.id, prompt, &s.req, s, yield)
	}
}

// noSessions hides a backend's SessionStarter.
type noSessions struct{ agentcli.Backend }
