package opencode

// Live sessions: `opencode acp`, the Agent Client Protocol (driver/acp),
// checked against opencode 1.18.33.
//
// Argv: opencode acp [ExtraArgs...]. The session is created with
// session/new (or loaded with session/load for Request.SessionID) in
// Request.Dir, with Request.MCPServers as its mcpServers (opencode
// advertises mcpCapabilities http and sse, and adds each server to its
// configuration as given: local {command, environment} or remote {url,
// headers}); Request.Model is set with session/set_config_option "model"
// (provider/model), then Request.Effort with "effort", which opencode
// offers only for a model with variants, and then with those variants as
// values (the model's variants plus "default"): the session sets it only
// when the latest configOptions offer the level, and warns otherwise, as
// `opencode run --variant` silently ignores a variant the model lacks.
//
// opencode asks the host only for what its permission config says "ask"
// (with "allow" or no permission key it never asks). Its config layers
// merge in order global file, OPENCODE_CONFIG, project files,
// OPENCODE_CONFIG_CONTENT, and OPENCODE_PERMISSION (JSON) last, over all of
// them; so a private config file cannot override a permission set in
// OPENCODE_CONFIG_CONTENT, and the session sets the tools that change
// things in OPENCODE_PERMISSION instead (merged over a value the caller
// already gives there):
//
//	bypass  nothing; a request opencode still sends is allowed (as `opencode run --auto`)
//	ask     bash, edit, webfetch, websearch, codesearch, external_directory and
//	        the request's MCP servers' tools (NAME_*): "ask"
//	deny    the same tools "deny": opencode removes them from the model's tools
//	plan    session/set_config_option "mode" "plan" (opencode's plan agent), and bash, edit "deny"
//
// Permission requests offer once (allow_once), always (allow_always) and
// reject (reject_once). A refusal ends the turn at once: opencode answers
// session/prompt with stopReason end_turn without calling the model again,
// and the next turn's history carries the refused call with the tool result
// "The user rejected permission to use this specific tool call.". ACP
// cannot carry edited input or a message for the model.
//
// Prompts: opencode runs a prompt whose text, trimmed, starts with "/" as
// one of its commands (/init rewrites AGENTS.md; an unknown name ends the
// turn without a model call). Such a prompt gets a zero-width space (U+200B)
// in front, which it does not trim; the model receives "\u200b/help".
// "@path" reaches the model verbatim. Request.SystemPrompt travels as in a
// one-shot run: a private instructions file listed in a private config
// file named by OPENCODE_CONFIG (prepended to the first prompt when the
// caller sets OPENCODE_CONFIG). Usage comes from session/prompt's answer.
// As with `opencode run`, resume a session from the directory it was
// created in.

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"unicode"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
	livesession "github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// changingTools are opencode's permission keys for tools that change
// things or reach out.
var changingTools = []string{"bash", "edit", "webfetch", "websearch", "codesearch", "external_directory"}

// modeOverlay returns the OPENCODE_PERMISSION entries of a mode for
// opencode's own tools, or nil.
func modeOverlay(m agentcli.PermissionMode) map[string]string {
	set := func(v string, keys ...string) map[string]string {
		o := map[string]string{}
		for _, k := range keys {
			o[k] = v
		}
		return o
	}
	switch m {
	case agentcli.PermissionAsk:
		return set("ask", changingTools...)
	case agentcli.PermissionDeny:
		return set("deny", changingTools...)
	case agentcli.PermissionPlan:
		return set("deny", "bash", "edit")
	}
	return nil
}

// liveArgs returns the arguments of a live session. It is pure.
func liveArgs(req *agentcli.Request) []string {
	return append([]string{"acp"}, req.ExtraArgs...)
}

// guardPrompt keeps a prompt from being run as one of opencode's commands.
func guardPrompt(p string) string {
	if strings.HasPrefix(strings.TrimSpace(p), "/") {
		return "\u200b" + p
	}
	return p
}

// toolName returns the tool name opencode uses as the first title of a
// call ("bash"); later titles describe the call ("touch x").
func toolName(_, title string) string {
	if title == "" {
		return ""
	}
	for _, r := range title {
		if !(r >= 'a' && r <= 'z' || r == '_' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return title
}

// mcpToolName returns toolName, extended to the tools of servers, whose
// names ("NAME_TOOL") may hold capitals and "-".
func mcpToolName(servers []agentcli.MCPServer) func(id, title string) string {
	if len(servers) == 0 {
		return toolName
	}
	return func(id, title string) string {
		for _, s := range servers {
			if strings.HasPrefix(title, s.Name+"_") && !strings.ContainsFunc(title, unicode.IsSpace) {
				return title
			}
		}
		return toolName(id, title)
	}
}

// startSession starts an opencode live session for the prepared run r.
func startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	req := r.Req
	st := r.State.(*state)
	dir := r.Dir
	if req.SessionID != "" {
		if orig, ok := st.lookup(req.SessionID); ok && orig != dir {
			r.Logger.Warn("agentcli: opencode hangs when a session is resumed from another directory; "+
				"running in the session's own directory", "backend", Name, "session", req.SessionID, "dir", dir, "session_dir", orig)
			dir = orig
		}
	}
	model, err := st.resolveModel(ctx, r, req.Model)
	if err != nil {
		return nil, err
	}
	env := r.Env
	if v := permissionEnv(req, r.Lookup("OPENCODE_PERMISSION")); v != "" {
		env = append(env[:len(env):len(env)], "OPENCODE_PERMISSION="+v)
	}
	ac := acp.Config{
		Dir:       dir,
		SessionID: req.SessionID,
		Fork:      req.ForkSession,
		Guard:     guardPrompt,
		RawName:   mcpToolName(req.MCPServers),
		Tools:     tools,
		Switch:    switching(req),
	}
	if req.Permission == agentcli.PermissionPlan {
		ac.Options = append(ac.Options, acp.Option{ID: "mode", Value: "plan"})
	}
	if model != "" {
		ac.Options = append(ac.Options, acp.Option{ID: "model", Value: model})
	}
	if req.Effort != "" {
		// The model's variant of that name, as --variant selects it; the
		// option exists only for a model with variants.
		ac.Options = append(ac.Options, acp.Option{ID: "effort", Value: string(req.Effort), IfOffered: true})
	}
	if len(req.MCPServers) > 0 {
		ac.MCPServers = acp.MCPServers(req.MCPServers, nil)
	}
	if req.SystemPrompt != "" {
		if v := r.Lookup("OPENCODE_CONFIG"); v != "" {
			r.Warn("live: system prompt with OPENCODE_CONFIG", "agentcli: OPENCODE_CONFIG is already set; prepending the system prompt to the first prompt instead",
				"backend", Name, "OPENCODE_CONFIG", v)
			if req.SessionID == "" {
				ac.FirstPrefix = req.SystemPrompt + "\n\n"
			}
		} else {
			tmp, err := r.TempDir()
			if err != nil {
				return nil, err
			}
			path, err := writeSystemPrompt(tmp, req.SystemPrompt)
			if err != nil {
				return nil, err
			}
			env = append(env[:len(env):len(env)], "OPENCODE_CONFIG="+path)
		}
	}
	args := liveArgs(req)
	return livesession.Start(ctx, livesession.Config{
		Backend:   Name,
		Path:      r.Path,
		Options:   *r.Options,
		Logger:    r.Logger,
		Args:      args,
		Env:       env,
		Dir:       dir,
		Request:   req,
		Proto:     func(h *livesession.Host) livesession.Proto { return acp.New(h, ac) },
		Cleanup:   r.Cleanup,
		Wire:      r.LiveWireLog(Name, args, ac.Record(req.MCPServers)),
		Redactor:  r.Redactor(),
		HostTools: r.HostTools(),
		Hooks:     r.Hooks(),
		Errors:    r.Errors(),
	})
}

// replaySession replays a live session's wire log, with the protocol
// configured as the log recorded it (the options it set, the model among
// them, as resolved then) and switching as the session did.
func replaySession(r *driver.Run, proto json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	ac := acp.Config{Guard: guardPrompt, Tools: tools, Switch: switching(r.Req)}
	servers, err := acp.ReadRecorded(proto, &ac)
	if err != nil {
		return func(yield func(agentcli.Event, error) bool) {
			yield(agentcli.Event{}, &agentcli.ParseError{Backend: Name, Err: err})
		}
	}
	ac.RawName = mcpToolName(servers)
	return livesession.Replay(livesession.Config{Backend: Name, Options: *r.Options, Request: r.Req, Errors: r.Errors(),
		Proto: func(h *livesession.Host) livesession.Proto { return acp.New(h, ac) }}, log)
}
