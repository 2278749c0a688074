//go:build unix

package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestUnsupportedLimits: a limit a backend cannot enforce (MaxTurns,
// MaxBudgetUSD) is an *UnsupportedError before the CLI starts, Strict or
// not, one-shot and live: ignoring it would let the agent do more than
// the caller allowed.
func TestUnsupportedLimits(t *testing.T) {
	for _, cli := range settingsCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			b := openBackend(t, cli, nil)
			caps := b.Capabilities()
			e := newEnv(t, cli, agentclitest.Turn{Text: "never"})
			var checked int
			for _, c := range []struct {
				feature string
				lacks   bool
				set     func(*agentcli.Request)
			}{
				{"max turns", !caps.MaxTurns, func(r *agentcli.Request) { r.MaxTurns = 2 }},
				{"spending cap", !caps.MaxBudget, func(r *agentcli.Request) { r.MaxBudgetUSD = 1 }},
			} {
				if !c.lacks {
					continue
				}
				checked++
				req, tag := e.request("hi")
				c.set(req)
				_, _, err := run(t, b, req, tag)
				var ue *agentcli.UnsupportedError
				if !errors.As(err, &ue) || !strings.Contains(ue.Feature, c.feature) {
					t.Errorf("Run with %s: %s, want an *UnsupportedError", c.feature, errSummary(err))
				}
				lreq, ltag := e.liveRequest()
				c.set(lreq)
				s, err := agentcli.StartSession(context.Background(), b, lreq)
				if err == nil {
					s.Close()
				}
				if !errors.As(err, &ue) {
					t.Errorf("StartSession with %s: %s, want an *UnsupportedError", c.feature, errSummary(err))
				}
				assertNoProcs(t, tag)
				assertNoProcs(t, ltag)
			}
			if got := len(e.srv.Requests()); got != 0 {
				t.Errorf("%d model requests", got)
			}
			t.Logf("%d limits %s cannot enforce refused", checked, cli)
		})
	}
}
