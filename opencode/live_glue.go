package opencode

import (
	"context"

	"github.com/agentcli/agentcli"
)

// StartSession starts a live OpenCode session (see agentcli.SessionStarter).
func (b *Backend) StartSession(ctx context.Context, req *agentcli.Request) (agentcli.Session, error) {
	return startSession(ctx, b.cfg, req)
}
