package copilot

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/acp"
)

// hostReq returns a request with a host tool, agentcli's server among
// its MCP servers (as the runner hands it to the backend), and the rest
// from r.
func hostReq(r agentcli.Request) *agentcli.Request {
	r.Tools = []agentcli.Tool{agentcli.NewTool("now", "the time", func(context.Context, struct{}) (string, error) { return "", nil })}
	r.MCPServers = append(r.MCPServers, agentcli.MCPServer{Name: agentcli.HostServerName, URL: "http://127.0.0.1:1/mcp"})
	return &r
}

// What agentcli's server (hosttools.go) and hooks (hooks.go) make of
// the tool flags; the flags were checked by conformance TestHostTools,
// TestLiveHostToolsDeny and TestHooks on copilot 1.0.102.
func TestHostToolFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		req  *agentcli.Request
		want []string
	}{
		{"host tools, deny", hostReq(agentcli.Request{}), []string{"--allow-tool=agentcli"}},
		{"host tools and an allow list", hostReq(agentcli.Request{AllowedTools: []string{"Read", "Write"}}),
			[]string{"--available-tools=view,create,agentcli", "--allow-tool=write", "--allow-tool=agentcli"}},
		{"host tools, bypass", hostReq(agentcli.Request{Permission: agentcli.PermissionBypass}),
			[]string{"--allow-all", "--allow-tool=agentcli"}},
		{"a server of the caller's named agentcli, no host tools", &agentcli.Request{MCPServers: []agentcli.MCPServer{{Name: "agentcli", Command: "x"}}}, nil},
	} {
		p, err := policyFor(c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := p.args(); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// The allow list keeps the server's entry, every tool of it.
	req := hostReq(agentcli.Request{AllowedTools: []string{"Read"}})
	p, _ := policyFor(req)
	if keep, filter := p.keeps(agentcli.HostServerName); !keep || filter != nil {
		t.Errorf("keeps(agentcli) = %v, %q; want true, every tool", keep, filter)
	}
	if got := questionArgs(&agentcli.Request{OnQuestion: func(context.Context, *agentcli.Question) (*agentcli.Answer, error) { return nil, nil }}); !slices.Equal(got, []string{"--no-ask-user"}) {
		t.Errorf("questionArgs = %q", got)
	}
}

// A live session never passes --allow-all (switch.go): bypass is the
// allow_all option.
func TestLiveBypass(t *testing.T) {
	req := &agentcli.Request{Permission: agentcli.PermissionBypass}
	p, _ := policyFor(req)
	if args := liveArgs(req, p, files{}); slices.Contains(args, "--allow-all") {
		t.Errorf("live args %q", args)
	}
	if opts := acpConfig(req, "/d").Options; !slices.Contains(opts, acp.Option{ID: "allow_all", Value: "on"}) {
		t.Errorf("bypass options %+v, want allow_all on", opts)
	}
	req.Permission = agentcli.PermissionAsk
	if opts := acpConfig(req, "/d").Options; len(opts) != 0 {
		t.Errorf("ask options %+v, want none", opts)
	}
}

// SetPermission's options for each mode (checked on copilot 1.0.102 by
// conformance TestSwitch).
func TestSwitchOptions(t *testing.T) {
	sw := switching(&agentcli.Request{})
	for m, want := range map[agentcli.PermissionMode][]acp.Option{
		agentcli.PermissionBypass: {{ID: "mode", Value: agentMode}, {ID: "allow_all", Value: "on"}},
		agentcli.PermissionAsk:    {{ID: "mode", Value: agentMode}, {ID: "allow_all", Value: "off"}},
		agentcli.PermissionDeny:   {{ID: "mode", Value: agentMode}, {ID: "allow_all", Value: "off"}},
		agentcli.PermissionPlan:   {{ID: "mode", Value: planMode}, {ID: "allow_all", Value: "off"}},
	} {
		got, err := sw.ModeOptions(m)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", m, got, err, want)
		}
	}
	// A command pattern: paths and URLs are approved at start under
	// bypass, which no option takes back.
	pat := agentcli.Request{AllowedTools: []string{"Bash(git *)"}}
	var ue *agentcli.UnsupportedError
	if _, err := switching(&pat).ModeOptions(agentcli.PermissionBypass); !errors.As(err, &ue) {
		t.Errorf("deny → bypass with a pattern: %v, want an *UnsupportedError", err)
	}
	if _, err := switching(&pat).ModeOptions(agentcli.PermissionPlan); err != nil {
		t.Errorf("deny → plan with a pattern: %v", err)
	}
	pat.Permission = agentcli.PermissionBypass
	if _, err := switching(&pat).ModeOptions(agentcli.PermissionAsk); !errors.As(err, &ue) {
		t.Errorf("bypass → ask with a pattern: %v, want an *UnsupportedError", err)
	}
}
