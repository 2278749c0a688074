package gemini

// Tool lists: gemini 0.61.0's tools settings, in the private settings
// overlay of the run (overlayHome), checked by real runs:
//
//	tools.core     the built-in tools that exist at all (an allow list)
//	tools.allowed  tools that run without confirmation (approved in advance)
//	tools.exclude  tools that never exist (takes precedence over both)
//
// An allow list becomes tools.core and tools.allowed, each rule mapped to
// gemini's names (Bash is run_shell_command, Read is read_file and
// read_many_files, ...; a name gemini does not know stays as it is); a
// disallow list becomes tools.exclude. A shell rule with a pattern, in
// Claude Code's prefix syntax "Bash(git *)" or "Bash(git:*)", is
// run_shell_command(git), which gemini matches against every command of a
// command line by prefix; other patterns are refused with an
// *agentcli.UnsupportedError. MCP rules ("mcp__NAME", "mcp__NAME__TOOL")
// become the servers' includeTools and excludeTools; with an allow list,
// only the MCP servers its rules name are started at all
// (--allowed-mcp-server-names; a server of the request that no rule names
// is left out).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// noServers is a server name no request can use (driver.IsMCPName refuses
// "."): --allowed-mcp-server-names with it alone starts no MCP server.
const noServers = "agentcli.none"

// toolLists is what gemini makes of a request's tool lists.
type toolLists struct {
	core, allowed, exclude []string
	// include and excludeMCP are the MCP servers' includeTools and
	// excludeTools, by server name as the request spells it.
	include, excludeMCP map[string][]string
	// servers, with an allow list, are the MCP servers that may start
	// (lower-cased names); nil without one.
	servers map[string]bool
	// host: the request has agentcli's own server (driver.HostTools),
	// which the lists leave alone, and hostTools are the names its tools
	// may have.
	host      bool
	hostTools []string
}

// geminiTools maps a rule to gemini's tool rules. It returns the
// *agentcli.UnsupportedError of a pattern gemini cannot hold.
func geminiTools(r driver.Rule) ([]string, error) {
	names := tools.Resolve(r.Name)
	if len(names) == 0 {
		names = []string{r.Name}
	}
	if !r.HasPattern {
		return names, nil
	}
	prefix, ok := shellPrefix(r)
	if !ok {
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools",
			Reason: fmt.Sprintf(`%q: gemini takes patterns only for the shell, as command prefixes ("Bash(git *)")`, r.Text)}
	}
	return []string{"run_shell_command(" + prefix + ")"}, nil
}

// shellPrefix returns the command prefix of a shell rule with a pattern
// in Claude Code's prefix syntax: "PREFIX *" or "PREFIX:*", PREFIX without
// further wildcards.
func shellPrefix(r driver.Rule) (string, bool) {
	if driver.CanonicalName(r.Name) != agentcli.ToolNameBash && !strings.EqualFold(r.Name, "run_shell_command") {
		return "", false
	}
	p, ok := strings.CutSuffix(r.Pattern, " *")
	if !ok {
		p, ok = strings.CutSuffix(r.Pattern, ":*")
	}
	p = strings.TrimSpace(p)
	if !ok || p == "" || strings.ContainsAny(p, "*()") {
		return "", false
	}
	return p, true
}

// listsFor returns what gemini makes of req's tool lists.
func listsFor(req *agentcli.Request) (toolLists, error) {
	l := toolLists{include: map[string][]string{}, excludeMCP: map[string][]string{},
		host: driver.IsHostServer(req, agentcli.HostServerName), hostTools: driver.HostToolNames(req)}
	if len(req.AllowedTools) > 0 {
		l.servers = map[string]bool{}
	}
	for _, t := range req.AllowedTools {
		r, err := driver.ParseRule(t)
		if err != nil {
			continue // validate refuses it
		}
		if r.IsMCP() {
			l.servers[strings.ToLower(r.MCPServer)] = true
			if r.MCPTool != "" {
				l.include[strings.ToLower(r.MCPServer)] = append(l.include[strings.ToLower(r.MCPServer)], r.MCPTool)
			}
			continue
		}
		names, err := geminiTools(r)
		if err != nil {
			return l, err
		}
		for _, n := range names {
			if !slices.Contains(l.core, n) {
				l.core = append(l.core, n)
			}
		}
	}
	l.allowed = slices.Clone(l.core)
	for _, t := range req.DisallowedTools {
		r, err := driver.ParseRule(t)
		if err != nil {
			continue
		}
		if r.IsMCP() {
			l.excludeMCP[strings.ToLower(r.MCPServer)] = append(l.excludeMCP[strings.ToLower(r.MCPServer)], r.MCPTool)
			continue
		}
		names, err := geminiTools(r)
		if err != nil {
			return l, err
		}
		l.exclude = append(l.exclude, names...)
	}
	for k, v := range l.include {
		if slices.Contains(v, "") {
			delete(l.include, k)
		}
	}
	return l, nil
}

// checkTools fails with an *agentcli.UnsupportedError when gemini cannot
// hold req's tool lists.
func checkTools(req *agentcli.Request) error {
	_, err := listsFor(req)
	return err
}

// settings adds l's settings to s (a settings document).
func (l toolLists) settings(s map[string]any) {
	t := map[string]any{}
	if len(l.core) > 0 {
		t["core"], t["allowed"] = l.core, l.allowed
	}
	if l.servers != nil && len(l.core) == 0 {
		// An allow list of MCP tools only: no built-in tool exists. An
		// empty core list would mean every tool; a name gemini has no
		// tool of means none.
		t["core"] = []string{noServers}
	}
	if len(l.exclude) > 0 {
		t["exclude"] = l.exclude
	}
	if l.host {
		// agentcli's own server decides its calls itself
		// (driver.HostTools): its tools run without confirmation, and
		// an allow list's enforcement (tools.core denies every other
		// tool, MCP tools included, above the priority of a trusted
		// server) leaves them alone. Each is named in full: gemini
		// 0.61.0 checks an MCP call's policy with the server's name
		// prefixed ("mcp_agentcli"), which no server-wide rule
		// ("mcp_agentcli_*", a trusted server's) matches; and in a
		// live session the server comes through ACP, not the settings.
		allowed, _ := t["allowed"].([]string)
		allowed = slices.Clip(allowed)
		for _, n := range l.hostTools {
			allowed = append(allowed, "mcp_"+agentcli.HostServerName+"_"+n)
		}
		t["allowed"] = allowed
	}
	if len(t) > 0 {
		s["tools"] = t
	}
}

// keeps reports whether the MCP server name may start under l.
func (l toolLists) keeps(name string) bool {
	if l.host && name == agentcli.HostServerName {
		return true
	}
	if slices.Contains(l.excludeMCP[strings.ToLower(name)], "") {
		return false
	}
	return l.servers == nil || l.servers[strings.ToLower(name)]
}

// serverNames returns the value of --allowed-mcp-server-names for the
// request's servers under l, or "" for no such flag: with an allow list,
// only the servers it names (none at all: noServers); without one, the
// request's servers, when it has any.
func (l toolLists) serverNames(req *agentcli.Request) string {
	var names []string
	for _, s := range req.MCPServers {
		if l.keeps(s.Name) {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 && (l.servers != nil || len(req.MCPServers) > 0) {
		return noServers
	}
	return strings.Join(names, ",")
}
