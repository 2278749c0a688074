package qwen

// Host tools, questions and hooks.
//
// Host tools (Request.Tools) are agentcli's MCP server (driver.HostTools)
// in the --mcp-config file, with "alwaysLoadTools": true: qwen 0.24.4
// defers every MCP tool behind its tool_search tool unless its server
// sets that, so the model would not be offered them. The server's tools
// are approved in advance (--allowed-tools=mcp__agentcli: agentcli
// decides each call itself), an allow list keeps the server
// (--allowed-mcp-server-names), and a live session allows whatever qwen
// still asks about them. Qwen connects its MCP servers before the first
// model request.
//
// Questions (Request.OnQuestion) get qwen's own ask_user_question, which
// qwen puts to the host as a can_use_tool request whenever its input is
// stream-json and initialize was sent (yolo included: "permission rules
// and automatic approval modes must never satisfy it"), so a run with
// OnQuestion is one turn of a live session. The question goes to
// OnQuestion; its answers are allowed as the input's "answers" ({"0":
// "Blue"}, by question index, several labels joined with ", "), which qwen
// tells the model ("User has provided the following answers: ..."); no
// answer is a refusal with a message saying so, which qwen gives the
// model. An allow list leaves ask_user_question out (--core-tools), so
// with one agentcli's question tool (driver.QuestionTool) asks instead.
//
// Hooks: hooks.go.

import (
	"slices"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// askTool is qwen's own question tool.
const askTool = "ask_user_question"

// nativeQuestions reports whether qwen asks req's questions itself
// (ask_user_question through can_use_tool): whenever no allow list
// leaves the tool out.
func nativeQuestions(req *agentcli.Request) bool { return len(req.AllowedTools) == 0 }

// asksNative reports whether req's OnQuestion gets qwen's
// ask_user_question (which a live turn must then keep).
func asksNative(req *agentcli.Request) bool { return req.OnQuestion != nil && nativeQuestions(req) }

// hostServer reports whether agentcli's own MCP server is among req's
// servers (driver.HostTools). It is pure.
func hostServer(req *agentcli.Request) bool {
	return driver.IsHostServer(req, agentcli.HostServerName) &&
		slices.ContainsFunc(req.MCPServers, func(s agentcli.MCPServer) bool { return s.Name == agentcli.HostServerName })
}
