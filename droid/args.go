package droid

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// readOnly are droid's tools that read and search: what the zero mode
// (deny) and plan leave a one-shot run. The list is closed: a tool droid
// adds later is not in it, so it is not offered.
var readOnly = []string{"Read", "LS", "Grep", "Glob", "TodoWrite"}

// buildArgs returns the arguments of a one-shot `droid exec` run for req.
// It is pure; systemFile is the path of the private file that holds the
// system prompt ("" for none), settings the path of the run's runtime
// settings file ("" for none: see hosttools.go).
//
//	droid exec --output-format=stream-json --skip-permissions-unsafe [--use-spec]
//	      [--only-tools=LIST | --add-tools=MCP:NAME,...] [--remove-tools=LIST] [--model=M] [--reasoning-effort=LEVEL]
//	      [--append-system-prompt-file=F] [--settings=F] [--fork=ID] [ExtraArgs...]
//
// The prompt is on stdin (droid reads it when no prompt argument is
// given; the model receives it byte for byte). Every value from the
// caller is attached with "=" (droid's option parser is commander.js). No
// argument is positional: a positional word would be the prompt.
//
// Permissions are droid's tool lists, which it enforces whatever its
// autonomy level, never its autonomy levels, which decide from the risk
// level the model itself claims for a command (verified: a command the
// model labels "low" runs in the read-only default). So every run skips
// droid's permission checks and gets the tools it may use:
//
//	bypass  every tool (or the allow list's)
//	deny    Read LS Grep Glob TodoWrite (or the allow list's, approved in advance)
//	plan    the same, in spec mode (--use-spec)
//
// A call of a tool that is not there is refused by droid ("Tool Execute is
// not permitted in this exec session") and the model hears so.
// DisallowedTools are removed in every mode. The request's MCP servers
// (in the runtime settings file) are added with --add-tools when there
// is no --only-tools list; agentcli's own (host tools) joins an
// --only-tools list as MCP:agentcli.
func buildArgs(req *agentcli.Request, systemFile, settings string) []string {
	args := []string{"exec", "--output-format=stream-json", "--skip-permissions-unsafe"}
	if driver.Mode(req) == agentcli.PermissionPlan {
		args = append(args, "--use-spec")
	}
	only, remove := execTools(req)
	if only != nil {
		args = append(args, "--only-tools="+strings.Join(only, ","))
	}
	if only == nil && len(req.MCPServers) > 0 {
		// Without it droid hides the servers' tools from the model
		// (they are neither offered nor listed as deferred tools).
		args = append(args, "--add-tools="+strings.Join(mcpSelectors(req), ","))
	}
	if len(remove) > 0 {
		args = append(args, "--remove-tools="+strings.Join(remove, ","))
	}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.Effort != "" {
		args = append(args, "--reasoning-effort="+string(req.Effort))
	}
	if systemFile != "" {
		args = append(args, "--append-system-prompt-file="+systemFile)
	}
	if settings != "" {
		args = append(args, "--settings="+settings)
	}
	if req.ForkSession && req.SessionID != "" {
		args = append(args, "--fork="+req.SessionID) // see manage.go
	}
	return append(args, req.ExtraArgs...)
}

// execTools returns the --only-tools list of req (nil for none: every
// tool) and its --remove-tools list.
func execTools(req *agentcli.Request) (only, remove []string) {
	switch {
	case len(req.AllowedTools) > 0:
		only = []string{}
		for _, t := range req.AllowedTools {
			for _, n := range droidNames(t) {
				if !slices.Contains(only, n) {
					only = append(only, n)
				}
			}
		}
	case driver.Mode(req) != agentcli.PermissionBypass:
		only = slices.Clone(readOnly)
	}
	if only != nil && hasHost(req) {
		only = append(only, hostSelector)
	}
	for _, t := range req.DisallowedTools {
		remove = append(remove, droidNames(t)...)
	}
	return only, remove
}

// droidNames returns droid's tool ids of a rule (validated): a canonical
// name maps to droid's tools of it (Bash is Execute, Write is Create,
// Edit is Edit and ApplyPatch, ...), any other name stays as it is, and
// an MCP rule is droid's selector MCP:SERVER[/TOOL], each part
// percent-encoded.
func droidNames(rule string) []string {
	r, err := driver.ParseRule(rule)
	if err != nil {
		return nil
	}
	if r.IsMCP() {
		sel := "MCP:" + url.PathEscape(r.MCPServer)
		if r.MCPTool != "" {
			sel += "/" + url.PathEscape(r.MCPTool)
		}
		return []string{sel}
	}
	if names := tools.Resolve(r.Name); len(names) > 0 {
		return names
	}
	return []string{r.Name}
}

// validate checks the request fields that reach droid's argv and the
// tool rules droid can hold. It is pure.
//
// Request.SessionID must be a session UUID. Tool rules must not be empty
// or start with "-" (driver.CheckToolRules), and hold no pattern: droid's
// tool lists name whole tools ("Bash(git *)" is an *UnsupportedError).
// The tool lists of a live session, which droid does not take (see
// live.go), are checked when it starts.
func validate(req *agentcli.Request) error {
	if id := req.SessionID; id != "" && !driver.IsUUID(id) {
		return driver.SessionError(Name, "a session UUID")
	}
	if err := validateManage(req); err != nil {
		return err
	}
	if err := driver.CheckToolRules(Name, req); err != nil {
		return err
	}
	if err := checkHooks(req); err != nil {
		return err
	}
	for _, t := range append(slices.Clone(req.AllowedTools), req.DisallowedTools...) {
		if r, err := driver.ParseRule(t); err == nil && r.HasPattern {
			return &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools",
				Reason: fmt.Sprintf("%q: droid's tool lists name whole tools; it has no per-command rules", r.Text)}
		}
	}
	return nil
}

// promptText returns the prompt as droid must read it: droid attaches
// the content of every file or directory a prompt tags ("@README.md": an
// "@" not preceded by a letter, digit or one of _.-+, then a path that
// exists under the working directory), though it passes the text on as it
// is (verified with droid 0.225.2; a backslash does not escape it). A word
// joiner (U+2060, invisible) goes after each such "@", so that no path
// follows it: the model receives "@\u2060README.md" and no file.
func promptText(p string) string {
	if !strings.Contains(p, "@") {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 16)
	for i := 0; i < len(p); i++ {
		b.WriteByte(p[i])
		if p[i] == '@' && i+1 < len(p) && (i == 0 || !tagWordByte(p[i-1])) {
			b.WriteString("\u2060")
		}
	}
	return b.String()
}

// tagWordByte reports whether droid reads c before an "@" as part of a
// word (an e-mail address, not a tag).
func tagWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-+", c) >= 0
}
