// Package toolname maps each CLI's tool names onto agentcli's canonical
// names and kinds. It is pure, so the test kit can use it on every platform.
package driver

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
)

// toolKinds gives the kind of every canonical tool name.
var toolKinds = map[string]agentcli.ToolKind{
	agentcli.ToolNameRead:            agentcli.ToolRead,
	agentcli.ToolNameLS:              agentcli.ToolRead,
	agentcli.ToolNameWrite:           agentcli.ToolEdit,
	agentcli.ToolNameEdit:            agentcli.ToolEdit,
	agentcli.ToolNameMultiEdit:       agentcli.ToolEdit,
	agentcli.ToolNameNotebookEdit:    agentcli.ToolEdit,
	agentcli.ToolNameMemory:          agentcli.ToolEdit,
	agentcli.ToolNameDelete:          agentcli.ToolDelete,
	agentcli.ToolNameBash:            agentcli.ToolExecute,
	agentcli.ToolNameBashOutput:      agentcli.ToolExecute,
	agentcli.ToolNameKillShell:       agentcli.ToolExecute,
	agentcli.ToolNameGrep:            agentcli.ToolSearch,
	agentcli.ToolNameGlob:            agentcli.ToolSearch,
	agentcli.ToolNameWebSearch:       agentcli.ToolSearch,
	agentcli.ToolNameWebFetch:        agentcli.ToolFetch,
	agentcli.ToolNameTodoWrite:       agentcli.ToolThink,
	agentcli.ToolNameTodoRead:        agentcli.ToolThink,
	agentcli.ToolNameTask:            agentcli.ToolThink,
	agentcli.ToolNameAskUserQuestion: agentcli.ToolOther,
	agentcli.ToolNameSkill:           agentcli.ToolOther,
	agentcli.ToolNameExitPlanMode:    agentcli.ToolOther,
}

// canonicalByFold maps lower-cased canonical names to themselves.
var canonicalByFold = func() map[string]string {
	m := make(map[string]string, len(toolKinds))
	for n := range toolKinds {
		m[strings.ToLower(n)] = n
	}
	return m
}()

// Tools maps one CLI's raw tool names, lower-cased, to canonical names (the
// agentcli.ToolName* constants).
type Tools map[string]string

// Canonical maps a raw tool name to its canonical name and kind. Names that
// are canonical already (in any case) map to themselves; unknown tools (MCP
// tools, for example) pass through unchanged with kind ToolOther.
func (t Tools) Canonical(raw string) (name string, kind agentcli.ToolKind) {
	low := strings.ToLower(strings.TrimSpace(raw))
	if n, ok := t[low]; ok {
		return n, toolKinds[n]
	}
	if n, ok := canonicalByFold[low]; ok {
		return n, toolKinds[n]
	}
	return raw, agentcli.ToolOther
}

// Use builds the ToolUse of a call: canonical name and kind from raw.
func (t Tools) Use(id, raw string, input []byte) *agentcli.ToolUse {
	name, kind := t.Canonical(raw)
	return &agentcli.ToolUse{ID: id, Name: name, RawName: raw, Kind: kind, Input: input}
}

// KindOf returns the kind of a canonical tool name, or ToolOther.
func KindOf(canonical string) agentcli.ToolKind {
	if k, ok := toolKinds[canonical]; ok {
		return k
	}
	return agentcli.ToolOther
}

// Rule is one tool rule of Request.AllowedTools or DisallowedTools,
// parsed: NAME, NAME(PATTERN), mcp__SERVER or mcp__SERVER__TOOL.
type Rule struct {
	// Text is the rule as given, without surrounding white space.
	Text string
	// Name is the tool name as written (before any "(").
	Name string
	// Pattern is the text between the parentheses, when HasPattern.
	Pattern    string
	HasPattern bool
	// MCPServer and MCPTool are set for an MCP rule ("mcp__SERVER" or
	// "mcp__SERVER__TOOL"; MCPTool is "" for a whole server).
	MCPServer, MCPTool string
}

// IsMCP reports whether r names an MCP server or tool.
func (r Rule) IsMCP() bool { return r.MCPServer != "" }

// ParseRule parses one tool rule. It fails on an empty rule, a rule that
// starts with "-" (a CLI taking a list of rules would read it as an
// option), a name with characters other than ASCII letters, digits, "_",
// "-", "." and "*", and parentheses that do not enclose a non-empty
// pattern at the end of the rule.
func ParseRule(s string) (Rule, error) {
	t := strings.TrimSpace(s)
	r := Rule{Text: t, Name: t}
	switch {
	case t == "":
		return r, errors.New("empty tool rule")
	case t[0] == '-':
		return r, errors.New(`a tool rule must not start with "-"`)
	}
	if i := strings.IndexByte(t, '('); i >= 0 {
		if !strings.HasSuffix(t, ")") || i == 0 {
			return r, errors.New(`a pattern must follow the tool name in parentheses, as in "Bash(git *)"`)
		}
		r.Name, r.Pattern, r.HasPattern = t[:i], t[i+1:len(t)-1], true
		if strings.TrimSpace(r.Pattern) == "" {
			return r, errors.New("empty pattern in parentheses")
		}
	} else if strings.IndexByte(t, ')') >= 0 {
		return r, errors.New(`")" without "("`)
	}
	for i := 0; i < len(r.Name); i++ {
		c := r.Name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_-.*", c) >= 0) {
			return r, fmt.Errorf("%q is not a tool name (ASCII letters, digits, '_', '-', '.', '*')", r.Name)
		}
	}
	if rest, ok := strings.CutPrefix(r.Name, "mcp__"); ok {
		srv, tool, _ := strings.Cut(rest, "__")
		if srv == "" {
			return r, fmt.Errorf("%q names no MCP server (want mcp__SERVER or mcp__SERVER__TOOL)", r.Name)
		}
		r.MCPServer, r.MCPTool = srv, tool
		if r.HasPattern {
			return r, errors.New("an MCP tool rule takes no pattern")
		}
	}
	return r, nil
}

// Resolve returns the raw names (lower-cased table keys) of t that rule
// name n covers: the raw name itself when t has it, or every raw name
// mapped to n when n is a canonical name (any case). The result is
// sorted; it is empty when t knows no such tool.
func (t Tools) Resolve(n string) []string {
	low := strings.ToLower(n)
	if _, ok := t[low]; ok {
		return []string{low}
	}
	c, ok := canonicalByFold[low]
	if !ok {
		return nil
	}
	var out []string
	for raw, canon := range t {
		if canon == c {
			out = append(out, raw)
		}
	}
	slices.Sort(out)
	return out
}

// CanonicalName returns the canonical spelling of name when it is a
// canonical tool name in any case, or "".
func CanonicalName(name string) string { return canonicalByFold[strings.ToLower(name)] }

// Verdict is what a request's tool lists say about one tool call.
type Verdict int

const (
	// Defer: the lists say nothing final; the permission mode decides (no
	// lists, or an allowed rule with a pattern names the tool, and the
	// pattern is the CLI's to match).
	VerdictDefer Verdict = iota
	// Allow: an allowed rule without a pattern names the tool: it is
	// approved in advance.
	VerdictAllow
	// Refuse: a disallowed rule names the tool, or an allow list does not
	// name it at all.
	VerdictRefuse
)

// Judge returns what the tool lists allowed and disallowed (rules; see
// ParseRule) say about a call of t. A rule names t when its name is t's
// canonical name or raw name in any case, or, for an MCP rule, t's name
// is "mcp__SERVER__TOOL" (or the CLI's own spelling, SERVER_TOOL,
// SERVER__TOOL or SERVER-TOOL) for that server (and tool). Rules that do not parse name
// nothing.
func Judge(allowed, disallowed []string, t *agentcli.ToolUse) Verdict {
	for _, s := range disallowed {
		if r, err := ParseRule(s); err == nil && !r.HasPattern && r.names(t) {
			return VerdictRefuse
		}
	}
	if len(allowed) == 0 {
		return VerdictDefer
	}
	v := VerdictRefuse
	for _, s := range allowed {
		r, err := ParseRule(s)
		if err != nil || !r.names(t) {
			continue
		}
		if !r.HasPattern {
			return VerdictAllow
		}
		v = VerdictDefer
	}
	return v
}

// names reports whether r names the tool of t.
func (r Rule) names(t *agentcli.ToolUse) bool {
	if !r.IsMCP() {
		return strings.EqualFold(r.Name, t.Name) || strings.EqualFold(r.Name, t.RawName) ||
			CanonicalName(r.Name) != "" && CanonicalName(r.Name) == CanonicalName(t.Name)
	}
	for _, n := range []string{t.Name, t.RawName} {
		low := strings.ToLower(n)
		srv := strings.ToLower(r.MCPServer)
		for _, prefix := range []string{"mcp__" + srv + "__", srv + "__", srv + "_", srv + "-"} {
			rest, ok := strings.CutPrefix(low, prefix)
			if ok && rest != "" && (r.MCPTool == "" || rest == strings.ToLower(r.MCPTool)) {
				return true
			}
		}
	}
	return false
}
