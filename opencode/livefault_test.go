package opencode

import (
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// opencode acp sets no mode outside plan.
func init() { kit.Live = backendtest.ACPLive(false) }

func TestLiveFaults(t *testing.T) { backendtest.LiveFaults(t, kit) }
