// Package conformance holds the real-CLI conformance suite of agentcli. It
// has no non-test code.
//
// The suite drives the pinned CLIs in tools/clis (installed by
// scripts/install-clis.sh) through the public API only — agentcli.Open,
// Backend.Run, Backend.Stream and agentcli.Interactive — against an agentclitest.Server wired with
// Server.Wire, so that no run needs credentials or the network. For every CLI
// it checks the same scenarios (TestConformance/<cli>/<scenario>):
//
//   - text: a plain answer, its session id and usage;
//   - tool: a real shell command run by the CLI, its output sent back to the
//     model, normalized tool events with the canonical name "Bash";
//   - resume: a second run on the first run's session sees its history;
//   - api400, api500: HTTP errors from the model end in the typed error
//     documented for that CLI, within the timeout;
//   - api401, api429: the error also matches agentcli.ErrAuth or
//     agentcli.ErrRateLimited;
//   - prompts: prompts that look like flags, slash commands or file
//     includes reach the model verbatim;
//   - bigprompt: a 1 MiB prompt reaches the model intact;
//   - system: the system prompt reaches the model the way
//     Capabilities().SystemPrompt says;
//   - model: Request.Model reaches the model server;
//   - cancel: cancelling mid-stream ends the run promptly with
//     context.Canceled and leaves no process of the CLI alive;
//   - unknown-session: resuming a session the CLI does not know fails with
//     agentcli.ErrSessionNotFound, without a model call.
//
// TestLive drives each CLI as a live session (agentcli.StartSession): three
// turns in one process with the history intact (multiturn); prompts that
// look like flags or commands (prompts); a refused `touch MARKER` that never
// runs (deny); allow_always (allow-always); edited input (edit-input); an
// interrupted stalled turn (interrupt); a permission callback that never
// answers (permission-timeout); Close mid-turn (close); a CLI killed with
// SIGKILL, then resumed by session id (crash-resume); permission modes a CLI
// lacks (unsupported-mode); and one-shot runs under PermissionAsk and
// PermissionDeny (oneshot).
//
// TestInteractive/<cli>/<scenario> drives each CLI's own interactive UI on a
// pseudo-terminal through agentcli.Interactive (Linux): typed (a prompt
// typed at the terminal is answered on the screen, and the UI's quit
// command ends it with status 0), initial (a first message, with the
// model, the system prompt and PermissionAsk), resume (a run's session is
// resumed with its history) and cancel (the UI is stopped within the kill
// grace, and the terminal's mode is restored).
//
// The orchestrator settings are checked in one-shot runs (TestMCPServers,
// TestMCPHTTPServer, TestStructuredOutput, TestEffort, TestFallbackModel,
// TestMaxBudget, TestUnsupportedSettings) and in live sessions
// (livesettings_test.go): stdio and HTTP MCP servers called in later turns
// of one session, credentials byte for byte and never on a command line
// (TestLiveMCPServers); MCP tools under PermissionAsk and PermissionDeny
// (TestLiveMCPPermissions); a one-shot run with PermissionAsk and an MCP
// server (TestOneShotAskMCPServers); effort in every turn
// (TestLiveEffort); structured output per turn (TestLiveStructuredOutput);
// claude's spending cap over a session (TestLiveMaxBudget); and settings a
// backend lacks, a warning or, under Options.Strict, an error before the
// CLI starts (TestLiveUnsupportedSettings).
//
// After every run the suite also scans /proc for processes that still carry
// the run's unique environment tag: a run must never leave a process behind.
//
// Run it as CI does, in a network namespace with only loopback:
//
//	unshare -n sh -c 'ip link set lo up && go test -race -count=1 ./conformance/'
//
// A CLI that is not installed skips its tests, unless CI=true, where it fails
// them.
package conformance
