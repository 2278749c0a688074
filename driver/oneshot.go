package driver

import (
	"context"
	"errors"
	"iter"

	"github.com/agentcli/agentcli"
)

// StartFunc starts a live session for req.
type StartFunc func(ctx context.Context, req *agentcli.Request) (agentcli.Session, error)

// OneShot runs req as a one-shot run on a live session: it starts the
// session, streams one turn with req.Prompt and req.Attachments (loaded
// already, by LoadAttachments, as the runner does; see
// agentcli.StreamTurn) and closes the session. It is
// how Backend.Run and Backend.Stream honour permission modes that need the
// host (PermissionAsk, and PermissionDeny where the CLI has no flag for
// it). The guarantees of a one-shot run hold: req.Timeout bounds the whole
// run (start included) and ends it with a *agentcli.TimeoutError,
// cancelling ctx ends it with a *agentcli.CanceledError, and when the
// sequence ends (breaking out of the loop included) the CLI's process
// group is gone.
func OneShot(ctx context.Context, start StartFunc, req *agentcli.Request) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		if req == nil {
			req = &agentcli.Request{}
		}
		r := *req
		r.Timeout = 0 // bounded here, over the start and the turn together
		runCtx := ctx
		if req.Timeout > 0 {
			// The cause tells the session that the run's timeout, not
			// the caller, ended its context: the turn ends with a
			// *agentcli.TimeoutError (and the session's wire log says
			// so).
			var cancel context.CancelFunc
			runCtx, cancel = context.WithTimeoutCause(ctx, req.Timeout, &agentcli.TimeoutError{Timeout: req.Timeout})
			defer cancel()
		}
		timedOut := func(err error) error {
			if req.Timeout > 0 && ctx.Err() == nil && runCtx.Err() != nil &&
				(errors.Is(err, agentcli.ErrCanceled) || errors.Is(err, context.DeadlineExceeded)) {
				return &agentcli.TimeoutError{Backend: backendOf(err), Timeout: req.Timeout}
			}
			return err
		}
		r.Attachments = nil // sent with the turn
		s, err := start(runCtx, &r)
		if err != nil {
			yield(agentcli.Event{}, timedOut(err))
			return
		}
		defer s.Close()
		for ev, err := range agentcli.StreamTurn(runCtx, s, &agentcli.Turn{Prompt: r.Prompt, Attachments: req.Attachments}) {
			if err != nil {
				yield(agentcli.Event{}, timedOut(err))
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// backendOf returns the backend named by a typed error, or "".
func backendOf(err error) string {
	var ce *agentcli.CanceledError
	if errors.As(err, &ce) {
		return ce.Backend
	}
	var te *agentcli.TimeoutError
	if errors.As(err, &te) {
		return te.Backend
	}
	return ""
}
