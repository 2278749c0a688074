package droid

import (
	"testing"

	"github.com/agentcli/agentcli/internal/backendtest"
)

// droid's ACP daemon gets its session mode with session/set_mode (see
// live.go).
func init() { kit.Live = backendtest.ACPLive(true) }

func TestLiveFaults(t *testing.T) { backendtest.LiveFaults(t, kit) }
