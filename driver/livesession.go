package driver

import (
	"context"
	"iter"

	"github.com/agentcli/agentcli"
)

// redactedSession is a live session whose events, results and errors pass
// a redactor, as a one-shot run's do: the run's credentials (the
// environment's and the MCP servers' Env and Headers) never reach the
// caller in what the CLI printed.
type redactedSession struct {
	s   agentcli.Session
	red *Redactor
	// rawLimit: the longest Raw the session keeps (RawLimit).
	rawLimit int
	// backend and kinds: the backend's name and the attachment kinds it
	// takes (see redactTurns).
	backend string
	kinds   []agentcli.AttachmentKind
}

var _ agentcli.Session = (*redactedSession)(nil)

// redactSession wraps s so that everything it reports passes red, and
// CapRaw with rawLimit.
func redactSession(s agentcli.Session, red *Redactor, rawLimit int) agentcli.Session {
	return &redactedSession{s: s, red: red, rawLimit: rawLimit}
}

func (r *redactedSession) ID() string { return r.s.ID() }

func (r *redactedSession) Stream(ctx context.Context, prompt string) iter.Seq2[agentcli.Event, error] {
	return r.redact(r.s.Stream(ctx, prompt))
}

// redact returns seq with every event and error passing the session's
// redactor and CapRaw.
func (r *redactedSession) redact(seq iter.Seq2[agentcli.Event, error]) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		for ev, err := range seq {
			if err != nil {
				err = r.red.Error(err)
				CapRawErr(err, r.rawLimit)
			} else {
				r.red.Event(&ev)
				CapRaw(&ev, r.rawLimit)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (r *redactedSession) Run(ctx context.Context, prompt string) (*agentcli.Result, error) {
	res, err := r.s.Run(ctx, prompt)
	r.red.Result(res)
	if res != nil && len(res.Raw) > r.rawLimit {
		res.Raw = nil
	}
	err = r.red.Error(err)
	CapRawErr(err, r.rawLimit)
	return res, err
}

func (r *redactedSession) Interrupt(ctx context.Context) error {
	return r.red.Error(r.s.Interrupt(ctx))
}

func (r *redactedSession) Close() error { return r.red.Error(r.s.Close()) }

func (r *redactedSession) Err() error { return r.red.Error(r.s.Err()) }
