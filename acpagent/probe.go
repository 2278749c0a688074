package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/acp"
	"github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/tools/clis"
)

// Info is what an agent says of itself in its answer to initialize.
type Info struct {
	// Name and Version are the agent's agentInfo.
	Name, Version string
	// LoadSession: the agent can load (resume) a session.
	LoadSession bool
	// Image: prompts may hold images.
	Image bool
	// MCPHTTP and MCPSSE: the agent takes MCP servers over HTTP and SSE
	// (stdio is every agent's).
	MCPHTTP, MCPSSE bool
	// Raw is the whole answer.
	Raw json.RawMessage
}

func infoOf(i *initInfo, raw json.RawMessage) *Info {
	out := &Info{
		LoadSession: i.AgentCapabilities.LoadSession,
		Image:       i.AgentCapabilities.PromptCapabilities.Image,
		MCPHTTP:     i.AgentCapabilities.MCPCapabilities.HTTP,
		MCPSSE:      i.AgentCapabilities.MCPCapabilities.SSE,
		Raw:         raw,
	}
	if i.AgentInfo != nil {
		out.Name, out.Version = i.AgentInfo.Name, i.AgentInfo.Version
	}
	return out
}

// Probe starts the agent of b (a backend of this package, or one that
// wraps it), sends initialize, and returns what the agent said, and the
// binary it ran; the agent is stopped before Probe returns. It opens no
// session and makes no model call. b's Capabilities reflect the answer
// from then on. Probe blocks until the agent answered or ctx ends (30
// seconds at most).
func Probe(ctx context.Context, b agentcli.Backend) (*Info, string, error) {
	var ab *backend
	for x := b; x != nil; {
		if v, ok := x.(*backend); ok {
			ab = v
			break
		}
		u, ok := x.(interface{ Unwrap() agentcli.Backend })
		if !ok {
			break
		}
		x = u.Unwrap()
	}
	if ab == nil {
		return nil, "", errors.New("acpagent: Probe: not an ACP agent's backend")
	}
	if err := ab.Check(ctx); err != nil {
		return nil, "", err
	}
	path, err := ab.resolve()
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	o := ab.opts
	if o.KillGrace <= 0 {
		o.KillGrace = 3 * time.Second
	}
	var raw json.RawMessage
	s, err := live.Start(ctx, live.Config{
		Backend: ab.st.agent.Name,
		Path:    path,
		Options: o,
		Args:    ab.st.args,
		Env:     childEnv(o.Env),
		Request: &agentcli.Request{},
		Proto: func(h *live.Host) live.Proto {
			p := &probe{h: h, raw: &raw}
			p.rpc = &live.RPC{Host: h,
				OnRequest: func(id json.RawMessage, method string, _ json.RawMessage, _ []byte) {
					p.rpc.ReplyError(id, -32601, "agentcli is only asking who the agent is")
				},
			}
			return p
		},
	})
	if err != nil {
		return nil, path, err
	}
	s.Close()
	i, err := ab.st.seen(raw)
	if err != nil {
		return nil, path, err
	}
	return infoOf(i, raw), path, nil
}

// resolve finds the agent's binary as a run would: Options.Path or the
// agent's binary on PATH, then, for a CLI pinned in tools/clis at the
// agent's version, the per-user cache `agentcli install` fills.
func (b *backend) resolve() (string, error) {
	p := cmpOr(b.opts.Path, b.st.agent.Binary)
	if strings.ContainsRune(p, os.PathSeparator) {
		return filepath.Abs(p)
	}
	if found, err := exec.LookPath(p); err == nil {
		return found, nil
	}
	if cache, err := clis.CacheDir(); err == nil {
		for _, c := range clis.All() {
			if c.Binary == p && c.Version == b.st.agent.Version {
				if bin := c.Bin(cache); isExec(bin) {
					return bin, nil
				}
			}
		}
	}
	return "", &agentcli.BinaryError{Backend: b.st.agent.Name, Path: p, Err: agentcli.ErrNotFound}
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// probe is the protocol of Probe: initialize, and nothing else.
type probe struct {
	h   *live.Host
	rpc *live.RPC
	raw *json.RawMessage
}

func (p *probe) Start(ctx context.Context) error {
	raw, err := acp.Initialize(ctx, p.rpc)
	if err != nil {
		var re *live.RPCError
		if errors.As(err, &re) {
			return p.h.Errors().Protocol(sdk.AgentMethodInitialize, re.Code, re.Message, nil)
		}
		return err
	}
	*p.raw = raw
	return nil
}

func (p *probe) Line(line []byte) { p.rpc.Line(line) }

func (p *probe) Prompt(context.Context, string) error {
	return errors.New("acpagent: a probe takes no prompt")
}

func (p *probe) Interrupt(context.Context) error { return nil }

func (p *probe) Exit(e driver.Exit) error {
	if e.Code == 0 {
		return nil
	}
	return p.h.Errors().Exited(e)
}
