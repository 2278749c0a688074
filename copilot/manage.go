package copilot

// Session management, checked against copilot 1.0.102. Copilot's command
// line and its ACP mode have no fork; its headless JSON-RPC server
// (`copilot --headless --no-auto-update --stdio`, the protocol of its
// official SDKs) has sessions.fork {sessionId} (the whole history copied
// into a new session named "NAME (fork)", the original untouched, no model
// call) and session.list. So a fork, in a run or a live session, is a
// short headless exchange that forks the session, then a resume of the
// fork (--resume=ID, or ACP session/load). The headless server frames its
// messages with Content-Length headers (see headless).
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
	"strconv"
	"sync"
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

// pingEvery is how often a headless exchange pings the server while it
// waits for answers (see headless).
const pingEvery = 50 * time.Millisecond

// headlessCall is one request to the headless server.
type headlessCall struct {
	Method string
	Params any
}

// frame returns a request as the headless server reads it.
func frame(id int, method string, params any) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(b)), b...), nil
}

// headless sends calls to a short-lived headless server and returns the
// result of each, in order.
//
// The server frames messages with a Content-Length header and no line
// break after the body, so a body read by lines is complete only when the
// next message's header follows it; and it drops requests it reads after
// its stdin has ended (SERVER_SHUTTING_DOWN). So stdin stays open until
// every answer is in, and the server is pinged meanwhile (every
// pingEvery), each ping's answer ending the line of the message before.
func headless(ctx context.Context, r *driver.Run, calls ...headlessCall) ([]json.RawMessage, error) {
	var in []byte
	for i, c := range calls {
		b, err := frame(i+1, c.Method, c.Params)
		if err != nil {
			return nil, err
		}
		in = append(in, b...)
	}
	res := make([]json.RawMessage, len(calls))
	err := driver.Exchange(ctx, r, headlessTimeout, maxHeadlessOutput, headlessArgs, func(c *driver.Conn) error {
		if err := c.Send(in); err != nil {
			return err
		}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(pingEvery)
			defer t.Stop()
			for id := len(calls) + 1; ; id++ {
				select {
				case <-done:
					return
				case <-t.C:
				}
				b, _ := frame(id, "ping", map[string]any{"message": "agentcli"})
				if c.Send(b) != nil {
					return
				}
			}
		}()
		defer func() {
			close(done)
			wg.Wait()
		}()
		left := len(calls)
		for left > 0 {
			line, err := c.Recv()
			if err == io.EOF {
				return fmt.Errorf("copilot's headless server ended with %d of %d requests unanswered", left, len(calls))
			}
			if err != nil {
				return err
			}
			id, result, err := headlessAnswer(line, len(calls))
			if err != nil {
				return err
			}
			if id > 0 && res[id-1] == nil {
				res[id-1] = result
				left--
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// headlessAnswer reads one line of the headless server's output: the
// answer to request id (1..n) with its result, an error for an error
// answer, or id 0 for anything else (a header, a notification, a request
// of copilot's, the answer to a ping). A body starts its line and is
// followed on it by the next message's header, if any. It is pure.
func headlessAnswer(line []byte, n int) (int, json.RawMessage, error) {
	line = bytes.TrimLeft(line, " \t\r")
	if len(line) == 0 || line[0] != '{' {
		return 0, nil, nil
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	// The first JSON value of the line; the header after it is left.
	if json.NewDecoder(bytes.NewReader(line)).Decode(&m) != nil || m.Method != "" {
		return 0, nil, nil
	}
	id, err := strconv.Atoi(string(m.ID))
	if err != nil || id < 1 || id > n {
		return 0, nil, nil
	}
	if m.Error != nil {
		return 0, nil, fmt.Errorf("copilot: %s", m.Error.Message)
	}
	if m.Result == nil {
		m.Result = json.RawMessage("null")
	}
	return id, m.Result, nil
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
