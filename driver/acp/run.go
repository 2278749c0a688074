package acp

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// Start starts a live session of the prepared run r whose CLI speaks ACP
// as c configures it: live.Start with live.RunConfig(r, backend, req,
// args, env, ...), the wire log recording c.Record(req.MCPServers). It
// blocks until the session is up (see live.Start).
func Start(ctx context.Context, r *driver.Run, backend string, req *agentcli.Request, args, env []string, c Config) (*live.Session, error) {
	lc := live.RunConfig(r, backend, req, args, env, c.Record(req.MCPServers))
	lc.Proto = func(h *live.Host) live.Proto { return New(h, c) }
	return live.Start(ctx, lc)
}

// Replay replays a live session's wire log (for a Spec.ReplaySession)
// with the protocol c configures, read back as the log recorded it
// (ReadRecorded, from the start record's proto); adjust, if set, then
// sets what depends on the recorded configuration, given the MCP
// servers the log names. A proto that cannot be read is the sequence's
// one *agentcli.ParseError. The sequence blocks as live.Replay's does.
func Replay(r *driver.Run, backend string, proto json.RawMessage, log *wirelog.Reader, c Config, adjust func(c *Config, servers []agentcli.MCPServer)) iter.Seq2[agentcli.Event, error] {
	servers, err := ReadRecorded(proto, &c)
	if err != nil {
		return func(yield func(agentcli.Event, error) bool) {
			yield(agentcli.Event{}, &agentcli.ParseError{Backend: backend, Err: err})
		}
	}
	if adjust != nil {
		adjust(&c, servers)
	}
	return live.Replay(live.ReplayConfig(r, backend, func(h *live.Host) live.Proto { return New(h, c) }), log)
}
