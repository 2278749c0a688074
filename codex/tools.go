package codex

// Tool lists and permission modes on codex's command line.
//
// codex 0.169.0 has no allow list of tools, but a switch for each family
// of tools that act (checked by real runs: the tools a model request
// offers):
//
//	Bash       exec_command, write_stdin   features.shell_tool = false
//	Read       view_image                  features.view_image = false
//	WebSearch  web_search                  web_search = "disabled"
//	Task       multi_agent_v1__*           features.multi_agent = false, features.multi_agent_v2 = false
//
// With an allow list, the goal and image-generation tools (get_goal,
// create_goal, update_goal; image_generation), which no canonical name
// covers, are switched off too. Tools that only talk to the user or plan
// (request_user_input, update_plan, tool_search) stay.
//
// codex's patch tool (apply_patch: Edit, Write) has no switch. It is held
// back by the read-only sandbox, in which codex refuses to apply a patch
// and a command can read but not write. An allow list keeps it when it
// allows Edit, Write or Bash (a shell that may run can write files
// anyway), and otherwise runs in the read-only sandbox; disallowing Edit
// or Write while the shell may run fails with an
// *agentcli.UnsupportedError. Patterns
// ("Bash(git *)") are not supported: codex has no per-command rules that
// bind a run.
//
// MCP rules ("mcp__NAME", "mcp__NAME__TOOL") become the enabled_tools and
// disabled_tools of the request's servers; a server of the request that
// no allowed rule names is left out of the run.
//
// The sandbox, per mode, in a one-shot run (codex exec):
//
//	bypass, no allow list   --dangerously-bypass-approvals-and-sandbox
//	deny (the zero value)   --sandbox=read-only: commands and reads run, writes fail
//	plan                    --sandbox=read-only
//	an allow list           --dangerously-bypass-approvals-and-sandbox when it keeps
//	                        Edit or Write (its tools are approved in advance), else
//	                        --sandbox=read-only
//
// Live sessions (codex app-server; PermissionAsk) take the same switches
// as thread/start config, and the session answers approval requests from
// the lists (live.Host.Ask).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// toolSwitch is one family of codex tools and the config that takes it
// away.
type toolSwitch struct {
	canonical string
	off       [][2]string // config key, TOML value
}

// toolSwitches lists the families that have a switch.
var toolSwitches = []toolSwitch{
	{agentcli.ToolNameBash, [][2]string{{"features.shell_tool", "false"}}},
	{agentcli.ToolNameRead, [][2]string{{"features.view_image", "false"}}},
	{agentcli.ToolNameWebSearch, [][2]string{{"web_search", `"disabled"`}}},
	{agentcli.ToolNameTask, [][2]string{{"features.multi_agent", "false"}, {"features.multi_agent_v2", "false"}}},
}

// listOff is what an allow list switches off whatever it holds.
var listOff = [][2]string{{"features.goals", "false"}, {"features.image_generation", "false"}}

// editTools are the canonical names of what codex's patch tool does.
var editTools = []string{agentcli.ToolNameEdit, agentcli.ToolNameWrite, agentcli.ToolNameMultiEdit, agentcli.ToolNameDelete}

// toolPolicy is how codex is held to a request's tool lists and mode.
type toolPolicy struct {
	// overrides are config keys and TOML values (-c KEY=VALUE on the
	// command line; thread/start config in a live session).
	overrides [][2]string
	// readOnly selects the read-only sandbox instead of none.
	readOnly bool
	// servers are the request's MCP servers that stay, with their
	// enabled and disabled tools.
	servers []mcpServer
}

// mcpServer is one MCP server of the request, as the tool lists leave it.
type mcpServer struct {
	agentcli.MCPServer
	enabled, disabled []string // nil enabled: every tool
}

// policyFor returns the tool policy of req. It is pure. The error is an
// *agentcli.UnsupportedError for a list codex cannot enforce.
func policyFor(req *agentcli.Request) (toolPolicy, error) { return policyForHost(req, false) }

// policyForHost is policyFor for a request whose servers include
// agentcli's own (host, driver.HostTools), which the tool lists leave
// alone.
func policyForHost(req *agentcli.Request, host bool) (toolPolicy, error) {
	var p toolPolicy
	allowed, mcpAllowed, err := toolLists(req.AllowedTools)
	if err != nil {
		return p, err
	}
	disallowed, mcpDenied, err := toolLists(req.DisallowedTools)
	if err != nil {
		return p, err
	}
	list := len(req.AllowedTools) > 0
	on := func(canonical ...string) bool {
		for _, c := range canonical {
			if disallowed[c] {
				return false
			}
		}
		if !list {
			return true
		}
		return slices.ContainsFunc(canonical, func(c string) bool { return allowed[c] })
	}
	for _, s := range toolSwitches {
		if !on(s.canonical) {
			p.overrides = append(p.overrides, s.off...)
		}
	}
	if list {
		p.overrides = append(p.overrides, listOff...)
	}
	// The patch tool stays where the list allows Edit or Write, or the
	// shell, which can write files anyway.
	edit := on(editTools...) || on(agentcli.ToolNameBash)
	if slices.ContainsFunc(editTools, func(c string) bool { return disallowed[c] }) {
		edit = false // any of them taken away takes the patch tool away
	}
	mode := driver.Mode(req)
	switch {
	case mode == agentcli.PermissionPlan:
		p.readOnly = true
	case mode == agentcli.PermissionDeny && !list:
		p.readOnly = true
	case !edit:
		if on(agentcli.ToolNameBash) && mode != agentcli.PermissionAsk {
			return p, unsupportedTools("codex cannot take its patch tool (Edit, Write) away while its shell tool (Bash) runs: take Bash away too, or use PermissionPlan")
		}
		p.readOnly = mode != agentcli.PermissionAsk
	}
	p.servers = mcpServers(req, host, list, mcpAllowed, mcpDenied)
	return p, nil
}

// unsupportedTools is the error of tool lists codex cannot enforce.
func unsupportedTools(reason string) error {
	return &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools", Reason: reason}
}

// toolLists reads a tool list: the canonical names of the tools it names
// and, by lowercased MCP server, the server's tools it names ("" for the
// whole server).
func toolLists(rules []string) (names map[string]bool, mcp map[string][]string, err error) {
	names, mcp = map[string]bool{}, map[string][]string{}
	for _, t := range rules {
		r, err := driver.ParseRule(t)
		if err != nil {
			// validate refuses it first; here it names no tool.
			r = driver.Rule{Text: t, Name: "\x00"}
		}
		switch {
		case r.HasPattern:
			return nil, nil, unsupportedTools(fmt.Sprintf("%q: codex has no per-call rules (patterns)", r.Text))
		case r.IsMCP():
			k := strings.ToLower(r.MCPServer)
			mcp[k] = append(mcp[k], r.MCPTool)
			continue
		}
		c := driver.CanonicalName(r.Name)
		if rs := tools.Resolve(r.Name); c == "" && len(rs) > 0 {
			c, _ = tools.Canonical(rs[0])
		}
		if c == "" {
			// A tool codex does not have: allowing it grants nothing,
			// and nothing of that name can run.
			continue
		}
		names[c] = true
	}
	return names, mcp, nil
}

// mcpServers returns the request's MCP servers as the tool lists leave
// them (list: an allowed list was given), agentcli's own (host) untouched.
func mcpServers(req *agentcli.Request, host, list bool, mcpAllowed, mcpDenied map[string][]string) []mcpServer {
	var out []mcpServer
	for _, s := range req.MCPServers {
		if host && s.Name == agentcli.HostServerName {
			out = append(out, mcpServer{MCPServer: s})
			continue
		}
		k := strings.ToLower(s.Name)
		en, inList := mcpAllowed[k]
		if list && !inList {
			continue // not allowed at all
		}
		ms := mcpServer{MCPServer: s}
		if inList && !slices.Contains(en, "") {
			ms.enabled = en
		}
		if dis, ok := mcpDenied[k]; ok {
			if slices.Contains(dis, "") {
				continue // the whole server is taken away
			}
			ms.disabled = dis
		}
		out = append(out, ms)
	}
	return out
}

// checkTools fails with an *agentcli.UnsupportedError when codex cannot
// enforce req's tool lists.
func checkTools(req *agentcli.Request) error {
	_, err := policyFor(req)
	return err
}

// restrict returns req, or a copy of it without the MCP servers its tool
// lists take away, so that no file or override of the run names them.
func restrict(req *agentcli.Request) *agentcli.Request { return restrictHost(req, false) }

// restrictHost is restrict for a request whose servers include
// agentcli's own (host).
func restrictHost(req *agentcli.Request, host bool) *agentcli.Request {
	pol, err := policyForHost(req, host)
	if err != nil || len(pol.servers) == len(req.MCPServers) {
		return req
	}
	c := *req
	c.MCPServers = nil
	for _, s := range pol.servers {
		c.MCPServers = append(c.MCPServers, s.MCPServer)
	}
	return &c
}

// args returns the -c overrides of p: the switches, then each server's
// enabled and disabled tools.
func (p toolPolicy) args() []string {
	var args []string
	for _, o := range p.overrides {
		args = append(args, "-c", o[0]+"="+o[1])
	}
	for _, s := range p.servers {
		if s.enabled != nil {
			args = append(args, "-c", "mcp_servers."+s.Name+".enabled_tools="+tomlArray(s.enabled))
		}
		if s.disabled != nil {
			args = append(args, "-c", "mcp_servers."+s.Name+".disabled_tools="+tomlArray(s.disabled))
		}
	}
	return args
}

// config returns p's overrides as thread/start config entries (values
// as JSON, which codex turns into TOML), for a live session.
func (p toolPolicy) config() map[string]any {
	cfg := map[string]any{}
	for _, o := range p.overrides {
		var v any = o[1] == "true"
		if strings.HasPrefix(o[1], `"`) {
			v = strings.Trim(o[1], `"`)
		}
		cfg[o[0]] = v
	}
	for _, s := range p.servers {
		if s.enabled != nil {
			cfg["mcp_servers."+s.Name+".enabled_tools"] = s.enabled
		}
		if s.disabled != nil {
			cfg["mcp_servers."+s.Name+".disabled_tools"] = s.disabled
		}
	}
	return cfg
}
