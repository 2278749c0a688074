package driver

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// DropUISettings warns about and clears each setting that is set, and
// leaves the others alone; under Options.Strict the first set one is an
// *agentcli.UnsupportedError and nothing after it is cleared.
func TestDropUISettings(t *testing.T) {
	var log bytes.Buffer
	r := &Run{backend: "b", Options: &agentcli.Options{}, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	req := agentcli.Request{Model: "m", MaxTurns: 3}
	list := func() []UISetting {
		return []UISetting{
			{req.Effort != "", "reasoning effort", func() { req.Effort = "" }},
			{req.MaxTurns > 0, "max turns", func() { req.MaxTurns = 0 }},
			{req.Model != "", "model", func() { req.Model = "" }},
		}
	}
	if err := r.DropUISettings(list()...); err != nil {
		t.Fatal(err)
	}
	if req.MaxTurns != 0 || req.Model != "" {
		t.Errorf("not cleared: %+v", req)
	}
	if out := log.String(); !strings.Contains(out, "max turns") || !strings.Contains(out, "model") || strings.Contains(out, "effort") {
		t.Errorf("warnings: %s", out)
	}

	req = agentcli.Request{Model: "m", MaxTurns: 3}
	r.Options.Strict = true
	var ue *agentcli.UnsupportedError
	if err := r.DropUISettings(list()...); !errors.As(err, &ue) || ue.Feature != "max turns" || ue.Backend != "b" {
		t.Fatalf("strict: %v", err)
	}
	if req.MaxTurns != 3 || req.Model != "m" {
		t.Errorf("strict: changed %+v", req)
	}
}
