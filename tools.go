package agentcli

// ToolKind groups tools by what they do, using the Agent Client Protocol's
// tool-call kinds.
type ToolKind string

// Tool kinds.
const (
	// ToolRead reads files or directories.
	ToolRead ToolKind = "read"
	// ToolEdit writes or changes files.
	ToolEdit ToolKind = "edit"
	// ToolDelete deletes files.
	ToolDelete ToolKind = "delete"
	// ToolMove moves or renames files.
	ToolMove ToolKind = "move"
	// ToolSearch searches files or the web.
	ToolSearch ToolKind = "search"
	// ToolExecute runs commands.
	ToolExecute ToolKind = "execute"
	// ToolThink plans or delegates (to-do lists, sub-agents).
	ToolThink ToolKind = "think"
	// ToolFetch fetches a URL.
	ToolFetch ToolKind = "fetch"
	// ToolOther is everything else, MCP tools included.
	ToolOther ToolKind = "other"
)

// Canonical tool names. They are Claude Code's names, which every backend's
// tools are mapped onto (ToolUse.Name); the CLI's own name is kept in
// ToolUse.RawName. A tool with no canonical counterpart (an MCP tool, for
// example) keeps its raw name.
const (
	// ToolNameRead reads a file.
	ToolNameRead = "Read"
	// ToolNameWrite writes a whole file.
	ToolNameWrite = "Write"
	// ToolNameEdit edits part of a file.
	ToolNameEdit = "Edit"
	// ToolNameMultiEdit makes several edits to one file.
	ToolNameMultiEdit = "MultiEdit"
	// ToolNameNotebookEdit edits a Jupyter notebook.
	ToolNameNotebookEdit = "NotebookEdit"
	// ToolNameDelete deletes a file.
	ToolNameDelete = "Delete"
	// ToolNameBash runs a shell command.
	ToolNameBash = "Bash"
	// ToolNameBashOutput reads the output of a background shell.
	ToolNameBashOutput = "BashOutput"
	// ToolNameKillShell stops a background shell.
	ToolNameKillShell = "KillShell"
	// ToolNameGrep searches file contents.
	ToolNameGrep = "Grep"
	// ToolNameGlob finds files by name pattern.
	ToolNameGlob = "Glob"
	// ToolNameLS lists a directory.
	ToolNameLS = "LS"
	// ToolNameWebFetch fetches a URL.
	ToolNameWebFetch = "WebFetch"
	// ToolNameWebSearch searches the web.
	ToolNameWebSearch = "WebSearch"
	// ToolNameAskUserQuestion asks the user a question.
	ToolNameAskUserQuestion = "AskUserQuestion"
	// ToolNameTodoWrite writes the agent's to-do list.
	ToolNameTodoWrite = "TodoWrite"
	// ToolNameTodoRead reads the agent's to-do list.
	ToolNameTodoRead = "TodoRead"
	// ToolNameTask delegates to a sub-agent.
	ToolNameTask = "Task"
	// ToolNameSkill runs a skill.
	ToolNameSkill = "Skill"
	// ToolNameExitPlanMode leaves plan mode.
	ToolNameExitPlanMode = "ExitPlanMode"
	// ToolNameMemory saves to the agent's memory.
	ToolNameMemory = "Memory"
)
