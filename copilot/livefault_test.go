package copilot

import (
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// copilot --acp sets no session mode (plan is a config option).
func init() { kit.Live = backendtest.ACPLive(false) }

func TestLiveFaults(t *testing.T) { backendtest.LiveFaults(t, kit) }
