package claude

// Switching mid-session and steering (agentcli.SetModel, SetPermission,
// Steer), checked against claude 2.1.330:
//
//   - SetModel is the set_model control request; claude takes any name
//     (a wrong one fails the next model request) and records the switch
//     as its /model command does, so the model then sees a note of it.
//   - SetPermission is set_permission_mode with the mode a session
//     started in that permission mode gets (permissionArgs: bypass
//     bypassPermissions, or dontAsk with an allow list; ask default; deny
//     dontAsk; plan plan). So that every mode is reachable, a live
//     session always starts with --permission-prompt-tool=stdio (claude
//     then asks the session, which decides by the session's mode:
//     whatever dontAsk or plan would ask is refused) and with
//     --allow-dangerously-skip-permissions, which only allows a later
//     switch to bypass: nothing switches to it but SetPermission
//     (PermissionBypass). As root, claude refuses that flag without
//     IS_SANDBOX=1 in its environment, as it refuses bypass: such a
//     session starts without it, and cannot be switched to bypass (an
//     *agentcli.UnsupportedError).
//   - Steer is another stream-json user message, written while the turn
//     runs. Every message the session writes carries a "uuid", and every
//     result line lists the messages it answered (user_message_uuids):
//     when the turn makes another model request, claude puts the input
//     into it (one result line for both); otherwise it answers the input
//     after the turn's result, in a result line of its own. The turn ends
//     at the result line that leaves no message of the turn unanswered;
//     its Result is the last answer, with the usage of all added up
//     (claude's cost is the session's running total already). The
//     bookkeeping lines claude writes for messages with a uuid
//     (command_lifecycle) are dropped.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
)

var (
	_ live.ModelSwitcher      = (*liveProto)(nil)
	_ live.PermissionSwitcher = (*liveProto)(nil)
	_ live.Steerer            = (*liveProto)(nil)
)

// switchState is what the session knows of the running turn's messages.
type switchState struct {
	// pending are the uuids of the turn's messages no result line has
	// answered yet; held is the merged result of the turn's earlier
	// result lines.
	pending []string
	held    *agentcli.Result
	// noBypass: the session started without
	// --allow-dangerously-skip-permissions.
	noBypass bool
	// replay: the session replays a wire log, whose messages had other
	// uuids: a result line answers as many of the pending messages, the
	// oldest first, as it lists.
	replay bool
}

// newReplayProto is the protocol of a replayed session.
func newReplayProto(h *live.Host) live.Proto {
	p := newLiveProtoHooks(nil, nil)(h).(*liveProto)
	p.sw.replay = true
	return p
}

// begin starts a turn's bookkeeping and returns its prompt's uuid. p.mu
// is held.
func (s *switchState) begin() string {
	id := newUUID()
	s.pending, s.held = append(s.pending[:0], id), nil
	return id
}

// consumed removes the messages a result line answered from the pending
// ones and reports whether some are still due. A result line without
// user_message_uuids (a claude that does not report them) answers all.
// p.mu is held.
func (s *switchState) consumed(line []byte) bool {
	var r struct {
		UUIDs *[]string `json:"user_message_uuids"`
	}
	if json.Unmarshal(line, &r) != nil || r.UUIDs == nil {
		s.pending = s.pending[:0]
		return false
	}
	if s.replay {
		n := min(len(*r.UUIDs), len(s.pending))
		s.pending = append(s.pending[:0], s.pending[n:]...)
		return len(s.pending) > 0
	}
	s.pending = slices.DeleteFunc(s.pending, func(id string) bool { return slices.Contains(*r.UUIDs, id) })
	return len(s.pending) > 0
}

// end returns the turn's result: res with the earlier result lines'
// merged in. p.mu is held.
func (s *switchState) end(res *agentcli.Result) *agentcli.Result {
	res = driver.MergeSteered(s.held, res)
	s.pending, s.held = s.pending[:0], nil
	return res
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// withUUID adds "uuid": id to a user message line (a JSON object and a
// newline).
func withUUID(msg []byte, id string) []byte {
	msg = bytes.TrimRight(msg, "\n")
	if len(msg) < 2 || msg[len(msg)-1] != '}' {
		return append(msg, '\n')
	}
	out := append(msg[:len(msg)-1:len(msg)-1], `,"uuid":"`...)
	out = append(out, id...)
	return append(out, "\"}\n"...)
}

var lifecycleMarker = []byte(`"command_lifecycle"`)

// bookkeeping reports a line claude writes about a message with a uuid
// (command_lifecycle: queued, started, completed), which has no event.
func bookkeeping(line []byte) bool {
	if !bytes.Contains(line, lifecycleMarker) {
		return false
	}
	var t struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(line, &t) == nil && t.Type == "command_lifecycle"
}

// SetModel implements live.ModelSwitcher with set_model.
func (p *liveProto) SetModel(ctx context.Context, model string) error {
	_, err := p.control(ctx, "set_model", map[string]any{"subtype": "set_model", "model": model}, true)
	return err
}

// claudeMode returns the mode set_permission_mode takes for a session of
// req in mode m: the one its argv would have (permissionArgs).
func claudeMode(req *agentcli.Request, m agentcli.PermissionMode) string {
	r := *req
	r.Permission = m
	for _, a := range permissionArgs(&r) {
		if a == "--dangerously-skip-permissions" {
			return "bypassPermissions"
		}
		if v, ok := strings.CutPrefix(a, "--permission-mode="); ok {
			return v
		}
	}
	return "dontAsk"
}

// CheckPermission implements live.PermissionSwitcher: bypass needs
// --allow-dangerously-skip-permissions at start.
func (p *liveProto) CheckPermission(m agentcli.PermissionMode) error {
	if p.sw.noBypass && claudeMode(p.h.Request(), m) == "bypassPermissions" {
		return &agentcli.UnsupportedError{Backend: Name, Feature: "SetPermission bypass",
			Reason: "claude runs as root without IS_SANDBOX=1, and then refuses bypass mode"}
	}
	return nil
}

// SetPermission implements live.PermissionSwitcher with
// set_permission_mode.
func (p *liveProto) SetPermission(ctx context.Context, m agentcli.PermissionMode) error {
	_, err := p.control(ctx, "set_permission_mode", map[string]any{"subtype": "set_permission_mode", "mode": claudeMode(p.h.Request(), m)}, true)
	return err
}

// Steer implements live.Steerer: another user message, with a uuid the
// turn then waits to see answered.
func (p *liveProto) Steer(ctx context.Context, prompt string) error {
	p.mu.Lock()
	if p.parser == nil {
		p.mu.Unlock()
		return live.ErrSteerQueue
	}
	id := newUUID()
	p.sw.pending = append(p.sw.pending, id)
	p.mu.Unlock()
	if err := p.h.Send(ctx, withUUID(userMessage(prompt), id)); err != nil {
		p.mu.Lock()
		p.sw.pending = slices.DeleteFunc(p.sw.pending, func(s string) bool { return s == id })
		var held *agentcli.Result
		if len(p.sw.pending) == 0 && p.sw.held != nil && p.parser != nil {
			// The turn's result came and waited for this input only.
			held = p.sw.end(nil)
			p.parser = nil
		}
		p.mu.Unlock()
		if held != nil {
			p.h.EndTurn(live.TurnEnd{Result: held})
		}
		return err
	}
	return nil
}

// liveSwitchArgs returns a live session's argv: args with
// --permission-prompt-tool=stdio and --allow-dangerously-skip-permissions
// (unless bypass is not allowed: root without IS_SANDBOX=1) after "-p",
// where args lack them; and whether bypass stays out of reach.
func liveSwitchArgs(args []string, isSandbox string) ([]string, bool) {
	var extra []string
	if !slices.Contains(args, "--permission-prompt-tool=stdio") {
		extra = append(extra, "--permission-prompt-tool=stdio")
	}
	noBypass := false
	if !slices.Contains(args, "--dangerously-skip-permissions") {
		if os.Geteuid() == 0 && isSandbox != "1" {
			noBypass = true
		} else {
			extra = append(extra, "--allow-dangerously-skip-permissions")
		}
	}
	if len(extra) == 0 || len(args) == 0 {
		return args, noBypass
	}
	out := make([]string, 0, len(args)+len(extra))
	out = append(out, args[0])
	out = append(out, extra...)
	return append(out, args[1:]...), noBypass
}
