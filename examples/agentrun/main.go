// Command agentrun runs one prompt on a coding-agent CLI through agentcli.
//
//	agentrun [flags] "prompt"        # or "-" to read the prompt from stdin
//	agentrun -chat [flags]           # a live session: each stdin line is a turn
//	agentrun -interactive [flags] ["first message"]
//
// By default it prints the answer as it streams. -json prints the final
// Result as one JSON object (with -chat, one per turn and line); -stream
// prints every normalized event as one JSON line as it arrives. -offline
// starts agentclitest's scripted model server on 127.0.0.1 with a canned
// reply and points the real CLI at it, so the whole flow (real CLI process,
// real parsing) runs with no credentials and no network; a prompt that asks
// to run something ("run", "execute") makes the offline model call the
// CLI's shell tool once, so that -permission ask shows an approval prompt.
//
// -permission bypass|ask|deny|plan chooses Request.Permission; without it
// (and without PERMISSION_MODE) a run refuses whatever would need approval
// (agentcli's zero value, deny): reading runs, writing files and commands
// do not. Under ask, every tool call the CLI asks about is shown on stderr
// with a question answered by the next stdin line: y (allow once), a
// (allow always) or anything else (refuse); a request nobody answers is
// refused. A one-shot run under ask is run as a one-turn live session.
//
// -tool-demo gives the agent a host tool written in Go (Request.Tools):
// current_time, the time in a time zone, approved in advance. In -chat
// mode the agent's questions to the user (Request.OnQuestion) are put on
// stderr, each with its options numbered, and answered by the next stdin
// line: option numbers (several, comma-separated, where more than one may
// be chosen) or words of your own; an empty line leaves the question
// unanswered. With -offline, a prompt that mentions the time makes the
// offline model call current_time (with -tool-demo), and one that asks to
// be asked something makes it ask a question.
//
// -continue continues the most recent session of the current directory
// (a directory without one is an error, not a fresh session); -fork, with
// -session ID or -continue, forks that session into a new one that has
// its history, leaving it as it was; -session-id UUID chooses the id of
// the new session (or fork) where the CLI allows it. -list prints the
// sessions of the current directory, newest first, one per line: id,
// update time, title (with -json, one JSON object per line), and exits.
// In -chat mode two lines are agentrun's own commands, not prompts:
// "/model NAME" switches the session's model (agentcli.SetModel) and
// "/permission MODE" its permission mode (agentcli.SetPermission; under
// ask, the questions come as above).
//
// -wire-log FILE records the run (with -chat, the whole session) and
// -replay FILE (with -backend) prints it again as it was printed, turn by
// turn, without running anything.
//
// -interactive hands the terminal to the CLI's own interactive UI instead
// (with the same model, system prompt, session, -permission and -offline
// wiring; the prompt, if any, is its first message; the UI itself asks for
// permissions under ask) and exits with the CLI's exit status.
//
// Defaults come from the environment: AGENT_BACKEND, BACKEND_CLI_PATH,
// BACKEND_MODEL, BACKEND_MAX_TURNS, ALLOWED_TOOLS, PERMISSION_MODE. When the CLI binary is
// not on PATH, the copy installed by scripts/install-clis.sh is used.
//
// -backend names any registered backend: the built-in ones, any agent that
// speaks the Agent Client Protocol ("acp": -cli names its binary and each
// -arg one argument that starts it in ACP mode, e.g. -backend acp -cli
// qwen -arg=--acp) and the known ACP agents ("qwen-acp", "copilot-acp",
// ...), and in a program that wraps package command (this command as a
// function) the backends that program imports, as
// examples/outside-backend/cmd/agentrun does for a backend written
// outside this module.
//
// Exit status: 0 on success, 1 on any run error (the typed error's message
// goes to stderr), 2 on bad usage.
package main

import (
	"io"
	"os"

	"github.com/agentcli/agentcli/examples/agentrun/command"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is agentrun with its arguments (without the program name) and
// standard streams; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return command.Main(args, stdin, stdout, stderr)
}
