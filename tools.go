package agentcli

import "strings"

// ToolKind groups tools by what they do, using the Agent Client Protocol's
// tool-call kinds.
type ToolKind string

const (
	ToolRead    ToolKind = "read"
	ToolEdit    ToolKind = "edit"
	ToolDelete  ToolKind = "delete"
	ToolMove    ToolKind = "move"
	ToolSearch  ToolKind = "search"
	ToolExecute ToolKind = "execute"
	ToolThink   ToolKind = "think"
	ToolFetch   ToolKind = "fetch"
	ToolOther   ToolKind = "other"
)

// Canonical tool names. They are Claude Code's names, which every backend's
// tools are mapped onto.
const (
	ToolNameRead            = "Read"
	ToolNameWrite           = "Write"
	ToolNameEdit            = "Edit"
	ToolNameMultiEdit       = "MultiEdit"
	ToolNameNotebookEdit    = "NotebookEdit"
	ToolNameDelete          = "Delete"
	ToolNameBash            = "Bash"
	ToolNameBashOutput      = "BashOutput"
	ToolNameKillShell       = "KillShell"
	ToolNameGrep            = "Grep"
	ToolNameGlob            = "Glob"
	ToolNameLS              = "LS"
	ToolNameWebFetch        = "WebFetch"
	ToolNameWebSearch       = "WebSearch"
	ToolNameAskUserQuestion = "AskUserQuestion"
	ToolNameTodoWrite       = "TodoWrite"
	ToolNameTodoRead        = "TodoRead"
	ToolNameTask            = "Task"
	ToolNameSkill           = "Skill"
	ToolNameExitPlanMode    = "ExitPlanMode"
	ToolNameMemory          = "Memory"
)

// toolKinds gives the kind of every canonical name.
var toolKinds = map[string]ToolKind{
	ToolNameRead:            ToolRead,
	ToolNameLS:              ToolRead,
	ToolNameWrite:           ToolEdit,
	ToolNameEdit:            ToolEdit,
	ToolNameMultiEdit:       ToolEdit,
	ToolNameNotebookEdit:    ToolEdit,
	ToolNameMemory:          ToolEdit,
	ToolNameDelete:          ToolDelete,
	ToolNameBash:            ToolExecute,
	ToolNameBashOutput:      ToolExecute,
	ToolNameKillShell:       ToolExecute,
	ToolNameGrep:            ToolSearch,
	ToolNameGlob:            ToolSearch,
	ToolNameWebSearch:       ToolSearch,
	ToolNameWebFetch:        ToolFetch,
	ToolNameTodoWrite:       ToolThink,
	ToolNameTodoRead:        ToolThink,
	ToolNameTask:            ToolThink,
	ToolNameAskUserQuestion: ToolOther,
	ToolNameSkill:           ToolOther,
	ToolNameExitPlanMode:    ToolOther,
}

// toolNames maps each backend's raw tool names (lower-cased) to canonical
// names. Claude's own names are canonical already and are matched
// case-insensitively against toolKinds.
var toolNames = map[string]map[string]string{
	"claude": {
		"agent":          ToolNameTask, // renamed from Task in Claude Code 2.x
		"notebookread":   ToolNameRead,
		"killbash":       ToolNameKillShell,
		"bash_output":    ToolNameBashOutput,
		"exit_plan_mode": ToolNameExitPlanMode,
	},
	"codex": {
		// codex exec reports item types rather than tool names; the
		// backend passes these item types (and exec_command-style names
		// where it sees them) here.
		"command_execution":  ToolNameBash,
		"exec_command":       ToolNameBash,
		"shell":              ToolNameBash,
		"local_shell":        ToolNameBash,
		"file_change":        ToolNameEdit,
		"apply_patch":        ToolNameEdit,
		"web_search":         ToolNameWebSearch,
		"todo_list":          ToolNameTodoWrite,
		"update_plan":        ToolNameTodoWrite,
		"view_image":         ToolNameRead,
		"request_user_input": ToolNameAskUserQuestion,
		"collab_tool_call":   ToolNameTask,
	},
	"gemini": {
		"run_shell_command":   ToolNameBash,
		"read_file":           ToolNameRead,
		"read_many_files":     ToolNameRead,
		"list_directory":      ToolNameLS,
		"write_file":          ToolNameWrite,
		"replace":             ToolNameEdit,
		"edit":                ToolNameEdit,
		"glob":                ToolNameGlob,
		"search_file_content": ToolNameGrep,
		"grep_search":         ToolNameGrep,
		"grep":                ToolNameGrep,
		"web_fetch":           ToolNameWebFetch,
		"google_web_search":   ToolNameWebSearch,
		"web_search":          ToolNameWebSearch,
		"save_memory":         ToolNameMemory,
		"write_todos":         ToolNameTodoWrite,
		"ask_user":            ToolNameAskUserQuestion,
		"activate_skill":      ToolNameSkill,
		"delegate_to_agent":   ToolNameTask,
	},
	"opencode": {
		"bash":        ToolNameBash,
		"read":        ToolNameRead,
		"list":        ToolNameLS,
		"write":       ToolNameWrite,
		"edit":        ToolNameEdit,
		"multiedit":   ToolNameMultiEdit,
		"patch":       ToolNameEdit,
		"apply_patch": ToolNameEdit,
		"glob":        ToolNameGlob,
		"grep":        ToolNameGrep,
		"codesearch":  ToolNameGrep,
		"webfetch":    ToolNameWebFetch,
		"websearch":   ToolNameWebSearch,
		"todowrite":   ToolNameTodoWrite,
		"todoread":    ToolNameTodoRead,
		"task":        ToolNameTask,
		"question":    ToolNameAskUserQuestion,
		"skill":       ToolNameSkill,
	},
}

// canonicalByFold maps lower-cased canonical names to themselves.
var canonicalByFold = func() map[string]string {
	m := make(map[string]string, len(toolKinds))
	for n := range toolKinds {
		m[strings.ToLower(n)] = n
	}
	return m
}()

// CanonicalTool maps a backend's raw tool name to the canonical name and its
// kind. Names already canonical (any backend, any case) map to themselves.
// Unknown tools — MCP tools, for example — pass through unchanged with kind
// ToolOther.
func CanonicalTool(backend, raw string) (name string, kind ToolKind) {
	low := strings.ToLower(strings.TrimSpace(raw))
	if n, ok := toolNames[backend][low]; ok {
		return n, toolKinds[n]
	}
	if n, ok := canonicalByFold[low]; ok {
		return n, toolKinds[n]
	}
	return raw, ToolOther
}

// ToolKindOf returns the kind of a canonical tool name, or ToolOther.
func ToolKindOf(canonical string) ToolKind {
	if k, ok := toolKinds[canonical]; ok {
		return k
	}
	return ToolOther
}
