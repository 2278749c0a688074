package live

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Query starts the CLI as cfg says (cfg.Proto is ignored), speaks
// JSON-RPC with it (bare: without the "jsonrpc" member, as codex
// app-server does), runs do, and stops the CLI: a short-lived process
// that answers a question (which sessions it keeps) and makes no model
// call. The CLI's own requests are refused. It blocks until do returns
// and the CLI is reaped, or ctx ends.
func Query(ctx context.Context, cfg Config, bare bool, do func(ctx context.Context, rpc *RPC) error) error {
	if cfg.Request == nil {
		cfg.Request = &agentcli.Request{}
	}
	cfg.Proto = func(h *Host) Proto {
		q := &query{h: h, do: do}
		q.rpc = &RPC{Host: h, Bare: bare,
			OnRequest: func(id json.RawMessage, _ string, _ json.RawMessage, _ []byte) {
				q.rpc.ReplyError(id, -32601, "agentcli is only asking a question")
			},
		}
		return q
	}
	s, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	s.Close() // what do asked is answered; how the CLI ends is not
	return nil
}

// query is the protocol of Query: do, and nothing else.
type query struct {
	h   *Host
	rpc *RPC
	do  func(ctx context.Context, rpc *RPC) error
}

func (q *query) Start(ctx context.Context) error { return q.do(ctx, q.rpc) }

func (q *query) Line(line []byte) { q.rpc.Line(line) }

func (q *query) Prompt(context.Context, string) error {
	return errors.New("agentcli: a query takes no prompt")
}

func (q *query) Interrupt(context.Context) error { return nil }

func (q *query) Exit(e driver.Exit) error {
	if e.Code == 0 {
		return nil
	}
	return q.h.Errors().Exited(e)
}
