package acpagent

import (
	"os"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/drivertest"
)

func TestMain(m *testing.M) {
	drivertest.MaybeRunFakeCLI(kit)
	os.Exit(m.Run())
}

// kit drives the generic backend against a fake ACP agent. Every run of
// an ACP agent is a turn of a live session, so the live faults are its
// fault matrix (the one-shot matrix scripts a CLI's output stream, which
// an ACP agent does not have).
// Success (for the hostile requests) is a whole session: the handshake,
// a session/prompt and its answer.
var kit = drivertest.Kit{
	Name: Name,
	New:  New,
	Live: drivertest.ACPLive(false),
	// The model and a resumed session go in JSON-RPC messages
	// (session/set_config_option, session/load) that the fake's script
	// does not answer; neither is ever an argument.
	Hostile: func(req *agentcli.Request) { req.Model, req.SessionID = "", "" },
	Success: func(text, sess string) []string {
		lk := drivertest.ACPLive(false)
		return append(append(append([]string{"live"}, lk.Handshake(sess)...), lk.Prompt("")...), lk.Reply(sess, "", text)...)
	},
}

func TestLiveFaults(t *testing.T) { drivertest.LiveFaults(t, kit) }

// TestHostileRequests: no caller string becomes an option of the agent's
// command line (which is Options.Args and Request.ExtraArgs alone).
func TestHostileRequests(t *testing.T) { drivertest.HostileRequests(t, kit) }
