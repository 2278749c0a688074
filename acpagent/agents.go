package acpagent

import "github.com/agentcli/agentcli/tools/clis"

// Agent is a known ACP agent: how to start it in ACP mode and what
// installs it.
type Agent struct {
	// Name is the registry name, e.g. "qwen-acp".
	Name string
	// Binary is the executable looked up on PATH when Options.Path is
	// empty; Args start it in ACP mode (Options.Args replace them).
	Binary string
	Args   []string
	// Package and Version are the npm package that installs Binary and
	// the version agentcli was tested with (named in the hint of a
	// missing binary, and by Doctor).
	Package, Version string
	// Credentials are the variables that carry the agent's credentials
	// (reported by name only, by Doctor).
	Credentials []string
	// Modes are the agent's own session modes for agentcli's permission
	// modes, where it has them: a run under the mode selects it (see the
	// package documentation). Nil picks by name (a mode named "plan").
	Modes map[string]string
	// Env holds environment entries a run of the agent gets under each
	// permission mode (for an agent that asks only what its
	// configuration says it should ask).
	Env map[string][]string
	// Note is what a user should know about the agent in ACP mode.
	Note string
}

// opencodeAsk makes opencode ask before its tools that change things or
// reach out run (its permission config; OPENCODE_PERMISSION is merged over
// every other layer).
const opencodeAsk = `OPENCODE_PERMISSION={"bash":"ask","edit":"ask","webfetch":"ask","websearch":"ask","codesearch":"ask","external_directory":"ask"}`

// pinned returns the version of a CLI pinned in tools/clis, or "" when
// it is not pinned.
func pinned(name string) string {
	if c, ok := clis.Lookup(name); ok {
		return c.Version
	}
	return ""
}

// Agents are the known ACP agents, each registered under its Name. Their
// facts (argv, capabilities, quirks) were checked with real runs of the
// version named, against agentclitest's scripted model server; the CLIs
// pinned in tools/clis run in CI (copilot, gemini and opencode through
// the generic backend and their known agent).
var Agents = []Agent{
	{
		Name: "copilot-acp", Binary: "copilot", Args: []string{"--acp", "--no-auto-update"},
		Package: "@github/copilot", Version: pinned("copilot"),
		Credentials: []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BASE_URL"},
		Modes:       map[string]string{"plan": "https://agentclientprotocol.com/protocol/session-modes#plan"},
		Note:        `a refusal ends the turn; usage is the session's so far; stdio MCP servers are ignored (refused: use the copilot backend), HTTP ones work`,
	},
	{
		Name: "gemini-acp", Binary: "gemini", Args: []string{"--acp", "--skip-trust"},
		Package: "@google/gemini-cli", Version: pinned("gemini"),
		Credentials: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_GENAI_USE_VERTEXAI"},
		Modes:       map[string]string{"bypass": "yolo", "ask": "default", "deny": "default", "plan": "plan"},
		Note:        "a refusal goes to the model and the turn goes on",
	},
	{
		Name: "opencode-acp", Binary: "opencode", Args: []string{"acp"},
		Package: "opencode-ai", Version: pinned("opencode"),
		Credentials: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "OPENCODE_API_KEY"},
		Env: map[string][]string{
			"ask": {opencodeAsk}, "deny": {opencodeAsk}, "plan": {opencodeAsk},
		},
		Note: `asks only for what its permission config says "ask" (OPENCODE_PERMISSION, set to ask for its tools that change things but under bypass); a refusal ends the turn`,
	},
	{
		Name: "qwen-acp", Binary: "qwen", Args: []string{"--acp"},
		Package: "@qwen-code/qwen-code", Version: pinned("qwen"),
		Credentials: []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"},
		Modes:       map[string]string{"bypass": "yolo", "ask": "default", "deny": "default", "plan": "plan"},
		Note:        "sends craft/drainMidTurnQueue requests (answered with an error); a refusal ends the turn",
	},
	{
		Name: "droid-acp", Binary: "droid", Args: []string{"exec", "--output-format", "acp-daemon"},
		Package: "@factory/cli", Version: pinned("droid"),
		Credentials: []string{"FACTORY_API_KEY"},
		Modes:       map[string]string{"plan": "spec"},
		Note:        "makes a session-title model call; a refusal ends the turn",
	},
	{
		Name: "claude-acp", Binary: "claude-agent-acp",
		Package: "@zed-industries/claude-agent-acp", Version: "0.23.1",
		Credentials: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		Modes:       map[string]string{"bypass": "bypassPermissions", "ask": "default", "deny": "default", "plan": "plan"},
		Note:        "bundles its own Claude Code; does not exit on stdin EOF (killed on Close); a refusal goes to the model",
	},
	{
		Name: "codex-acp", Binary: "codex-acp",
		Package: "@zed-industries/codex-acp", Version: "0.16.0",
		Credentials: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Modes:       map[string]string{"bypass": "full-access", "ask": "read-only", "deny": "read-only", "plan": "read-only"},
		Note:        "its sandbox needs bubblewrap (bwrap) on Linux; it refuses in its sandbox rather than asking (ask is its read-only mode); no --version; does not exit on stdin EOF (killed on Close)",
	},
}

// Lookup returns the known agent registered under name (see Agents).
func Lookup(name string) (Agent, bool) {
	for _, a := range Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}
