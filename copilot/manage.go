package copilot

// Session management, checked against copilot 1.0.102. Copilot's command
// line and its ACP mode have no fork; its headless JSON-RPC server
// (`copilot --headless --no-auto-update --stdio`, the protocol of its
// official SDKs) has sessions.fork {sessionId} (the whole history copied
// into a new session named "NAME (fork)", the original untouched, no model
// call) and session.list. So a fork, in a run or a live session, is a
// short headless exchange that forks the session, then a resume of the
// fork (--resume=ID, or ACP session/load). The headless server frames its
// messages with Content-Length headers; the requests are written at once
// and stdin closed, upon which copilot answers them all and exits, so the
// whole output can be split into its messages.
//
// A caller-chosen id for a new session is --session-id=ID (one-shot only:
// ACP's session/new makes up its own). Copilot's --session-id also resumes
// the session of that id when there is one, so an id that names an
// existing session (a folder of COPILOT_HOME/session-state) is refused
// with an *agentcli.RequestError. A fork cannot be given an id
// (sessions.fork takes none). Request.Continue is agentcli's (the newest
// session ListSessions finds, resumed by id), never copilot's --continue.
//
// ListSessions asks the headless server (session.list) and keeps the
// sessions whose working directory is the directory: copilot keeps its
// sessions in one folder for all directories, each naming its own. A
// session's title is its name (copilot names a session after its first
// prompt, a fork "NAME (fork)"), else its summary; it was updated at its
// modifiedTime.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// headlessArgs are the arguments of copilot's headless JSON-RPC server.
var headlessArgs = []string{"--headless", "--no-auto-update", "--stdio"}

// headlessTimeout bounds one headless exchange (copilot extracts its
// package on a first run, which takes seconds).
const headlessTimeout = 2 * time.Minute

// maxHeadlessOutput bounds what the headless server may print.
const maxHeadlessOutput = 64 << 20

// frameHeader matches the header of one headless message; a JSON body
// holds no raw line break, so the header cannot occur inside one.
var frameHeader = regexp.MustCompile(`(?i)content-length:[ \t]*[0-9]+[ \t]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n`)

// headlessCall is one request to the headless server.
type headlessCall struct {
	Method string
	Params any
}

// headless sends calls to a short-lived headless server and returns the
// result of each, in order.
func headless(ctx context.Context, r *driver.Run, calls ...headlessCall) ([]json.RawMessage, error) {
	var in bytes.Buffer
	for i, c := range calls {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": c.Method, "params": c.Params})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n", len(b))
		in.Write(b)
	}
	var out bytes.Buffer
	err := driver.Exchange(ctx, r, headlessTimeout, maxHeadlessOutput, headlessArgs, func(c *driver.Conn) error {
		if err := c.Send(in.Bytes()); err != nil {
			return err
		}
		if err := c.CloseStdin(); err != nil {
			return err
		}
		for {
			line, err := c.Recv()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if out.Len()+len(line) >= maxHeadlessOutput {
				return fmt.Errorf("more than %d bytes of output", maxHeadlessOutput)
			}
			out.Write(line)
			out.WriteByte('\n')
		}
	})
	if err != nil {
		return nil, err
	}
	return headlessResults(out.Bytes(), len(calls))
}

// headlessResults returns the results of requests 1..n from the headless
// server's output: an error answer, or a request without an answer, is an
// error. It is pure.
func headlessResults(out []byte, n int) ([]json.RawMessage, error) {
	res := make([]json.RawMessage, n)
	got := make([]bool, n)
	for _, body := range frameHeader.Split(string(out), -1) {
		body := bytes.TrimSpace([]byte(body))
		if len(body) == 0 {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "" {
			continue // a notification or a request of copilot's
		}
		id, err := strconv.Atoi(string(m.ID))
		if err != nil || id < 1 || id > n {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("copilot: %s", m.Error.Message)
		}
		res[id-1], got[id-1] = m.Result, true
	}
	for i, ok := range got {
		if !ok {
			return nil, fmt.Errorf("copilot's headless server did not answer request %d", i+1)
		}
	}
	return res, nil
}

// forkSession forks session id and returns the fork's id.
func forkSession(ctx context.Context, r *driver.Run, id string) (string, error) {
	if !sessionExists(r, id) {
		return "", driver.SessionNotFound(Name, id)
	}
	res, err := headless(ctx, r, headlessCall{"sessions.fork", map[string]any{"sessionId": id}})
	if err != nil {
		return "", fmt.Errorf("copilot: forking session %s: %w", id, err)
	}
	var f struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(res[0], &f) != nil || !driver.IsUUID(f.SessionID) {
		return "", fmt.Errorf("copilot: sessions.fork answered no session id: %.200s", res[0])
	}
	return f.SessionID, nil
}

// forked returns req with its fork made (see forkSession): a request to
// resume the fork. A request that forks nothing is returned as it is.
func forked(ctx context.Context, r *driver.Run, req *agentcli.Request) (*agentcli.Request, error) {
	if !req.ForkSession || req.SessionID == "" {
		return req, nil
	}
	id, err := forkSession(ctx, r, req.SessionID)
	if err != nil {
		return nil, err
	}
	c := *req
	c.SessionID, c.ForkSession = id, false
	return &c, nil
}

// sessionExists reports whether copilot keeps a session of id in r's
// COPILOT_HOME.
func sessionExists(r *driver.Run, id string) bool {
	_, err := os.Stat(filepath.Join(stateDir(r), id))
	return !errors.Is(err, os.ErrNotExist)
}

// checkNewID refuses a caller-chosen id that names an existing session,
// which copilot's --session-id would resume.
func checkNewID(r *driver.Run, req *agentcli.Request) error {
	if req.NewSessionID != "" && sessionExists(r, req.NewSessionID) {
		return &agentcli.RequestError{Backend: Name, Field: "NewSessionID", Reason: "names an existing session (copilot would resume it)"}
	}
	return nil
}

// listSessions asks copilot's headless server for its sessions and keeps
// r.Dir's.
func listSessions(ctx context.Context, r *driver.Run) ([]agentcli.SessionInfo, error) {
	res, err := headless(ctx, r, headlessCall{"session.list", map[string]any{}})
	if err != nil {
		return nil, err
	}
	return parseSessionList(res[0], r.Dir)
}

// parseSessionList reads session.list's result and returns dir's
// sessions. It is pure.
func parseSessionList(res json.RawMessage, dir string) ([]agentcli.SessionInfo, error) {
	var l struct {
		Sessions []struct {
			SessionID    string    `json:"sessionId"`
			ModifiedTime time.Time `json:"modifiedTime"`
			Name         string    `json:"name"`
			Summary      string    `json:"summary"`
			IsRemote     bool      `json:"isRemote"`
			Context      struct {
				Cwd string `json:"cwd"`
			} `json:"context"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(res, &l); err != nil {
		return nil, fmt.Errorf("copilot: session.list: %v", err)
	}
	var out []agentcli.SessionInfo
	for _, s := range l.Sessions {
		if s.SessionID == "" || s.IsRemote || s.Context.Cwd == "" || filepath.Clean(s.Context.Cwd) != filepath.Clean(dir) {
			continue
		}
		title := s.Name
		if title == "" {
			title = s.Summary
		}
		out = append(out, agentcli.SessionInfo{ID: s.SessionID, Title: title, Updated: s.ModifiedTime})
	}
	return out, nil
}
