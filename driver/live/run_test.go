package live_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
)

// RunConfig copies the run's process settings, appends env to a copy of
// r.Env (a backing array with room to spare is not written), takes req
// as the session's request, and starts the wire log only when the run's
// request asks for one, with the args and the protocol's record.
func TestRunConfig(t *testing.T) {
	env := make([]string, 1, 4)
	env[0] = "A=1"
	logger := slog.New(slog.DiscardHandler)
	r := &driver.Run{Req: &agentcli.Request{Model: "m"}, Path: "/bin/cli", Dir: "/work", Env: env,
		Options: &agentcli.Options{KillGrace: 7}, Logger: logger}
	req := &agentcli.Request{Model: "other"}
	cfg := live.RunConfig(r, "b", req, []string{"--x"}, []string{"B=2"}, nil)
	if cfg.Backend != "b" || cfg.Path != "/bin/cli" || cfg.Dir != "/work" || cfg.Options.KillGrace != 7 || cfg.Logger != logger ||
		cfg.Request != req || !slices.Equal(cfg.Args, []string{"--x"}) || cfg.Cleanup == nil || cfg.Errors == nil {
		t.Errorf("config %+v", cfg)
	}
	if !slices.Equal(cfg.Env, []string{"A=1", "B=2"}) || env[:2][1] != "" {
		t.Errorf("env %q, run's backing array %q", cfg.Env, env[:2])
	}
	if cfg.Wire != nil || cfg.Proto != nil || cfg.EditInput {
		t.Errorf("wire log %v or protocol set", cfg.Wire)
	}
	var log bytes.Buffer
	r.Req = &agentcli.Request{Model: "m", WireLog: &log}
	if cfg = live.RunConfig(r, "b", req, []string{"--x"}, nil, map[string]string{"mode": "plan"}); cfg.Wire == nil {
		t.Fatal("no wire log")
	}
	if s := log.String(); !strings.Contains(s, `"backend":"b"`) || !strings.Contains(s, `"--x"`) || !strings.Contains(s, `"mode":"plan"`) {
		t.Errorf("start record %s", s)
	}
	rc := live.ReplayConfig(r, "b", nil)
	if rc.Backend != "b" || rc.Request != r.Req || rc.Errors == nil || rc.Options.KillGrace != 7 || rc.Path != "" {
		t.Errorf("replay config %+v", rc)
	}
}
