package runner

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/toolname"
)

// Tools maps one CLI's raw tool names, lower-cased, to canonical names (see
// toolname.Tools).
type Tools = toolname.Tools

// KindOf returns the kind of a canonical tool name, or ToolOther.
func KindOf(canonical string) agentcli.ToolKind { return toolname.KindOf(canonical) }
