package copilot

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// files are the private files of one run, in its temporary directory;
// "" means none.
type files struct {
	mcp   string // the MCP configuration (--additional-mcp-config=@FILE)
	usage string // where copilot writes its usage statistics
	// plugin is the hooks plugin's directory (--plugin-dir=DIR; hooks.go)
	plugin string
}

// commonArgs returns the flags a run, a live session and the interactive
// UI share: the tool lists' flags (--allow-all under bypass among them),
// the model, the effort, the MCP configuration. It is pure.
func commonArgs(req *agentcli.Request, p toolPolicy, f files) []string {
	var args []string
	args = append(args, p.args()...)
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	if req.Effort != "" {
		args = append(args, "--reasoning-effort="+string(req.Effort))
	}
	if f.mcp != "" {
		args = append(args, "--additional-mcp-config=@"+f.mcp)
	}
	if f.plugin != "" {
		args = append(args, "--plugin-dir="+f.plugin)
	}
	return args
}

// buildArgs returns the arguments of a one-shot run (see the package
// documentation): newID, when set, is the UUID of the new session. It is
// pure.
func buildArgs(req *agentcli.Request, p toolPolicy, f files, newID string) []string {
	args := []string{"--output-format=json", "--no-auto-update"}
	args = append(args, commonArgs(req, p, f)...)
	if driver.Mode(req) == agentcli.PermissionPlan {
		args = append(args, "--plan")
	}
	if req.SessionID != "" {
		args = append(args, "--resume="+req.SessionID)
	} else if newID != "" {
		args = append(args, "--session-id="+newID)
	}
	if f.usage != "" {
		args = append(args, "--usage-output-file="+f.usage)
	}
	args = append(args, questionArgs(req)...)
	return append(args, req.ExtraArgs...)
}

// validate checks what copilot's command line would misread: a session id
// that is not a UUID (copilot would also take a session name or an id
// prefix), tool rules, and a system prompt copilot cannot carry.
func validate(req *agentcli.Request) error {
	if req.SessionID != "" && !driver.IsUUID(req.SessionID) {
		return driver.SessionError(Name, "a copilot session id (a UUID)")
	}
	if req.NewSessionID != "" && req.ForkSession {
		return &agentcli.UnsupportedError{Backend: Name, Feature: "a caller-chosen id for a fork",
			Reason: "copilot 1.0.102's sessions.fork takes no id for the fork (see manage.go)"}
	}
	if err := driver.CheckToolRules(Name, req); err != nil {
		return err
	}
	if strings.IndexByte(req.SystemPrompt, 0) >= 0 {
		return &agentcli.RequestError{Backend: Name, Field: "SystemPrompt", Reason: "contains a NUL byte"}
	}
	_, err := policyFor(req)
	return err
}

// prepare builds one run.
func prepare(ctx context.Context, r *driver.Run) (*driver.Job, error) {
	if err := checkNewID(r, r.Req); err != nil {
		return nil, err
	}
	req, err := forked(ctx, r, r.Req) // manage.go
	if err != nil {
		return nil, err
	}
	s, err := setUp(r, req, true)
	if err != nil {
		return nil, err
	}
	p, f, env := s.p, s.f, s.env
	f.usage = filepath.Join(s.tmp, "usage.json")
	id, newID := req.SessionID, ""
	if id == "" {
		if newID = req.NewSessionID; newID == "" {
			if newID, err = newUUID(); err != nil {
				return nil, err
			}
		}
		id = newID
	}
	return &driver.Job{
		Args:   buildArgs(req, p, f, newID),
		Stdin:  []byte(req.Prompt),
		Env:    env,
		Before: [][]byte{sessionLine(id)},
		After:  func() [][]byte { return usageLine(f.usage) },
	}, nil
}

// setup is what a run, a live session and the interactive UI prepare
// alike (see setUp).
type setup struct {
	p   toolPolicy
	f   files
	tmp string   // the run's temporary directory
	env []string // to add to the CLI's environment
}

// setUp prepares a run of req (a one-shot run, a live session or the
// interactive UI): its tool policy, and in the run's temporary directory
// its MCP configuration and, when hooks is set, its hooks plugin, with
// the environment they and runEnv add.
func setUp(r *driver.Run, req *agentcli.Request, hooks bool) (setup, error) {
	p, err := policyFor(req)
	if err != nil {
		return setup{}, err
	}
	tmp, err := r.TempDir()
	if err != nil {
		return setup{}, err
	}
	s := setup{p: p, tmp: tmp}
	var mcpEnv []string
	if s.f.mcp, mcpEnv, err = writeMCPConfig(tmp, req.MCPServers, p); err != nil {
		return setup{}, err
	}
	if s.env, err = runEnv(r, tmp); err != nil {
		return setup{}, err
	}
	s.env = append(s.env, mcpEnv...)
	if !hooks {
		return s, nil
	}
	var hookEnv []string
	if s.f.plugin, hookEnv, err = hookPlugin(r, tmp); err != nil {
		return setup{}, err
	}
	s.env = append(s.env, hookEnv...)
	return s, nil
}

// newUUID returns a random (version 4) UUID.
var newUUID = func() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

// sessionLine is the line that tells the parser the run's session id,
// first ({"type":"agentcli.session","sessionId":ID}): copilot prints it
// only at the end, and agentcli chooses it for a new session
// (--session-id).
func sessionLine(id string) []byte {
	b, _ := json.Marshal(struct {
		Type      string `json:"type"`
		SessionID string `json:"sessionId"`
	}{sessionType, id})
	return b
}

// sessionType is the type of the line that carries the session id.
const sessionType = "agentcli.session"

// runEnv returns the environment entries of a run, a live session or the
// interactive UI: COPILOT_ALLOW_ALL off but under bypass (a caller's
// "true" would approve every tool and trust the folder), and the system
// prompt's instructions directory (see the package documentation).
func runEnv(r *driver.Run, tmp string) ([]string, error) {
	var env []string
	if r.Req.Permission != agentcli.PermissionBypass && r.Lookup("COPILOT_ALLOW_ALL") != "" {
		env = append(env, "COPILOT_ALLOW_ALL=")
	}
	if r.Req.SystemPrompt == "" {
		return env, nil
	}
	dir := filepath.Join(tmp, "instructions")
	if strings.Contains(dir, ",") {
		return nil, &agentcli.UnsupportedError{Backend: Name, Feature: "system prompt",
			Reason: "the temporary directory's path holds a comma, which COPILOT_CUSTOM_INSTRUCTIONS_DIRS cannot carry (set TMPDIR)"}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "agentcli.instructions.md"), []byte(r.Req.SystemPrompt), 0o600); err != nil {
		return nil, err
	}
	dirs := dir
	if v := r.Lookup("COPILOT_CUSTOM_INSTRUCTIONS_DIRS"); v != "" {
		dirs = v + "," + dir
	}
	return append(env, "COPILOT_CUSTOM_INSTRUCTIONS_DIRS="+dirs), nil
}

// writeMCPConfig writes the request's MCP servers that p keeps to
// mcp.json in dir (a private 0700 directory) and returns its path, or ""
// when there are none, and the environment entry its values need (see
// dollar).
func writeMCPConfig(dir string, servers []agentcli.MCPServer, p toolPolicy) (string, []string, error) {
	b, err := mcpConfig(servers, p)
	if err != nil || b == nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", nil, err
	}
	return path, []string{dollarVar + "=$"}, nil
}

// dollarVar is a variable whose value, "$", the MCP configuration refers
// to for every "$" of the caller's values. copilot 1.0.102 expands $NAME,
// ${NAME} and ${NAME:-DEFAULT} in an MCP server's command, arguments,
// environment, URL and headers, from its own environment, in one pass and
// with no escape ("$$HOME" and "\$HOME" expand HOME too); a reference to
// a variable it does not know stays as written. "${AGENTCLI_COPILOT_DOLLAR}"
// expands to "$" and nothing after it is expanded again, so every value
// arrives as given (checked with hostile values by conformance
// TestMCPServers).
const dollarVar = "AGENTCLI_COPILOT_DOLLAR"

// dollar escapes s for copilot's expansion (see dollarVar).
func dollar(s string) string { return strings.ReplaceAll(s, "$", "${"+dollarVar+"}") }

// mcpConfig returns copilot's MCP configuration of the servers p keeps, or
// nil for none; agentcli's own server (p.host) gets "timeout"
// driver.HostToolTimeout. It is pure.
func mcpConfig(servers []agentcli.MCPServer, p toolPolicy) ([]byte, error) {
	cfg := map[string]any{}
	for _, s := range servers {
		keep, filter := p.keeps(s.Name)
		if !keep {
			continue
		}
		toolList := []string{"*"}
		if filter != nil {
			toolList = filter
		}
		if s.URL != "" {
			h := map[string]string{}
			for k, v := range s.Headers {
				h[k] = dollar(v)
			}
			e := map[string]any{"type": "http", "url": dollar(s.URL), "headers": h, "tools": toolList}
			if p.host && s.Name == agentcli.HostServerName {
				// copilot's limit for one call of the server's tools
				// (ms): a host tool's call ends when its handler
				// returns or the run ends.
				e["timeout"] = driver.HostToolTimeout.Milliseconds()
			}
			cfg[s.Name] = e
			continue
		}
		args := []string{}
		for _, a := range s.Args {
			args = append(args, dollar(a))
		}
		env := map[string]string{}
		for k, v := range driver.MCPEnv(s) {
			env[k] = dollar(v)
		}
		cfg[s.Name] = map[string]any{"type": "local", "command": dollar(s.Command), "args": args, "env": env, "tools": toolList}
	}
	if len(cfg) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(map[string]any{"mcpServers": cfg})
	if err != nil {
		return nil, fmt.Errorf("copilot: MCP configuration: %w", err)
	}
	return b, nil
}

// usageLine returns the usage statistics copilot wrote to path as the one
// line the parser reads ({"type":"agentcli.usage_file","data":FILE}), or
// nothing when copilot wrote none or not JSON.
func usageLine(path string) [][]byte {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxUsageFile+1))
	if err != nil || len(b) > maxUsageFile || !json.Valid(b) {
		return nil
	}
	line, err := json.Marshal(struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}{usageType, b})
	if err != nil {
		return nil
	}
	return [][]byte{line}
}

// usageType is the type of the line that carries the usage file.
const usageType = "agentcli.usage_file"

// maxUsageFile bounds the usage file read (a few KiB per model).
const maxUsageFile = 1 << 20
