package gemini

import (
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// gemini --acp selects its approval mode with session/set_mode.
func init() { kit.Live = backendtest.ACPLive(true) }

func TestLiveFaults(t *testing.T) { backendtest.LiveFaults(t, kit) }
