package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver"
)

// transcriptBackend stands for a CLI that keeps its sessions in files on
// the machine that runs it: it wraps a scripted backend and keeps, on its
// own "disk", the prompts of each session. A run or live session that
// resumes a session its disk does not have fails as a real CLI does
// (session not found); each turn records the history it found.
type transcriptBackend struct {
	*agentclitest.Backend
	worker string
	log    *turnLog

	mu   sync.Mutex
	disk map[string][]string // session id → prompts, in order
}

// turnLog records every turn every worker ran, in the order they ran.
type turnLog struct {
	mu    sync.Mutex
	turns []turnRecord
	ids   atomic.Int64
}

type turnRecord struct {
	Worker  string
	Session string
	Prompt  string
	History []string // the session's prompts found before this turn
}

func (l *turnLog) add(r turnRecord) {
	l.mu.Lock()
	l.turns = append(l.turns, r)
	l.mu.Unlock()
}

func (l *turnLog) all() []turnRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.turns)
}

func newTranscriptBackend(worker string, log *turnLog, call agentclitest.Call) *transcriptBackend {
	sb := agentclitest.NewBackend()
	sb.Default = &call
	all := agentcli.SessionModes{OneShot: true, Live: true}
	sb.Caps = agentcli.Capabilities{Sessions: true, Resume: true, Interrupt: true, ForkSession: all, NewSessionID: all,
		PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny}}
	return &transcriptBackend{Backend: sb, worker: worker, log: log, disk: map[string][]string{}}
}

// open finds, forks or creates the session of a run (req.SessionID,
// ForkSession, NewSessionID), as a CLI that keeps its sessions on its
// disk does: resuming or forking a session it does not have fails
// (session not found), and so does a new id in use.
func (t *transcriptBackend) open(req *agentcli.Request) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	notFound := func(id string) error {
		return &agentcli.ExitError{Backend: t.Name(), Code: 1, Kind: agentcli.ErrSessionNotFound,
			Stderr: "No conversation found with session ID: " + id}
	}
	if req.SessionID != "" {
		if _, ok := t.disk[req.SessionID]; !ok {
			return "", notFound(req.SessionID)
		}
		if !req.ForkSession {
			return req.SessionID, nil
		}
	}
	id := req.NewSessionID
	if id == "" {
		id = fmt.Sprintf("sess-%d", t.log.ids.Add(1))
	} else if _, ok := t.disk[id]; ok {
		return "", &agentcli.ExitError{Backend: t.Name(), Code: 1, Stderr: "session ID " + id + " is already in use"}
	}
	t.disk[id] = slices.Clone(t.disk[req.SessionID]) // a fork starts with its source's history
	return id, nil
}

// record appends a turn to the session's transcript and the log.
func (t *transcriptBackend) record(id, prompt string) {
	t.mu.Lock()
	hist := slices.Clone(t.disk[id])
	t.disk[id] = append(t.disk[id], prompt)
	t.mu.Unlock()
	t.log.add(turnRecord{Worker: t.worker, Session: id, Prompt: prompt, History: hist})
}

// relabel gives the scripted events the session's id.
func relabel(seq iter.Seq2[agentcli.Event, error], id string) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		for ev, err := range seq {
			if ev.SessionID != "" {
				ev.SessionID = id
			}
			if ev.Result != nil {
				r := *ev.Result
				r.SessionID = id
				ev.Result = &r
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (t *transcriptBackend) Run(ctx context.Context, req *agentcli.Request) (*agentcli.Result, error) {
	return driver.Collect(t.Name(), t.Stream(ctx, req))
}

func (t *transcriptBackend) Stream(ctx context.Context, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		id, err := t.open(req)
		if err != nil {
			yield(agentcli.Event{}, err)
			return
		}
		t.record(id, req.Prompt)
		for ev, err := range relabel(t.Backend.Stream(ctx, req), id) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (t *transcriptBackend) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	id, err := t.open(req)
	if err != nil {
		return nil, err
	}
	r := *req
	r.SessionID, r.ForkSession, r.NewSessionID = id, false, ""
	s, err := t.Backend.StartSession(ctx, &r)
	if err != nil {
		return nil, err
	}
	return &transcriptSession{Session: s, t: t, id: id}, nil
}

type transcriptSession struct {
	agentcli.Session
	t  *transcriptBackend
	id string
}

func (s *transcriptSession) ID() string { return s.id }

func (s *transcriptSession) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		s.t.record(s.id, prompt)
		for ev, err := range relabel(s.Session.Stream(ctx, prompt), s.id) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (s *transcriptSession) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	return driver.Collect(s.t.Name(), s.Stream(ctx, prompt))
}

// fakePorter moves a transcriptBackend's sessions: the archive is the
// transcript and the name of the worker that exported it. It counts the
// archives that crossed from one worker to another.
type fakePorter struct {
	mu      sync.Mutex
	crossed int
	imports []string // "from→to session"
}

// transcriptOf returns the transcriptBackend b is or wraps.
func transcriptOf(b agentcli.Backend) (*transcriptBackend, bool) {
	switch x := b.(type) {
	case *transcriptBackend:
		return x, true
	case *stallingStart:
		return x.transcriptBackend, true
	}
	return nil, false
}

type fakeArchive struct {
	Exporter string   `json:"exporter"`
	Session  string   `json:"session"`
	Prompts  []string `json:"prompts"`
}

func (p *fakePorter) Export(ctx context.Context, b agentcli.Backend, dir, id string, w io.Writer) error {
	t, ok := transcriptOf(b)
	if !ok {
		return errors.New("fakePorter: not a transcript backend")
	}
	t.mu.Lock()
	prompts, ok := t.disk[id]
	prompts = slices.Clone(prompts)
	t.mu.Unlock()
	if !ok {
		return fmt.Errorf("fakePorter: no session %s on %s", id, t.worker)
	}
	return json.NewEncoder(w).Encode(fakeArchive{Exporter: t.worker, Session: id, Prompts: prompts})
}

func (p *fakePorter) Import(ctx context.Context, b agentcli.Backend, dir string, r io.Reader) (string, error) {
	t, ok := transcriptOf(b)
	if !ok {
		return "", errors.New("fakePorter: not a transcript backend")
	}
	var a fakeArchive
	if err := json.NewDecoder(r).Decode(&a); err != nil {
		return "", err
	}
	t.mu.Lock()
	t.disk[a.Session] = a.Prompts
	t.mu.Unlock()
	p.mu.Lock()
	if a.Exporter != t.worker {
		p.crossed++
	}
	p.imports = append(p.imports, a.Exporter+"→"+t.worker+" "+a.Session)
	p.mu.Unlock()
	return a.Session, nil
}

func (p *fakePorter) crossings() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.crossed
}
