package live

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// RunConfig returns the Config of a session of the prepared run r, for a
// Spec.StartSession: the CLI's path, options, logger and directory are
// r's, its environment is r.Env followed by env (r.Env is not modified),
// its request is req (r.Req, or what the backend made of it), and the
// session's wire log (started here when the request asks for one, with
// args and the protocol's record proto; see driver.Run.LiveWireLog),
// cleanup, redactor, host tools, hooks and errors are the run's. Proto,
// EditInput and InterruptGrace are left to the caller. It does not block.
func RunConfig(r *driver.Run, backend string, req *agentcli.Request, args, env []string, proto any) Config {
	return Config{
		Backend:   backend,
		Path:      r.Path,
		Options:   *r.Options,
		Logger:    r.Logger,
		Args:      args,
		Env:       append(r.Env[:len(r.Env):len(r.Env)], env...),
		Dir:       r.Dir,
		Request:   req,
		Cleanup:   r.Cleanup,
		Wire:      r.LiveWireLog(backend, args, proto),
		Redactor:  r.Redactor(),
		HostTools: r.HostTools(),
		Hooks:     r.Hooks(),
		Errors:    r.Errors(),
	}
}

// ReplayConfig returns the Config with which Replay reads a wire log of a
// session of run r, for a Spec.ReplaySession: r's options, request and
// errors, and the protocol proto makes. It does not block.
func ReplayConfig(r *driver.Run, backend string, proto func(h *Host) Proto) Config {
	return Config{Backend: backend, Options: *r.Options, Request: r.Req, Errors: r.Errors(), Proto: proto}
}
