package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// wireLog starts the wire log of a run, when the request asks for one.
func (b *Backend) wireLog(r *Run, args []string, red *Redactor) *wirelog.Writer {
	if r.Req.WireLog == nil {
		return nil
	}
	start := r.wireStart(b.spec.Name, args, red)
	start.Deltas = r.Deltas
	return wirelog.NewWriter(r.Req.WireLog, start)
}

// wireStart is the start record of r's wire log: the request's fields a
// replay needs, and args as red redacts them.
func (r *Run) wireStart(backend string, args []string, red *Redactor) wirelog.Start {
	argv := make([]string, 0, len(args))
	for _, a := range args {
		argv = append(argv, red.Redact(a))
	}
	return wirelog.Start{
		Backend:     backend,
		Model:       r.Req.Model,
		SessionID:   r.Req.SessionID,
		Schema:      len(r.Req.OutputSchema) > 0,
		DropRaw:     r.Req.DropRaw,
		MaxRawBytes: r.Req.MaxRawBytes,
		Argv:        argv,
		Time:        time.Now().UTC(),
	}
}

// Replay implements Replayer: it reads a wire log (see
// Request.WireLog) and yields the events of the run it recorded, as the
// run yielded them (durations aside).
func (b *Backend) Replay(log io.Reader) iter.Seq2[agentcli.Event, error] {
	return func(yield func(agentcli.Event, error) bool) {
		rd := wirelog.NewReader(log)
		rec, err := rd.Next()
		if err != nil || rec.T != "start" {
			yield(agentcli.Event{}, fmt.Errorf("%s: replay: the log does not begin with a start record: %w", b.spec.Name, orFormat(err)))
			return
		}
		if rec.Start.Backend != b.spec.Name {
			yield(agentcli.Event{}, fmt.Errorf("%s: replay: the log was written by the %s backend", b.spec.Name, rec.Start.Backend))
			return
		}
		req := &agentcli.Request{Model: rec.Start.Model, SessionID: rec.Start.SessionID,
			DropRaw: rec.Start.DropRaw, MaxRawBytes: rec.Start.MaxRawBytes}
		if rec.Start.Schema {
			req.OutputSchema = json.RawMessage("{}") // the parser needs to know, not the schema
		}
		if rec.Start.Live {
			b.replaySession(req, rec.Start, rd, yield)
			return
		}
		red := ProcessRedactor()
		f := b.newFeed(&Run{spec: b.spec, Req: req, Deltas: rec.Start.Deltas, Options: &b.opts, Logger: b.opts.Logger, State: b.state}, red)
		ended := ""
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				yield(agentcli.Event{}, fmt.Errorf("%s: replay: %w", b.spec.Name, errIncomplete))
				return
			}
			if err != nil {
				yield(agentcli.Event{}, fmt.Errorf("%s: replay: %w", b.spec.Name, err))
				return
			}
			switch rec.T {
			case "out":
				if ended != "" {
					continue // dropped by the run too
				}
				for _, ev := range f.line(rec.Data, rec.TooLong) {
					red.Event(&ev)
					CapRaw(&ev, f.errs.rawLimit)
					if !yield(ev, nil) {
						return
					}
				}
			case "end":
				ended = rec.Why
			case "exit":
				switch ended {
				case "canceled":
					yield(agentcli.Event{}, &agentcli.CanceledError{Backend: b.spec.Name, Err: context.Canceled})
					return
				case "timeout":
					yield(agentcli.Event{}, f.errs.Timeout(0, rec.Exit))
					return
				}
				ev, err := f.end(rec.Exit)
				if err != nil {
					err = red.Error(err)
					CapRawErr(err, f.errs.rawLimit)
					yield(agentcli.Event{}, err)
					return
				}
				red.Event(&ev)
				CapRaw(&ev, f.errs.rawLimit)
				yield(ev, nil)
				return
			}
		}
	}
}

// replaySession replays a live session's log (see Spec.ReplaySession):
// each turn's events and its result or error, what the session yielded
// passing the redactor and the Raw limit as a live session's does.
func (b *Backend) replaySession(req *agentcli.Request, start *wirelog.Start, rd *wirelog.Reader, yield func(agentcli.Event, error) bool) {
	if b.spec.ReplaySession == nil {
		yield(agentcli.Event{}, &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: "replaying a live session's wire log"})
		return
	}
	req.Permission = agentcli.PermissionMode(start.Permission)
	req.Timeout = start.Timeout
	red := ProcessRedactor()
	rawLimit := RawLimit(req)
	r := &Run{spec: b.spec, Req: req, Deltas: true, Options: &b.opts, Logger: b.opts.Logger, State: b.state}
	for ev, err := range b.spec.ReplaySession(r, start.Proto, rd) {
		if err != nil {
			err = red.Error(err)
			CapRawErr(err, rawLimit)
		} else {
			red.Event(&ev)
			CapRaw(&ev, rawLimit)
		}
		if !yield(ev, err) {
			return
		}
	}
}

// errIncomplete: a wire log that ends before the run did (the run was
// still going, or the writer stopped).
var errIncomplete = errors.New("the log ends before the run ended")

func orFormat(err error) error {
	if err == nil || err == io.EOF {
		return wirelog.ErrFormat
	}
	return err
}
