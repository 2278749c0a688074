package command

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentcli/agentcli"
)

// chatCommand runs a -chat line that is one of agentrun's own commands
// (handled reports that it was one; failed that it failed):
//
//	/model NAME         switch the session's model (agentcli.SetModel)
//	/permission MODE    switch its permission mode: bypass, ask, deny or plan (agentcli.SetPermission)
//
// Any other line, "/help" included, is a prompt for the agent.
func chatCommand(ctx context.Context, s agentcli.Session, line string, stderr io.Writer) (handled, failed bool) {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	var err error
	switch cmd {
	case "/model":
		err = agentcli.SetModel(ctx, s, arg)
	case "/permission":
		switch m := agentcli.PermissionMode(arg); m {
		case agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan:
			err = agentcli.SetPermission(ctx, s, m)
		default:
			err = fmt.Errorf("unknown permission mode %q (bypass, ask, deny or plan)", arg)
		}
	default:
		return false, false
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentrun:", err)
		return true, true
	}
	fmt.Fprintf(stderr, "agentrun: %s %s\n", cmd[1:], arg)
	return true, false
}
