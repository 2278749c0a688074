// Package toy is an agentcli backend for toyagent (package toyagent, the
// command cmd/toyagent), written outside the agentcli module with its
// public driver kit only: the declaration (driver.Spec), argv helpers,
// the parser seam and the runner come from package driver, the tests
// from package driver/drivertest. Importing it registers the backend as
// "toy":
//
//	import _ "github.com/agentcli/agentcli/examples/outside-backend/toy"
//
//	b, err := agentcli.Open("toy", nil)
//
// # Command line
//
// Every run is
//
//	toyagent -json [-yolo] [-model=MODEL] [-resume=ID] [-system-file=FILE] [-max-turns=N] [ExtraArgs...] --
//
// with the prompt on stdin. toyagent parses its options with Go's flag
// package, where a value option takes the next argument whatever it looks
// like: every caller value is glued to its option with "=", and "--" ends
// the options, so that no caller string is ever read as an option. The
// system prompt goes through a private file in the run's temporary
// directory, removed when the run ends.
//
// # Settings
//
// PermissionBypass is -yolo (toyagent runs its shell tool); the zero
// value, PermissionDeny, lets toyagent refuse it. Request.SessionID
// resumes a session ("toy-" and 12 hexadecimal digits); Request.MaxTurns
// is -max-turns. Everything else (tool lists, MCP servers, an output
// schema, effort, a fallback model, a budget) is not supported.
//
// # Output and errors
//
// toyagent's JSON lines become an EventInit (session id and model),
// EventThinking, EventToolUse and EventToolResult (the shell tool is
// agentcli's Bash), EventText and EventUsage; its "done" line is the
// Result. A "failed" line is an *agentcli.ResultError whose Kind is
// ErrSessionNotFound, ErrRateLimited or ErrAuth from its kind and status;
// an exit without either line is an *agentcli.ExitError (or, after exit 0,
// an *agentcli.NoResultError). Lines it does not know are EventUnknown,
// lines that are not JSON EventNotice, and neither ends the run.
package toy

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Name is the registry name of this backend.
const Name = "toy"

func init() { driver.Register(Name, New) }

// New returns a toy backend. opts may be nil; it is copied.
func New(opts *agentcli.Options) agentcli.Backend { return driver.New(&spec, opts) }

// spec declares toyagent.
var spec = driver.Spec{
	Name:           Name,
	Binary:         "toyagent",
	Tested:         "0.3.0", // toyagent -version
	Credentials:    []string{"TOYAGENT_API_KEY"},
	HasCredentials: hasCredentials,
	Login:          "write the key to ~/.toyagent/credentials",
	Caps: agentcli.Capabilities{
		Thinking:        true,
		Resume:          true,
		SystemPrompt:    agentcli.SystemPromptAppend,
		MaxTurns:        true,
		PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionDeny},
	},
	Tools:     driver.Tools{"shell": agentcli.ToolNameBash},
	Validate:  validate,
	Prepare:   prepare,
	NewParser: func(*driver.Run) driver.Parser { return newParser() },
	Classify:  classify,
	Hint: func(e driver.Exit) string {
		if strings.Contains(e.Stderr, "not logged in") {
			return "set TOYAGENT_API_KEY"
		}
		return ""
	},
}

// prepare builds one run: the system prompt's file, argv and stdin.
func prepare(_ context.Context, r *driver.Run) (*driver.Job, error) {
	system := ""
	if r.Req.SystemPrompt != "" {
		dir, err := r.TempDir()
		if err != nil {
			return nil, err
		}
		system = filepath.Join(dir, "system.md")
		if err := os.WriteFile(system, []byte(r.Req.SystemPrompt), 0o600); err != nil {
			return nil, err
		}
	}
	return &driver.Job{Args: buildArgs(r.Req, system), Stdin: []byte(r.Req.Prompt)}, nil
}

// hasCredentials reports whether toyagent finds a credential in r: the
// variable, or the file its login writes.
func hasCredentials(r *driver.Run) bool {
	if r.Lookup("TOYAGENT_API_KEY") != "" {
		return true
	}
	home := r.Lookup("TOYAGENT_HOME")
	if home == "" {
		home = filepath.Join(r.Lookup("HOME"), ".toyagent")
	}
	_, err := os.Stat(filepath.Join(home, "credentials"))
	return err == nil
}
