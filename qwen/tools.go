package qwen

// Tool lists: qwen 0.24.4's own knobs, checked by real runs (conformance
// TestToolLists):
//
//	--core-tools=NAME      the built-in tools that exist at all (an allow list)
//	--allowed-tools=RULE   calls that run without asking (approved in advance)
//	--exclude-tools=RULE   tools that never exist, and calls that are always refused
//	--allowed-mcp-server-names=NAME   the only MCP servers started
//
// An allow list becomes --core-tools (each rule's tool, in qwen's name:
// Bash is run_shell_command, Read is read_file, ...) and --allowed-tools
// (each rule, in qwen's rule syntax, which is Claude Code's: "Bash(git *)"
// approves the commands starting with git); a disallow list becomes
// --exclude-tools. MCP rules ("mcp__NAME", "mcp__NAME__TOOL") keep their
// names, which are qwen's own; with an allow list only the MCP servers its
// rules name are started. Qwen takes patterns for the shell (command
// prefixes), file tools (paths) and web_fetch (domains), so a rule is
// passed as it is. A bypass run whose allow list holds a pattern runs in
// qwen's default mode as one turn of a live session (see approvalMode):
// yolo would run every command, and the session refuses what the list
// does not allow.
//
// qwen adds the user's settings to these lists (tools.core, tools.allowed,
// tools.exclude, permissions.*): a user's own settings can widen the
// built-in tools an allow list leaves, as they can widen any claude or
// gemini configuration.

import (
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// noTools is a name no qwen tool or MCP server has (driver.IsMCPName
// refuses "."): a list holding it alone allows nothing.
const noTools = "agentcli.none"

// toolLists is what qwen makes of a request's tool lists.
type toolLists struct {
	core, allowed, exclude []string
	// servers, with an allow list, are the MCP servers that may start
	// (lower-cased names); nil without one.
	servers map[string]bool
}

// qwenNames returns qwen's names of a rule's tool (a canonical name in
// any case maps to qwen's tools of it; any other name is kept).
func qwenNames(name string) []string {
	if names := tools.Resolve(name); len(names) > 0 {
		return names
	}
	return []string{name}
}

// qwenRule returns rule in qwen's syntax: the tool named as qwen names it
// (the first of its names: Read is read_file, which qwen's rules take as
// all of its reading tools), the pattern kept.
func qwenRule(r driver.Rule) []string {
	var out []string
	for _, n := range qwenNames(r.Name) {
		if r.HasPattern {
			n += "(" + r.Pattern + ")"
		}
		out = append(out, n)
	}
	return out
}

// listsFor returns what qwen makes of req's tool lists. Every rule
// driver.ParseRule accepts is one qwen holds, so it fails only for rules
// validate refuses anyway.
func listsFor(req *agentcli.Request) (toolLists, error) {
	var l toolLists
	if len(req.AllowedTools) > 0 {
		l.servers = map[string]bool{}
	}
	for _, t := range req.AllowedTools {
		r, err := driver.ParseRule(t)
		if err != nil {
			return l, nil // validate refuses it (CheckToolRules)
		}
		if r.IsMCP() {
			l.servers[strings.ToLower(r.MCPServer)] = true
			l.allowed = append(l.allowed, r.Text)
			continue
		}
		for _, n := range qwenNames(r.Name) {
			if !slices.Contains(l.core, n) {
				l.core = append(l.core, n)
			}
		}
		l.allowed = append(l.allowed, qwenRule(r)...)
	}
	if l.servers != nil && len(l.core) == 0 {
		// An allow list of MCP tools only: no built-in tool exists. An
		// empty list would mean every tool.
		l.core = []string{noTools}
	}
	for _, t := range req.DisallowedTools {
		r, err := driver.ParseRule(t)
		if err != nil {
			return l, nil
		}
		if r.IsMCP() {
			l.exclude = append(l.exclude, r.Text)
			continue
		}
		l.exclude = append(l.exclude, qwenRule(r)...)
	}
	return l, nil
}

// serverNames returns the value of --allowed-mcp-server-names, or "" for
// none: with an allow list, the request's MCP servers it names (noTools
// for none); without one, no restriction.
func (l toolLists) serverNames(req *agentcli.Request) string {
	if l.servers == nil {
		return ""
	}
	var names []string
	for _, s := range req.MCPServers {
		if l.servers[strings.ToLower(s.Name)] || s.Name == agentcli.HostServerName && hostServer(req) {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return noTools
	}
	return strings.Join(names, ",")
}

// toolArgs returns the flags of req's tool lists (see the top of this
// file). oneShot adds --exclude-tools for the tools that wait for a
// person (ask_user_question, exit_plan_mode): a one-shot run has nobody
// to answer them, and qwen would wait on its closed stdin (a run whose
// OnQuestion gets ask_user_question is a live turn, and keeps it).
// agentcli's own MCP server is approved in advance and kept whatever the
// allow list says (hosttools.go).
func toolArgs(req *agentcli.Request, oneShot bool) []string {
	l, _ := listsFor(req)
	var args []string
	for _, n := range l.core {
		args = append(args, "--core-tools="+n)
	}
	for _, r := range l.allowed {
		args = append(args, "--allowed-tools="+r)
	}
	for _, r := range l.exclude {
		args = append(args, "--exclude-tools="+r)
	}
	if hostServer(req) {
		// agentcli's server decides each call itself (hosttools.go).
		args = append(args, "--allowed-tools=mcp__"+agentcli.HostServerName)
	}
	if oneShot {
		if !asksNative(req) {
			args = append(args, "--exclude-tools="+askTool)
		}
		args = append(args, "--exclude-tools=exit_plan_mode")
	}
	if names := l.serverNames(req); names != "" {
		args = append(args, "--allowed-mcp-server-names="+names)
	}
	return args
}
