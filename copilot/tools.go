package copilot

// Tool lists: copilot 1.0.102's own flags, checked by real runs (the tools
// a model request offers, and what happens to a call):
//
//	--available-tools=A,B   the only tools the model sees (a name copilot does not
//	                        know is ignored; an MCP server's name stands for all its
//	                        tools, NAME-TOOL for one)
//	--excluded-tools=A,B    tools the model never sees (the same names)
//	--allow-tool=RULE       approved in advance: shell, shell(CMD), shell(PREFIX:*),
//	                        write, url, NAME, NAME(TOOL) for an MCP server's tools
//	--deny-tool=RULE        refused at call time, even under --allow-all
//
// An allow list becomes --available-tools (each rule mapped to copilot's
// names: Bash is bash and its helpers read_bash, write_bash, list_bash and
// stop_bash, Read is view, Write is create, Edit is edit, ...; a name the
// table does not know is passed as the CLI's own) and, for the tools
// that ask, --allow-tool: its tools are approved in advance, in every
// mode. Under bypass without a pattern that is --allow-all over the listed
// tools alone; with a pattern, --allow-all would approve every command,
// so the listed tools are approved one by one instead and the paths and
// URLs with --allow-all-paths and --allow-all-urls. A shell rule with a
// pattern in Claude Code's syntax, "Bash(git *)" or "Bash(git:*)", is
// shell(git:*), which matches git and its subcommands but not gitea, on
// every command of a command line; "Bash(git status)" is shell(git
// status). Other patterns, and patterns holding a comma (copilot splits
// flag values at commas), are refused with an *agentcli.UnsupportedError.
//
// A disallow list becomes --excluded-tools and --deny-tool (a pattern:
// --deny-tool alone, the shell staying offered for other commands).
//
// MCP rules: "mcp__NAME" is NAME, "mcp__NAME__TOOL" is NAME-TOOL in the
// tool flags and NAME(TOOL) in the permission rules; the request's servers
// get the tools an allow list names as their "tools" filter, and a server
// of the request that no allowed rule names is left out of the run. A
// server whose name is one of copilot's own tools' cannot be named (its
// name would stand for the tool) and is refused.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// toolPolicy is what copilot makes of a request's tool lists and
// permission mode.
type toolPolicy struct {
	// available and excluded are --available-tools and --excluded-tools
	// (nil: no flag); allow and deny the --allow-tool and --deny-tool
	// rules.
	available, excluded, allow, deny []string
	// allowAll is --allow-all; allowPathsURLs is --allow-all-paths and
	// --allow-all-urls without --allow-all-tools.
	allowAll, allowPathsURLs bool
	// servers holds, with an allow list, the "tools" filter of each of
	// the request's servers it names (lower-cased name; nil means every
	// tool); a server not in it is left out. Nil without an allow list.
	servers map[string][]string
	// drop holds the request's servers a disallowed rule takes away
	// entirely (lower-cased names).
	drop map[string]bool
	// host says that the server named agentcli.HostServerName is
	// agentcli's own (addHost).
	host bool
}

// shellFamily are the names of copilot's shell tools and their helpers
// (on Linux the bash ones; copilot 1.0.102 knows the powershell ones too,
// and reports an unknown name in a tool list to the model as a notice).
var shellFamily = []string{"bash", "read_bash", "list_bash", "stop_bash",
	"powershell", "read_powershell", "list_powershell", "stop_powershell"}

// builtin reports whether name is one of copilot's own tools (the table's
// names and the tools it offers that have no canonical name).
func builtin(name string) bool {
	n := strings.ToLower(name)
	if _, ok := tools[n]; ok {
		return true
	}
	switch n {
	case "sql", "session_store_sql", "fetch_copilot_cli_documentation", "read_agent", "list_agents",
		"write_agent", "task_complete", "think", "lsp", "report_intent", "update_todo":
		return true
	}
	return false
}

// copilotNames maps a rule without a pattern to copilot's tool names.
func copilotNames(r driver.Rule) []string {
	names := tools.Resolve(r.Name)
	if len(names) == 0 {
		return []string{r.Name} // the CLI's own name
	}
	for _, n := range names {
		if n == "bash" || n == "powershell" {
			for _, f := range shellFamily {
				if !slices.Contains(names, f) {
					names = append(names, f)
				}
			}
			break
		}
	}
	slices.Sort(names)
	return names
}

// permissionKind returns copilot's permission rule of a tool that asks
// before it runs, or "".
func permissionKind(name string) string {
	switch {
	case slices.Contains(shellFamily, name) || name == "write_bash" || name == "write_powershell":
		return "shell"
	case name == "create" || name == "edit" || name == "str_replace_editor" || name == "apply_patch":
		return "write"
	case name == "web_fetch":
		return "url"
	}
	return ""
}

// shellRule returns copilot's shell rule of a shell rule with a pattern:
// "PREFIX *" and "PREFIX:*" are shell(PREFIX:*), a command without
// wildcards shell(COMMAND).
func shellRule(r driver.Rule) (string, error) {
	unsupported := func(why string) error {
		return &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools",
			Reason: fmt.Sprintf("%q: %s", r.Text, why)}
	}
	names := tools.Resolve(r.Name)
	if !slices.Contains(names, "bash") && !strings.EqualFold(r.Name, "shell") {
		return "", unsupported(`copilot takes patterns only for the shell, as commands or command prefixes ("Bash(git *)")`)
	}
	p := strings.TrimSpace(r.Pattern)
	prefix, ok := strings.CutSuffix(p, " *")
	if !ok {
		prefix, ok = strings.CutSuffix(p, ":*")
	}
	prefix = strings.TrimSpace(prefix)
	switch {
	case strings.Contains(p, ","):
		return "", unsupported("copilot splits its tool flags at commas")
	case ok && prefix != "" && !strings.ContainsAny(prefix, "*()"):
		return "shell(" + prefix + ":*)", nil
	case !ok && p != "" && !strings.ContainsAny(p, "*()"):
		return "shell(" + p + ")", nil
	}
	return "", unsupported(`copilot matches a command, or a command prefix followed by " *" or ":*"`)
}

// policyFor returns what copilot makes of req's permission mode and tool
// lists, or the *agentcli.UnsupportedError of a rule it cannot hold.
func policyFor(req *agentcli.Request) (toolPolicy, error) {
	var p toolPolicy
	patterns := false
	if len(req.AllowedTools) > 0 {
		p.available = []string{}
		p.servers = map[string][]string{}
	}
	for _, s := range req.AllowedTools {
		r, err := driver.ParseRule(s)
		if err != nil {
			continue // validate refuses it
		}
		if err := checkRule(r); err != nil {
			return p, err
		}
		if err := p.allowRule(r); err != nil {
			return p, err
		}
		patterns = patterns || !r.IsMCP() && r.HasPattern
	}
	for _, s := range req.DisallowedTools {
		r, err := driver.ParseRule(s)
		if err != nil {
			continue
		}
		if err := checkRule(r); err != nil {
			return p, err
		}
		if err := p.denyRule(r); err != nil {
			return p, err
		}
	}
	for _, s := range req.MCPServers {
		if builtin(s.Name) && (len(req.AllowedTools) > 0 || len(req.DisallowedTools) > 0) {
			return p, &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools",
				Reason: fmt.Sprintf("MCP server %q is named like one of copilot's own tools, which copilot's tool lists cannot tell apart", s.Name)}
		}
	}
	if hostServer(req) {
		p.addHost() // hosttools.go
	}
	if driver.Mode(req) == agentcli.PermissionBypass {
		if patterns {
			// The listed tools are approved by their rules already.
			p.allowPathsURLs = true
		} else {
			p.allowAll = true
		}
	}
	return p, nil
}

// ruleUnsupported is the error of a tool rule copilot cannot hold.
func ruleUnsupported(r driver.Rule, why string) error {
	return &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools", Reason: fmt.Sprintf("%q: %s", r.Text, why)}
}

// checkRule refuses a rule copilot's tool flags cannot express.
func checkRule(r driver.Rule) error {
	switch {
	case strings.Contains(r.Name, "*"):
		return ruleUnsupported(r, "copilot takes no wildcards in tool names")
	case r.IsMCP() && builtin(r.MCPServer):
		return ruleUnsupported(r, "an MCP server named like one of copilot's own tools cannot be told apart from it")
	case r.IsMCP() && strings.Contains(r.MCPTool, ","):
		return ruleUnsupported(r, "copilot splits its tool flags at commas")
	}
	return nil
}

// addNew appends to list the values it does not hold yet.
func addNew(list *[]string, vals ...string) {
	for _, v := range vals {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
}

// allowRule adds an allowed-tools rule to p.
func (p *toolPolicy) allowRule(r driver.Rule) error {
	switch {
	case r.IsMCP():
		srv := strings.ToLower(r.MCPServer)
		if r.MCPTool == "" {
			addNew(&p.available, r.MCPServer)
			addNew(&p.allow, r.MCPServer)
			p.servers[srv] = nil
			return nil
		}
		addNew(&p.available, r.MCPServer+"-"+r.MCPTool)
		addNew(&p.allow, r.MCPServer+"("+r.MCPTool+")")
		if f, ok := p.servers[srv]; !ok || f != nil {
			p.servers[srv] = append(f, r.MCPTool)
		}
	case r.HasPattern:
		rule, err := shellRule(r)
		if err != nil {
			return err
		}
		addNew(&p.available, copilotNames(driver.Rule{Name: r.Name})...)
		addNew(&p.allow, rule)
	default:
		addTool(&p.available, &p.allow, r)
	}
	return nil
}

// addTool adds a rule's copilot tools to names and their permission kinds
// to kinds.
func addTool(names, kinds *[]string, r driver.Rule) {
	ns := copilotNames(r)
	addNew(names, ns...)
	for _, n := range ns {
		if k := permissionKind(n); k != "" {
			addNew(kinds, k)
		}
	}
}

// denyRule adds a disallowed-tools rule to p.
func (p *toolPolicy) denyRule(r driver.Rule) error {
	switch {
	case r.IsMCP() && r.MCPTool == "":
		addNew(&p.excluded, r.MCPServer)
		addNew(&p.deny, r.MCPServer)
		if p.drop == nil {
			p.drop = map[string]bool{}
		}
		p.drop[strings.ToLower(r.MCPServer)] = true
	case r.IsMCP():
		addNew(&p.excluded, r.MCPServer+"-"+r.MCPTool)
		addNew(&p.deny, r.MCPServer+"("+r.MCPTool+")")
	case r.HasPattern:
		rule, err := shellRule(r)
		if err != nil {
			return err
		}
		addNew(&p.deny, rule)
	default:
		addTool(&p.excluded, &p.deny, r)
	}
	return nil
}

// keeps reports whether the request's MCP server name is passed to
// copilot under p, and with which "tools" filter (nil: every tool).
func (p toolPolicy) keeps(name string) (bool, []string) {
	n := strings.ToLower(name)
	if p.drop[n] {
		return false, nil
	}
	if p.servers == nil {
		return true, nil
	}
	f, ok := p.servers[n]
	return ok, f
}

// args returns the flags of p.
func (p toolPolicy) args() []string {
	var args []string
	if p.allowAll {
		args = append(args, "--allow-all")
	}
	if p.allowPathsURLs {
		args = append(args, "--allow-all-paths", "--allow-all-urls")
	}
	if p.available != nil {
		if len(p.available) == 0 {
			// An allow list that names nothing copilot has: no tool
			// at all (copilot ignores a name it does not know).
			args = append(args, "--available-tools="+noTool)
		} else {
			args = append(args, "--available-tools="+strings.Join(p.available, ","))
		}
	}
	if len(p.excluded) > 0 {
		args = append(args, "--excluded-tools="+strings.Join(p.excluded, ","))
	}
	for _, r := range p.allow {
		args = append(args, "--allow-tool="+r)
	}
	for _, r := range p.deny {
		args = append(args, "--deny-tool="+r)
	}
	return args
}

// noTool is a tool name copilot has not.
const noTool = "agentcli_no_tool"
