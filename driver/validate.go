package driver

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
)

// validate checks req before anything starts, so that a mistake is reported
// as what it is (an *agentcli.RequestError naming the field, or an
// *agentcli.UnsupportedError) rather than as a failure of the CLI: the
// checks every backend makes (CheckRequest), then the CLI's own rules
// (Spec.Validate). oneShot is false for a live session, whose prompts come
// turn by turn.
func (b *Backend) validate(req *agentcli.Request, oneShot bool) error {
	if err := CheckRequest(b.spec.Name, b.spec.Caps, req, oneShot); err != nil {
		return err
	}
	if b.spec.Validate != nil {
		if err := b.spec.Validate(req); err != nil {
			return err
		}
	}
	return nil
}

// CheckRequest makes the checks every backend makes on req before
// anything starts, for a backend named backend with capabilities caps:
// the prompt (when oneShot; a live session's come turn by turn, see
// CheckPrompt), NUL bytes, the environment's form, negative limits, Dir,
// the permission mode (among caps.PermissionModes, the zero value being
// deny; OnPermission with PermissionAsk), tool lists (caps.ToolFilter)
// and the settings (MCP servers, output schema, effort,
// ...). It returns an *agentcli.RequestError naming the field or an
// *agentcli.UnsupportedError. It is the one validation of a Request: the
// runner's backends and agentclitest's scripted backend both call it, so
// that a request a test passes is one production takes.
func CheckRequest(backend string, caps agentcli.Capabilities, req *agentcli.Request, oneShot bool) error {
	bad := func(field, format string, args ...any) error {
		return &agentcli.RequestError{Backend: backend, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if oneShot {
		if err := CheckPrompt(backend, req.Prompt); err != nil {
			return err
		}
	}
	if err := checkForm(bad, req); err != nil {
		return err
	}
	switch m := Mode(req); m {
	case agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan:
		if !slices.Contains(caps.PermissionModes, m) {
			ue := &agentcli.UnsupportedError{Backend: backend, Feature: "permission mode " + string(m)}
			if req.Permission == "" {
				ue.Reason = "the zero value of Request.Permission; this backend cannot refuse tool calls, so choose a mode it has explicitly"
			}
			return ue
		}
		if m == agentcli.PermissionAsk && req.OnPermission == nil {
			return bad("OnPermission", "required with PermissionAsk")
		}
	default:
		return bad("Permission", "unknown mode %q", m)
	}
	if (len(req.AllowedTools) > 0 || len(req.DisallowedTools) > 0) && !caps.ToolFilter {
		// A restriction the CLI cannot enforce is never just a warning.
		return &agentcli.UnsupportedError{Backend: backend, Feature: "allowed/disallowed tools"}
	}
	if err := checkSettings(backend, req); err != nil {
		return err
	}
	if strings.IndexByte(req.NewSessionID, 0) >= 0 {
		return bad("NewSessionID", "contains a NUL byte")
	}
	if err := checkManage(backend, caps, req, !oneShot); err != nil {
		return err
	}
	if err := checkHost(backend, caps, req); err != nil {
		return err
	}
	if err := checkAttachments(backend, caps, req, oneShot); err != nil {
		return err
	}
	return checkHooks(backend, caps, req)
}

// checkForm checks the request's strings (no NUL byte: exec fails with
// EINVAL on one in argv or the environment; Env entries KEY=value), its
// durations and limits (not negative) and Dir (a directory).
func checkForm(bad func(field, format string, args ...any) error, req *agentcli.Request) error {
	nul := func(field, s string) error {
		if strings.IndexByte(s, 0) >= 0 {
			return bad(field, "contains a NUL byte")
		}
		return nil
	}
	for _, f := range []struct{ name, val string }{
		{"Model", req.Model}, {"SessionID", req.SessionID}, {"Dir", req.Dir},
	} {
		if err := nul(f.name, f.val); err != nil {
			return err
		}
	}
	lists := []struct {
		name string
		vals []string
	}{{"AllowedTools", req.AllowedTools}, {"DisallowedTools", req.DisallowedTools}, {"ExtraArgs", req.ExtraArgs}}
	for _, l := range lists {
		for i, v := range l.vals {
			if err := nul(fmt.Sprintf("%s[%d]", l.name, i), v); err != nil {
				return err
			}
		}
	}
	for i, kv := range req.Env {
		field := fmt.Sprintf("Env[%d]", i)
		if err := nul(field, kv); err != nil {
			return err
		}
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return bad(field, "not of the form KEY=value")
		}
	}
	if req.MaxTurns < 0 {
		return bad("MaxTurns", "negative (%d)", req.MaxTurns)
	}
	if req.Timeout < 0 {
		return bad("Timeout", "negative (%v)", req.Timeout)
	}
	if req.PermissionTimeout < 0 {
		return bad("PermissionTimeout", "negative (%v)", req.PermissionTimeout)
	}
	if req.Dir != "" {
		fi, err := os.Stat(req.Dir)
		switch {
		case err != nil:
			return bad("Dir", "%v", err)
		case !fi.IsDir():
			return bad("Dir", "%s is not a directory", req.Dir)
		}
	}
	return nil
}

// Mode returns the permission mode of req: Request.Permission, with the
// zero value meaning agentcli.PermissionDeny.
func Mode(req *agentcli.Request) agentcli.PermissionMode {
	if req.Permission == "" {
		return agentcli.PermissionDeny
	}
	return req.Permission
}

// CheckPrompt rejects a prompt no CLI can answer: empty or only white
// space.
func CheckPrompt(backend, prompt string) error {
	if strings.TrimSpace(prompt) == "" {
		return &agentcli.RequestError{Backend: backend, Field: "Prompt", Reason: "empty or only white space"}
	}
	return nil
}

// CheckSessionPrompt rejects a Request.Prompt given to StartSession: a
// session starts with no turn, so there would be nowhere to stream its
// events; the first prompt goes to Session.Run or Session.Stream.
func CheckSessionPrompt(backend string, req *agentcli.Request) error {
	if req != nil && req.Prompt != "" {
		return &agentcli.RequestError{Backend: backend, Field: "Prompt",
			Reason: "StartSession runs no turn: leave it empty and send the first prompt with Session.Run or Session.Stream"}
	}
	return nil
}

// limits are the options of unsupported that restrict what the agent may
// do, which are never ignored (see warnUnsupported).
var limits = map[string]bool{"max turns": true, "spending cap (max budget)": true}

// unsupported lists the options set in req that caps cannot honour, as
// human-readable names, in a stable order.
func unsupported(caps agentcli.Capabilities, req *agentcli.Request) []string {
	var out []string
	if req.SessionID != "" && !caps.Resume {
		out = append(out, "session id (resume)")
	}
	if req.MaxTurns > 0 && !caps.MaxTurns {
		out = append(out, "max turns")
	}
	if req.SystemPrompt != "" && caps.SystemPrompt == agentcli.SystemPromptNone {
		out = append(out, "system prompt")
	}
	if len(req.MCPServers) > 0 && !caps.MCP {
		out = append(out, "MCP servers")
	}
	if len(req.OutputSchema) > 0 && !caps.StructuredOutput {
		out = append(out, "structured output (output schema)")
	}
	if req.Effort != "" && !slices.Contains(caps.Efforts, req.Effort) {
		out = append(out, "effort "+string(req.Effort))
	}
	if req.FallbackModel != "" && !caps.FallbackModel {
		out = append(out, "fallback model")
	}
	if req.MaxBudgetUSD > 0 && !caps.MaxBudget {
		out = append(out, "spending cap (max budget)")
	}
	return out
}

// dropUnsupported returns req, or a copy of it without the settings
// (MCP servers, output schema, effort, fallback model, budget) the
// backend does not support, so that an ignored setting is ignored
// whatever the backend's Prepare would make of it.
func (b *Backend) dropUnsupported(req *agentcli.Request) *agentcli.Request {
	caps := b.spec.Caps
	drop := len(req.MCPServers) > 0 && !caps.MCP ||
		len(req.OutputSchema) > 0 && !caps.StructuredOutput ||
		req.Effort != "" && !slices.Contains(caps.Efforts, req.Effort) ||
		req.FallbackModel != "" && !caps.FallbackModel ||
		req.MaxBudgetUSD > 0 && !caps.MaxBudget
	if !drop {
		return req
	}
	c := *req
	if !caps.MCP {
		c.MCPServers = nil
	}
	if !caps.StructuredOutput {
		c.OutputSchema = nil
	}
	if !slices.Contains(caps.Efforts, c.Effort) {
		c.Effort = ""
	}
	if !caps.FallbackModel {
		c.FallbackModel = ""
	}
	if !caps.MaxBudget {
		c.MaxBudgetUSD = 0
	}
	return &c
}

// warnUnsupported logs a warning for each option in req the backend
// ignores, once per Backend and option (see Run.Warn), or, under
// Options.Strict, fails on the first.
//
// A limit the CLI cannot enforce (Request.MaxTurns, MaxBudgetUSD) is an
// *UnsupportedError whatever Strict says: ignoring it would let the agent
// do more than the caller allowed.
func (b *Backend) warnUnsupported(req *agentcli.Request) error {
	for _, o := range unsupported(b.spec.Caps, req) {
		if b.opts.Strict || limits[o] {
			return &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: o}
		}
		r := Run{Logger: b.opts.Logger, warned: &b.warned}
		r.Warn(o, fmt.Sprintf("agentcli: %s does not support %s; ignored", b.spec.Name, o), "backend", b.spec.Name)
	}
	return nil
}
