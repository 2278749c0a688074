// Package toolname maps each CLI's tool names onto agentcli's canonical
// names and kinds. It is pure, so the test kit can use it on every platform.
package toolname

import (
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
