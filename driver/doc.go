// Package driver is the backend author's API, as database/sql/driver is
// to database/sql: what it takes to make one coding-agent CLI an
// agentcli.Backend that keeps every promise agentcli makes. The user's API
// is package agentcli; nothing here is for programs that only run agents.
//
// A backend declares its CLI as a [Spec]: the binary and its npm package,
// the capabilities, the tool-name table (raw names onto agentcli's
// canonical ones, [Tools]), the request checks of the CLI's own syntax, a
// Prepare step that builds argv, stdin and environment, the parser of its
// output, its error wording and hints, and, optionally, live sessions, an
// interactive UI, wire-log replay and credential detection. [New] turns the
// Spec into an agentcli.Backend that owns everything else, the same way for
// every CLI: request validation, tool-list and permission-mode checks,
// warnings about options the CLI ignores, binary resolution (PATH, then
// the pinned-CLI cache of `agentcli install`), the environment, timeouts,
// the process (its own process group, the kill ladder, reaping, stdin that
// always ends, the stderr tail, lines without a 64 KiB limit), the event
// stream, the outcome of a run decided from the terminal event and the exit
// status, typed errors and the redaction of secrets in everything a run
// reports. [Register] makes it available to agentcli.Open.
//
// The pieces a Spec is built from are public too:
//
//   - argv helpers: the id syntaxes ([IsUUID], [IsTitle], [IsPrefixedID],
//     [IsIndex], [SessionError]) and the tool-rule grammar ([ParseRule],
//     [CheckToolRules], [Judge]);
//   - the parser seam: one shape, [Lines], from which the kit builds every
//     way of reading output fast (a wire type whose Decode reads one line,
//     see [Wire]; a run's state whose Apply turns decoded lines into
//     events, in order, and whose End returns a plain [Outcome], see
//     [LineParser]); a [Parser] of its own for output of another shape;
//     helpers for lines that are not the CLI's events ([Notice]);
//   - typed errors built once, complete: [Errors] turns an Outcome (or a
//     live session's failed turn, protocol error or dead CLI) into the
//     agentcli error it is, classified, hinted and redacted;
//   - settings helpers (MCP servers, the "$" escape, [Mode]);
//   - host tools, questions and hooks: the runner serves Request.Tools
//     (and, for a CLI with no way of its own to ask, its question tool)
//     from an MCP server of the run's own and adds it to the request's
//     MCP servers ([HostTools] says what a backend must add:
//     pre-approval, the tool lists left alone, waiting for the server);
//     [AskQuestion] puts a CLI's own questions to Request.OnQuestion;
//     [RunHooks] calls Request.Hooks, natively ([Spec].NativeHooks) or
//     through the permission path and the event stream;
//   - package [github.com/agentcli/agentcli/driver/live]: the live-session
//     engine (turns, interrupt, permission requests, close, a CLI that
//     dies or breaks its protocol) with a JSON-RPC peer;
//   - package [github.com/agentcli/agentcli/driver/acp]: an Agent Client
//     Protocol client on that engine;
//   - package [github.com/agentcli/agentcli/driver/streamjson]: Claude
//     Code's stream-json on that engine (the control protocol of live
//     sessions, the content of message lines), which Qwen Code copies;
//   - package [github.com/agentcli/agentcli/driver/jsonscan]: a single-pass
//     JSON reader for parsers;
//   - package [github.com/agentcli/agentcli/driver/wirelog]: the wire log.
//
// The fault matrix and the hostile-request properties that every built-in
// backend passes run against any backend in package drivertest.
package driver
