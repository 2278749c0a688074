package droid

// Session management, checked against droid 0.225.2. A fork in a one-shot
// run is `droid exec --fork=ID` (droid copies the session's history into
// a new session, the original untouched; unlike --session-id it works
// offline and in airgap mode). Droid's ACP mode has no fork, so a live
// session forks first through droid's own JSON-RPC, a short
// `droid exec --input-format=stream-jsonrpc --output-format=stream-jsonrpc`
// that loads the session (droid.load_session) and forks it
// (droid.fork_session, no model call), and then loads the fork
// (session/load). Request.Continue is agentcli's (the newest session
// ListSessions finds, resumed by id).
//
// A caller-chosen id for a new session: droid exec has none (`-s/--session-id`
// names an existing session to continue) and ACP's session/new makes up its
// own, but droid's JSON-RPC droid.initialize_session takes one and writes
// the new, empty session; so the session is made that way first (an id
// droid already keeps is an *agentcli.RequestError) and then loaded
// (session/load), in a live session, which a one-shot run with a chosen
// id is one turn of. Should the session fail to start after that, the
// empty session ("New Session") stays. A fork cannot be given an id
// (droid.fork_session and exec --fork take none).
//
// ListSessions reads the transcripts of the directory's folder,
// FACTORY/sessions/KEY/ID.jsonl (see sessions.go), whose first record
// (session_start) names the session's directory (two directories may
// share a KEY) and its title (droid's, which starts as the first prompt);
// a session was updated when its transcript was last written.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// listSessions lists the transcripts of r.Dir.
func listSessions(ctx context.Context, r *driver.Run) ([]agentcli.SessionInfo, error) {
	want := realDir(r.Dir)
	return driver.ListJSONL(ctx, filepath.Join(sessionsDir(r), projectKey(r.Dir)), func(path, id string) (string, bool, error) {
		head, err := readStart(path)
		if err != nil || head.Type != "session_start" || head.ID != id || realDir(head.Cwd) != want {
			return "", false, err // not a session, or another directory's of the same key
		}
		return head.Title, true, nil
	})
}

// realDir returns dir cleaned, with its symbolic links resolved when it
// exists.
func realDir(dir string) string {
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		return p
	}
	return filepath.Clean(dir)
}

// sessionStart is the first record of a droid transcript.
type sessionStart struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Title string `json:"title"`
	Cwd   string `json:"cwd"`
}

// maxStartLine bounds the first line of a transcript.
const maxStartLine = 1 << 20

// readStart reads the first record of the transcript p.
func readStart(p string) (sessionStart, error) {
	var s sessionStart
	f, err := os.Open(p)
	if err != nil {
		return s, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxStartLine), 64<<10).ReadSlice('\n')
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return s, err
	}
	json.Unmarshal(line, &s) // a line that is not a record is no session
	return s, nil
}

// findTranscript returns the transcript of session id: under r.Dir's key,
// or else under any; "" when droid keeps none (a fork of it would fail
// with nothing said: droid 0.225.2 exits 1 and prints nothing).
func findTranscript(r *driver.Run, id string) string {
	if !driver.IsUUID(id) {
		return ""
	}
	root := sessionsDir(r)
	p := filepath.Join(root, projectKey(r.Dir), id+".jsonl")
	if driver.FileExists(p) {
		return p
	}
	if m, _ := filepath.Glob(filepath.Join(root, "*", id+".jsonl")); len(m) > 0 {
		return m[0]
	}
	return ""
}

// liveRun reports whether a one-shot run of req is one turn of a live
// session: a session to resume (droid exec -s fails offline), to continue
// or to make with a chosen id; a fork is droid exec --fork.
func liveRun(req *agentcli.Request) bool {
	return (req.SessionID != "" || req.Continue || req.NewSessionID != "") && !req.ForkSession
}

// validateManage refuses what droid cannot combine.
func validateManage(req *agentcli.Request) error {
	if req.NewSessionID != "" && req.ForkSession {
		return &agentcli.UnsupportedError{Backend: Name, Feature: "a caller-chosen id for a fork",
			Reason: "droid 0.225.2's forks (exec --fork, droid.fork_session) take no id"}
	}
	return nil
}

// createSession makes the new, empty session id in r.Dir through droid's
// JSON-RPC (droid.initialize_session, no model call).
func createSession(ctx context.Context, r *driver.Run, id string) error {
	if findTranscript(r, id) != "" {
		return &agentcli.RequestError{Backend: Name, Field: "NewSessionID", Reason: "names a session droid already keeps"}
	}
	args := []string{"exec", "--input-format=stream-jsonrpc", "--output-format=stream-jsonrpc"}
	err := driver.Exchange(ctx, r, forkTimeout, maxRPCLine, args, func(c *driver.Conn) error {
		res, err := rpcCall(c, "1", "droid.initialize_session", map[string]any{"machineId": "agentcli", "cwd": r.Dir, "sessionId": id})
		if err != nil {
			return err
		}
		var s struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(res, &s) != nil || s.SessionID != id {
			return fmt.Errorf("droid.initialize_session made another session than %s: %.200s", id, res)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("droid: making session %s: %w", id, err)
	}
	return nil
}

// forkTimeout bounds the JSON-RPC fork of a live session.
const forkTimeout = 2 * time.Minute

// maxRPCLine bounds a line of droid's JSON-RPC answers (load_session
// answers with the whole history).
const maxRPCLine = 256 << 20

// forkSession forks session id through droid's JSON-RPC and returns the
// fork's id.
func forkSession(ctx context.Context, r *driver.Run, id string) (string, error) {
	if findTranscript(r, id) == "" {
		return "", driver.SessionNotFound(Name, id)
	}
	var newID string
	args := []string{"exec", "--input-format=stream-jsonrpc", "--output-format=stream-jsonrpc"}
	err := driver.Exchange(ctx, r, forkTimeout, maxRPCLine, args, func(c *driver.Conn) error {
		if _, err := rpcCall(c, "1", "droid.load_session", map[string]any{"sessionId": id}); err != nil {
			return err
		}
		res, err := rpcCall(c, "2", "droid.fork_session", map[string]any{})
		if err != nil {
			return err
		}
		var f struct {
			NewSessionID string `json:"newSessionId"`
		}
		if json.Unmarshal(res, &f) != nil || !driver.IsUUID(f.NewSessionID) {
			return fmt.Errorf("droid.fork_session answered no session id: %.200s", res)
		}
		newID = f.NewSessionID
		return nil
	})
	if err != nil {
		if driver.Contains(err.Error(), "session not found", "no session found", "failed to load session", "enoent") {
			return "", driver.SessionNotFound(Name, id)
		}
		return "", fmt.Errorf("droid: forking session %s: %w", id, err)
	}
	return newID, nil
}

// rpcCall sends one request of droid's JSON-RPC and returns the result of
// its answer, skipping notifications and refusing droid's own requests.
func rpcCall(c *driver.Conn, id, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(map[string]any{
		"factoryApiVersion": "1.0.0", "factoryProtocolVersion": "1.220.0", "jsonrpc": "2.0",
		"type": "request", "id": id, "method": method, "params": params,
	})
	if err != nil {
		return nil, err
	}
	if err := c.Send(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := c.Recv()
		if err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%s: droid ended without answering", method)
			}
			return nil, err
		}
		var m struct {
			Type   string          `json:"type"`
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.Type != "response" {
			continue // a notification, or a request of droid's (none is expected)
		}
		var got string
		if json.Unmarshal(m.ID, &got) != nil || got != id {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	}
}
