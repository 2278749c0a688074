package main

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/agentcli/agentcli"
)

// Warm sessions: an agentcli.Pool keeps Options.Warm live sessions
// started ahead of need, so that a conversation that needs a new session
// (a new channel or thread, after /new) gets a CLI that has already
// booted and finished its handshake, and its first turn waits for the
// model only. A conversation that resumes a stored session cannot use one
// (the CLI must be started on that session) and starts its own as before.
//
// The pool starts every session from one request, made before anyone
// owns them; the callbacks of that request dispatch to the conversation
// that owns the session when it asks: warmBackend gives each session it
// starts an owner of its own, and the runtime names the conversation when
// it takes the session. A session nobody owns (none asks before a turn)
// is denied and its questions left unanswered.

// sessionOwner names the conversation a warm session belongs to.
type sessionOwner struct {
	mu   sync.Mutex
	conv string
}

func (o *sessionOwner) set(conv string) {
	o.mu.Lock()
	o.conv = conv
	o.mu.Unlock()
}

func (o *sessionOwner) get() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.conv
}

// warmSession is a session of the pool, with its owner.
type warmSession struct {
	agentcli.Session
	owner *sessionOwner
}

// StreamTurn forwards t (with its attachments) to the session; without
// it, agentcli.StreamTurn would refuse attachments on a warm session.
func (w *warmSession) StreamTurn(ctx context.Context, t *agentcli.Turn) iter.Seq2[agentcli.Event, error] {
	return agentcli.StreamTurn(ctx, w.Session, t)
}

var _ agentcli.TurnStreamer = (*warmSession)(nil)

// warmBackend is the backend the pool starts its sessions on: the
// runtime's, with per-session callbacks.
type warmBackend struct {
	agentcli.Backend
	rt   *Runtime
	done context.Context // ends every start in progress (Shutdown); nil: never
}

// Unwrap returns the runtime's backend.
func (w *warmBackend) Unwrap() agentcli.Backend { return w.Backend }

// StartSession starts a session of req whose OnPermission and OnQuestion
// (when req has them) ask in the conversation that owns the session.
func (w *warmBackend) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	o := &sessionOwner{}
	r := *req
	if req.OnPermission != nil {
		r.OnPermission = func(ctx context.Context, p *agentcli.PermissionRequest) agentcli.PermissionDecision {
			conv := o.get()
			if conv == "" {
				w.rt.log.Error("a permission request of a warm session nobody owns; denying it")
				return agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: "Nobody is there to allow this."}
			}
			return w.rt.askPermission(ctx, conv, p)
		}
	}
	if req.OnQuestion != nil {
		r.OnQuestion = func(ctx context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
			conv := o.get()
			if conv == "" {
				w.rt.log.Error("a question of a warm session nobody owns; leaving it unanswered")
				return nil, nil
			}
			return w.rt.askQuestion(ctx, conv, q), nil
		}
	}
	if w.done != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(w.done, cancel)()
	}
	s, err := agentcli.StartSession(ctx, w.Backend, &r)
	if err != nil {
		return nil, err
	}
	return &warmSession{Session: s, owner: o}, nil
}

// startWarm creates the pool of warm sessions in the background (its
// first session starts at once). A conversation that needs a session
// meanwhile waits for that one rather than start another beside it; when
// the pool cannot be made, conversations start their sessions
// themselves.
func (rt *Runtime) startWarm() {
	if rt.o.Warm <= 0 || !rt.liveOK.Load() {
		return
	}
	done, cancel := context.WithCancel(context.Background())
	rt.mu.Lock()
	rt.warmOn = true // the warm sessions count against MaxLive from now on
	rt.warmCancel = cancel
	ready := make(chan struct{})
	rt.warmReady = ready
	rt.mu.Unlock()
	rt.warmWG.Add(1)
	go func() {
		defer rt.warmWG.Done()
		tmpl := rt.request("", Entry{}) // its callbacks are replaced per session
		p, err := agentcli.NewPool(&warmBackend{Backend: rt.o.Backend, rt: rt, done: done}, tmpl,
			&agentcli.PoolOptions{Warm: rt.o.Warm, IdleTimeout: rt.o.LiveIdle})
		rt.mu.Lock()
		shut := rt.shut
		defer func() {
			rt.mu.Unlock()
			if err == nil && shut {
				p.Close()
			}
			close(ready)
		}()
		switch {
		case err != nil:
			rt.warmOn = false
			if errors.Is(err, agentcli.ErrUnsupported) {
				rt.log.Info("no warm sessions: the backend has no live sessions", "err", err)
			} else {
				rt.log.Warn("no warm sessions: starting one failed", "err", err)
			}
		case shut:
			rt.warmOn = false
		default:
			rt.pool = p
			rt.log.Info("warm sessions ready", "count", rt.o.Warm)
		}
	}()
}

// warmSlots is how many live sessions the pool may hold (counted against
// MaxLive). rt.mu is held.
func (rt *Runtime) warmSlots() int {
	if rt.warmOn {
		return rt.o.Warm
	}
	return 0
}

// takeWarm returns a session of the pool for conversation conv with entry
// e, owned by conv, or nil when the conversation cannot have one (it
// resumes a session, or runs another model than the pool's) or there is
// no pool.
func (rt *Runtime) takeWarm(ctx context.Context, conv string, e Entry) (agentcli.Session, error) {
	if e.SessionID != "" || e.Model != "" && e.Model != rt.o.Request.Model {
		return nil, nil
	}
	rt.mu.Lock()
	p, on, ready := rt.pool, rt.warmOn, rt.warmReady
	rt.mu.Unlock()
	if p == nil && on && ready != nil {
		select { // the pool's first session is starting
		case <-ready:
		case <-ctx.Done():
			return nil, nil
		}
		rt.mu.Lock()
		p = rt.pool
		rt.mu.Unlock()
	}
	if p == nil {
		return nil, nil
	}
	s, err := p.Take(ctx)
	if errors.Is(err, agentcli.ErrSessionClosed) {
		return nil, nil // closing down: the caller starts one and finds out
	}
	if err != nil {
		return nil, err
	}
	ws, ok := s.(*warmSession)
	if !ok { // not one of warmBackend's: it cannot be told whose it is
		s.Close()
		return nil, errors.New("the pool handed out a session it did not start")
	}
	ws.owner.set(conv)
	rt.log.Debug("a warm session for the conversation", "conversation", conv)
	return ws, nil
}

// closeWarm closes the pool, once its creation is over (a start in
// progress is cancelled).
func (rt *Runtime) closeWarm() {
	rt.mu.Lock()
	if rt.warmCancel != nil {
		rt.warmCancel()
	}
	rt.mu.Unlock()
	rt.warmWG.Wait()
	rt.mu.Lock()
	p := rt.pool
	rt.pool, rt.warmOn = nil, false
	rt.mu.Unlock()
	if p != nil {
		p.Close()
	}
}
