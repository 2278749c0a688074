// Package acpagent is the agentcli backend for any agent that speaks the
// Agent Client Protocol (ACP) over stdio. Importing it registers the
// generic backend as "acp" and every known agent of Agents under its own
// name ("qwen-acp", "copilot-acp", "droid-acp", "claude-acp", "codex-acp",
// "gemini-acp", "opencode-acp").
//
// The generic backend runs the command a program gives it:
//
//	b, err := agentcli.Open("acp", &agentcli.Options{Path: "qwen", Args: []string{"--acp"}})
//
// Options.Path is the agent's binary and Options.Args the arguments that
// start it in ACP mode (Request.ExtraArgs follow them). A known agent has
// its own binary and arguments, which Options.Path and Options.Args
// replace when set.
//
// # Runs and sessions
//
// Every run is one turn of a live session: the agent is started, sent
// initialize (no file system or terminal offered: it does its own I/O),
// session/new in Request.Dir with Request.MCPServers (or session/load for
// Request.SessionID), its mode chosen (see Permissions) and, for a
// Request.Model, its "model" config option set; then each turn is a
// session/prompt whose answer ends it, and session/cancel interrupts it.
// When the session closes, stdin is closed and an agent that does not
// exit by itself within 300 ms (the Zed adapters never do) is stopped
// with the kill ladder. The agent's requests other than
// session/request_permission (qwen's craft/drainMidTurnQueue, file system
// and terminal calls) are answered with a method-not-found error and the
// turn goes on; session updates of kinds agentcli does not know are
// EventUnknown events.
//
// Request.SystemPrompt is prepended to the first prompt of a new session
// (ACP has no system prompt). A prompt whose text starts with "/" gets a
// zero-width space (U+200B) in front: ACP agents run their slash commands
// from prompts (copilot's "/allow-all on" approves every later tool call).
// Tool calls are named by their ACP kind (execute Bash, read Read, edit
// Edit, ...) when the agent sends no tool name; the title is kept in the
// permission request.
//
// # Permissions
//
// Every mode is the host's, on the agent's permission requests
// (session/request_permission), with the agent's own mode where it has
// one (Agent.Modes; the generic backend picks a mode named "plan" for
// PermissionPlan):
//
//	bypass  every request allowed (and the agent's mode that asks nothing, where known)
//	ask     the callback decides
//	deny    every request refused
//	plan    the agent's plan mode (an agent that offers none fails the start with an
//	        *agentcli.UnsupportedError), and every request refused
//
// The session can refuse only what the agent asks about: an agent
// configured to run a tool without asking runs it under every mode
// (opencode, by default, asks about nothing). The known agents are
// started so that they ask (Agent.Env, Agent.Modes); with the generic
// backend, configure the agent to ask (through Options.Env or its own
// configuration).
//
// The decision picks the agent's option by kind (allow_once, allow_always,
// reject_once, reject_always), never by id. Agents differ in what a
// refusal does: most end the turn, some tell the model (see each Agent's
// Note). ACP has no tool lists: Request.AllowedTools and DisallowedTools
// are refused with an *agentcli.UnsupportedError (an agent asks only for
// some tools, so answering from a list would not restrict the others).
//
// # Capabilities
//
// Capabilities reports what ACP guarantees of every agent (text deltas,
// live sessions, interrupt, MCP servers over stdio, the four permission
// modes, the system prompt prepended to the first prompt; host tools,
// questions, hooks on what the agent asks about, image and text
// attachments, SetModel and SetPermission, as features.go describes)
// and, once the Backend has seen an agent's answer to initialize (a run,
// a session, Doctor or Probe), what that agent advertised: Resume is its
// loadSession. Before, Resume is false. A request is checked against the
// advertisement when the session starts: resuming an agent without
// loadSession, an HTTP MCP server (host tools and questions among them)
// for an agent without mcpCapabilities.http, or an image for one without
// promptCapabilities.image, fails with an *agentcli.UnsupportedError.
//
// # Errors
//
// An agent that answers session/new with ACP's auth_required (-32000) is
// an *agentcli.ProtocolError matching agentcli.ErrAuth; a failed
// session/load one matching agentcli.ErrSessionNotFound; a failed
// session/prompt an *agentcli.ResultError, classified by its wording.
//
// # Doctor
//
// Diagnose starts the agent, sends initialize (no session, no model call),
// and reports the version the agent gives in agentInfo, compared with
// Agent.Version, with the credential variables that are set.
package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// Name is the registry name of the generic backend.
const Name = "acp"

func init() {
	driver.Register(Name, New)
	for _, a := range Agents {
		driver.Register(a.Name, func(o *agentcli.Options) agentcli.Backend { return NewAgent(a, o) })
	}
}

// New returns the generic ACP backend: it runs Options.Path with
// Options.Args. opts may be nil (the backend then has no agent to run); it
// is copied.
func New(opts *agentcli.Options) agentcli.Backend { return NewAgent(Agent{Name: Name}, opts) }

// NewAgent returns a backend for agent a (Options.Path and Options.Args,
// when set, replace its binary and arguments). opts may be nil; it is
// copied.
func NewAgent(a Agent, opts *agentcli.Options) agentcli.Backend {
	st := &state{agent: a, args: slices.Clone(a.Args)}
	if opts != nil && len(opts.Args) > 0 {
		st.args = slices.Clone(opts.Args)
	}
	pkg := a.Package
	if pkg != "" && a.Version != "" {
		pkg += "@" + a.Version
	}
	spec := &driver.Spec{
		Name:          a.Name,
		Binary:        a.Binary,
		Package:       pkg,
		Tested:        a.Version,
		Credentials:   a.Credentials,
		Caps:          agentCaps(a),
		Validate:      func(req *agentcli.Request) error { return validate(a.Name, req) },
		Prepare:       func(context.Context, *driver.Run) (*driver.Job, error) { return nil, errNotLive },
		NewParser:     func(*driver.Run) driver.Parser { return noParser{} },
		StartSession:  st.startSession,
		LiveRun:       func(*agentcli.Request) bool { return true },
		ReplaySession: st.replaySession,
	}
	b := &backend{Backend: driver.New(spec, opts), st: st}
	if opts != nil {
		b.opts = *opts
	}
	return b
}

// caps is what ACP guarantees of every agent, and what requests are
// checked against before the agent has said more (see Capabilities).
var caps = agentcli.Capabilities{
	TextDeltas:      true,
	Thinking:        true,
	Resume:          true,
	SystemPrompt:    agentcli.SystemPromptPrepend,
	Sessions:        true,
	Interrupt:       true,
	Steer:           agentcli.SteerQueued,
	PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan},
	MCP:             true,
	SetModel:        true,
	HostTools:       true,
	Questions:       true,
	Hooks:           hookSupport,
	Attachments:     attachmentKinds,
}

// agentCaps is caps with what switching a's sessions can do (see
// features.go).
func agentCaps(a Agent) agentcli.Capabilities {
	c := caps
	c.SetPermission = switchModes(a)
	return c
}

// errNotLive: every run of an ACP agent is a turn of a live session
// (Spec.LiveRun), so the one-shot path is never taken.
var errNotLive = errors.New("acpagent: a run of an ACP agent goes through a live session")

// validate refuses what no ACP agent can carry.
func validate(backend string, req *agentcli.Request) error {
	if len(req.AllowedTools) > 0 || len(req.DisallowedTools) > 0 {
		return &agentcli.UnsupportedError{Backend: backend, Feature: "allowed/disallowed tools",
			Reason: "ACP has no tool lists, and an agent asks only about some of its tools"}
	}
	return nil
}

// state is what one Backend knows of its agent.
type state struct {
	agent Agent
	args  []string

	mu   sync.Mutex
	info *initInfo // the agent's latest answer to initialize
}

// initInfo is what an agent's answer to initialize says.
type initInfo struct {
	ProtocolVersion   int `json:"protocolVersion"`
	AgentCapabilities struct {
		LoadSession        bool `json:"loadSession"`
		PromptCapabilities struct {
			Image bool `json:"image"`
		} `json:"promptCapabilities"`
		MCPCapabilities struct {
			HTTP bool `json:"http"`
			SSE  bool `json:"sse"`
		} `json:"mcpCapabilities"`
	} `json:"agentCapabilities"`
	AgentInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agentInfo"`
}

// seen records an answer to initialize.
func (s *state) seen(raw json.RawMessage) (*initInfo, error) {
	var info initInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, fmt.Errorf("acpagent: the answer to initialize: %w", err)
	}
	s.mu.Lock()
	s.info = &info
	s.mu.Unlock()
	return &info, nil
}

// onInitialize checks req against what the agent advertised.
func (s *state) onInitialize(req *agentcli.Request) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		info, err := s.seen(raw)
		if err != nil {
			return &agentcli.ProtocolError{Backend: s.agent.Name, Method: "initialize", Message: err.Error()}
		}
		if err := checkImages(s.agent.Name, req, info); err != nil {
			return err
		}
		if req.SessionID != "" && !info.AgentCapabilities.LoadSession {
			return &agentcli.UnsupportedError{Backend: s.agent.Name, Feature: "resume (Request.SessionID)",
				Reason: "the agent does not advertise loadSession"}
		}
		for _, m := range req.MCPServers {
			if m.URL != "" && !info.AgentCapabilities.MCPCapabilities.HTTP {
				return &agentcli.UnsupportedError{Backend: s.agent.Name, Feature: "HTTP MCP server " + m.Name,
					Reason: "the agent does not advertise mcpCapabilities.http"}
			}
			if m.URL == "" && info.AgentInfo != nil && info.AgentInfo.Name == "Copilot" {
				// Checked with copilot 1.0.102: it starts the HTTP
				// servers of session/new and silently ignores the
				// stdio ones (it never runs their command).
				return &agentcli.UnsupportedError{Backend: s.agent.Name, Feature: "stdio MCP server " + m.Name,
					Reason: "copilot's ACP agent ignores stdio MCP servers given in session/new (the copilot backend passes them in its configuration)"}
			}
		}
		return nil
	}
}

// modeOf chooses the session's mode for req's permission mode from what
// the agent offers (see Permissions).
func (s *state) modeOf(req *agentcli.Request) func([]string) (string, error) {
	perm := driver.Mode(req)
	return func(offered []string) (string, error) {
		want := s.agent.Modes[string(perm)]
		if want != "" && slices.Contains(offered, want) {
			return want, nil
		}
		if perm != agentcli.PermissionPlan {
			return "", nil // the host's answers are the mode
		}
		if want == "" {
			for _, m := range offered {
				if l := strings.ToLower(m); l == "plan" || strings.HasSuffix(l, "#plan") || strings.HasSuffix(l, "/plan") {
					return m, nil
				}
			}
		}
		return "", &agentcli.UnsupportedError{Backend: s.agent.Name, Feature: "permission mode plan",
			Reason: fmt.Sprintf("the agent offers no plan mode (its modes: %s)", strings.Join(offered, ", "))}
	}
}

// guardPrompt keeps a prompt from being run as one of the agent's slash
// commands.
func guardPrompt(p string) string {
	if strings.HasPrefix(strings.TrimSpace(p), "/") {
		return "\u200b" + p
	}
	return p
}

// acpConfig returns the session's ACP configuration (without Dir and the
// MCP servers' values, which only a live session needs).
func (s *state) acpConfig(req *agentcli.Request) acp.Config {
	ac := acp.Config{
		SessionID:    req.SessionID,
		Guard:        guardPrompt,
		KindNames:    true,
		OnInitialize: s.onInitialize(req),
		ModeOf:       s.modeOf(req),
		RawName:      hostToolName(req),
		Switch:       s.switching(req),
	}
	if req.Model != "" {
		ac.Options = append(ac.Options, acp.Option{ID: "model", Value: req.Model})
	}
	if req.SystemPrompt != "" && req.SessionID == "" {
		ac.FirstPrefix = req.SystemPrompt + "\n\n"
	}
	if s.agent.Name == "copilot-acp" {
		ac.Notice = copilotNotice
	}
	return ac
}

// copilotNotice reports whether a message chunk is one of copilot's
// session notices, which it sends as agent text ("Info: Disabled tools:
// ...").
func copilotNotice(text string) bool {
	for _, p := range []string{"Info: ", "Warning: "} {
		if len(text) > len(p) && strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// startSession starts a live session of the agent for the prepared run r.
func (s *state) startSession(ctx context.Context, r *driver.Run) (agentcli.Session, error) {
	req := r.Req
	ac := s.acpConfig(req)
	ac.Dir = r.Dir
	if len(req.MCPServers) > 0 {
		ac.MCPServers = acp.MCPServers(req.MCPServers, nil)
	}
	args := append(slices.Clone(s.args), req.ExtraArgs...)
	return acp.Start(ctx, r, s.agent.Name, req, args, s.agent.Env[string(driver.Mode(req))], ac)
}

// replaySession replays a live session's wire log, with the protocol
// configured as the log recorded it.
func (s *state) replaySession(r *driver.Run, proto json.RawMessage, log *wirelog.Reader) iter.Seq2[agentcli.Event, error] {
	req := *r.Req
	return acp.Replay(r, s.agent.Name, proto, log, s.acpConfig(&req), func(ac *acp.Config, _ []agentcli.MCPServer) {
		req.SessionID = ac.SessionID
		ac.OnInitialize = func(raw json.RawMessage) error { _, err := s.seen(raw); return err }
	})
}

// noParser is the parser of a one-shot run, which never happens (see
// errNotLive).
type noParser struct{}

func (noParser) Line([]byte) []agentcli.Event { return nil }

func (noParser) End(driver.Exit) driver.Outcome { return driver.Outcome{UnparsedErr: errNotLive} }

// backend is an ACP agent's agentcli.Backend: the driver's, with
// capabilities from what the agent advertised, a Check that names the
// missing command of the generic backend, and a Doctor that asks the
// agent itself.
type backend struct {
	agentcli.Backend
	st   *state
	opts agentcli.Options
}

// Unwrap returns the driver's backend, whose live sessions and replay
// agentcli.StartSession and agentcli.Replay use.
func (b *backend) Unwrap() agentcli.Backend { return b.Backend }

// Capabilities implements agentcli.Backend (see the package
// documentation).
func (b *backend) Capabilities() agentcli.Capabilities {
	c := b.Backend.Capabilities()
	b.st.mu.Lock()
	info := b.st.info
	b.st.mu.Unlock()
	c.Resume = info != nil && info.AgentCapabilities.LoadSession
	return c
}

// Check implements agentcli.Backend.
func (b *backend) Check(ctx context.Context) error {
	if b.st.agent.Binary == "" && b.opts.Path == "" {
		return &agentcli.BinaryError{Backend: b.st.agent.Name, Err: agentcli.ErrNotFound,
			Hint: `the generic ACP backend runs Options.Path with Options.Args, e.g. Path "qwen", Args ["--acp"]`}
	}
	return b.Backend.Check(ctx)
}

// probeTimeout bounds Doctor's initialize: an agent that never answers
// is reported, while one that only starts slowly on a busy machine (a
// Node or Bun agent takes seconds of CPU to start) is given its time.
const probeTimeout = time.Minute

// Diagnose implements Doctor's diagnosis: the binary, and the agent's own
// answer to initialize (no session, no model call).
func (b *backend) Diagnose(ctx context.Context) agentcli.Diagnosis {
	a := b.st.agent
	d := agentcli.Diagnosis{Backend: a.Name, Path: cmpOr(b.opts.Path, a.Binary), Tested: a.Version, Credentials: []string{}}
	if err := b.Check(ctx); err != nil {
		d.Status, d.Hint = agentcli.DiagnosisFailure, err.Error()
		if a.Binary == "" && b.opts.Path == "" {
			d.Status = agentcli.DiagnosisWarning
		}
		return d
	}
	env := childEnv(b.opts.Env)
	for _, k := range a.Credentials {
		if driver.Lookup(env, k) != "" {
			d.Credentials = append(d.Credentials, k)
		}
	}
	info, path, err := Probe(ctx, b)
	d.Path = path
	if err != nil {
		d.Status, d.Hint = agentcli.DiagnosisFailure, driver.Redact(err.Error())
		return d
	}
	d.Version = info.Version
	d.InRange = d.Version != "" && d.Version == a.Version
	d.Status = agentcli.DiagnosisOK
	switch {
	case a.Version == "":
		d.Status, d.Hint = agentcli.DiagnosisWarning, "an agent agentcli has not been tested with (it answered initialize)"
	case d.Version == "":
		d.Status, d.Hint = agentcli.DiagnosisWarning, "the agent reports no version in its answer to initialize"
	case !d.InRange:
		d.Status, d.Hint = agentcli.DiagnosisWarning, "version "+d.Version+" was not tested with this release of agentcli (tested: "+a.Version+")"
	case len(a.Credentials) > 0 && len(d.Credentials) == 0:
		d.Status, d.Hint = agentcli.DiagnosisWarning, "no credential variable is set (fine if the agent is logged in on its own)"
	}
	return d
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// childEnv is the environment a run of the agent gets without a request:
// this process's (CLAUDECODE left out, as the driver does) and extra.
func childEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDECODE=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
