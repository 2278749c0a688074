// Package streamjson serves backends whose CLI speaks Claude Code's
// stream-json (`claude -p --input-format stream-json --output-format
// stream-json`), which Qwen Code copies: the control protocol of live
// sessions (Conn) and the content of its message lines (DecodeContent,
// StreamEvent), for a parser in the kit's one shape (driver.Lines). A
// backend builds its live.Proto on a Conn, as package acp serves agents
// that speak the Agent Client Protocol.
//
// The control protocol shares the CLI's stdin and stdout with the
// conversation's messages, one JSON object a line. The host sends
//
//	{"type":"control_request","request_id":ID,"request":{"subtype":S,...}}
//
// and the CLI answers
//
//	{"type":"control_response","response":{"subtype":"success","request_id":ID,"response":{...}}}
//	{"type":"control_response","response":{"subtype":"error","request_id":ID,"error":MESSAGE}}
//
// and the other way round: the CLI asks the host (can_use_tool, whose
// answer allows or denies a tool call; hook_callback) and the host
// answers. The CLI may withdraw a request it gave up waiting for
// (control_cancel_request); a late answer to it is ignored by the CLI.
//
// Conn numbers the host's requests ("agentcli_1", "agentcli_2", ... in the
// order they are sent, which a replayed session repeats), matches answers
// to them, hands the CLI's requests to the backend's handlers by subtype
// and refuses the others. Line tells control messages apart from the
// conversation's lines without depending on key order; a line that is
// not a control message (nearly all) is left to the backend's parser,
// decoded once.
package streamjson

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/live"
)

// Conn is the control protocol of one live session. Its methods are safe
// for concurrent use.
type Conn struct {
	h        *live.Host
	handlers map[string]func(Request)

	mu    sync.Mutex
	next  int
	waits map[string]chan answer
}

// answer is the CLI's answer to one of the host's requests.
type answer struct {
	ok       bool
	msg      string
	response json.RawMessage
}

// Request is a control request from the CLI.
type Request struct {
	// ID is the request's request_id, which its answer names (Reply,
	// Refuse, Allow, Deny).
	ID string
	// Subtype is the request's subtype ("can_use_tool", ...).
	Subtype string
	// Body is the request object as printed, subtype included.
	Body json.RawMessage
}

// New returns the control protocol of the session h hosts. handlers
// answer the CLI's requests by subtype; a request of any other subtype is
// refused as unsupported. A handler runs on the session's reader (see
// live.Proto.Line): it must not block for long, and answers through the
// Conn, at once or later from another goroutine.
func New(h *live.Host, handlers map[string]func(Request)) *Conn {
	return &Conn{h: h, handlers: handlers, waits: map[string]chan answer{}}
}

// Call sends a control request and waits for its answer, giving up when
// ctx ends or the CLI exits. request is the request object, its
// "subtype" included; subtype names it in errors. It returns the
// answer's response object (nil when it has none). A refusal is a
// *agentcli.ProtocolError with the CLI's message.
func (c *Conn) Call(ctx context.Context, subtype string, request any) (json.RawMessage, error) {
	return c.send(ctx, subtype, request, true)
}

// Notify sends a control request without waiting for its answer (which
// Line then drops), such as interrupt, whose acknowledgment is the end of
// the turn. It blocks until the request is written, giving up when ctx
// ends.
func (c *Conn) Notify(ctx context.Context, subtype string, request any) error {
	_, err := c.send(ctx, subtype, request, false)
	return err
}

func (c *Conn) send(ctx context.Context, subtype string, request any, wait bool) (json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := "agentcli_" + strconv.Itoa(c.next)
	ch := make(chan answer, 1)
	if wait {
		c.waits[id] = ch
	}
	c.mu.Unlock()
	b, err := json.Marshal(map[string]any{"type": "control_request", "request_id": id, "request": request})
	if err == nil {
		err = c.h.Send(ctx, b)
	}
	if err != nil || !wait {
		c.forget(id)
		return nil, err
	}
	defer c.forget(id)
	select {
	case a := <-ch:
		if !a.ok {
			return nil, c.h.Errors().Protocol("control request "+subtype, 0, a.msg, nil)
		}
		return a.response, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.h.Done():
		if err := c.h.Err(); err != nil {
			return nil, err
		}
		return nil, &agentcli.ProtocolError{Backend: c.h.Backend(), Method: "control request " + subtype, Message: "the CLI exited before it answered"}
	}
}

func (c *Conn) forget(id string) {
	c.mu.Lock()
	delete(c.waits, id)
	c.mu.Unlock()
}

// controlLine is the part of a control message Line reads.
type controlLine struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Response  *struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	} `json:"response"`
}

var marker = []byte(`"control_`)

// Line handles one stdout line of the CLI if it is a control message and
// reports whether it was: an answer goes to the Call waiting for it, a
// request to its handler, a cancellation is dropped. It returns false
// for any other line, which the backend parses.
func (c *Conn) Line(line []byte) bool {
	if !bytes.Contains(line, marker) {
		return false
	}
	var l controlLine
	if json.Unmarshal(line, &l) != nil {
		return false
	}
	switch l.Type {
	case "control_response":
		if l.Response != nil {
			c.mu.Lock()
			ch := c.waits[l.Response.RequestID]
			delete(c.waits, l.Response.RequestID)
			c.mu.Unlock()
			if ch != nil {
				ch <- answer{ok: l.Response.Subtype == "success", msg: l.Response.Error, response: l.Response.Response}
			}
		}
	case "control_request":
		var s struct {
			Subtype string `json:"subtype"`
		}
		_ = json.Unmarshal(l.Request, &s) // not an object: no subtype
		if h := c.handlers[s.Subtype]; h != nil {
			h(Request{ID: l.RequestID, Subtype: s.Subtype, Body: l.Request})
		} else {
			c.Refuse(l.RequestID, "agentcli does not support control request "+strconv.Quote(s.Subtype))
		}
	case "control_cancel_request":
		// The CLI gave up waiting; the answer given later is ignored.
	default:
		return false
	}
	return true
}

// Reply answers the CLI's request id with success and response (the
// answer's response object). It does not block; a failure to send is
// logged at debug level, as the session then ends anyway.
func (c *Conn) Reply(id string, response any) {
	c.post(map[string]any{"subtype": "success", "request_id": id, "response": response})
}

// Refuse answers the CLI's request id with an error carrying message.
// It does not block.
func (c *Conn) Refuse(id, message string) {
	c.post(map[string]any{"subtype": "error", "request_id": id, "error": message})
}

// Allow answers a can_use_tool request: run the call with input (the
// request's own, or an edited one where the CLI honors edits). It does
// not block.
func (c *Conn) Allow(id string, input any) {
	c.Reply(id, map[string]any{"behavior": "allow", "updatedInput": input})
}

// Deny answers a can_use_tool request: refuse the call, telling the model
// message. It does not block.
func (c *Conn) Deny(id, message string) {
	c.Reply(id, map[string]any{"behavior": "deny", "message": message})
}

func (c *Conn) post(resp map[string]any) {
	b, err := json.Marshal(map[string]any{"type": "control_response", "response": resp})
	if err != nil {
		return
	}
	if err := c.h.Post(b); err != nil {
		c.h.Logger().Debug("agentcli: answering a control request failed", "backend", c.h.Backend(), "err", err)
	}
}

// CanUseTool is a can_use_tool request: may the agent run a tool call?
type CanUseTool struct {
	// ToolName is the tool as the CLI names it.
	ToolName string `json:"tool_name"`
	// DisplayName, Title and Description describe the call for a person
	// (Claude Code; empty when the CLI sends none).
	DisplayName string `json:"display_name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// Input is the call's input, a JSON object ({} when the CLI sent
	// none or something else).
	Input json.RawMessage `json:"input"`
	// ToolUseID is the id of the tool call.
	ToolUseID string `json:"tool_use_id"`
	// Suggestions are the permission updates the CLI suggests for an
	// "allow always" (Claude Code's permission_suggestions), as printed.
	Suggestions []json.RawMessage `json:"permission_suggestions"`
}

// CanUseTool decodes r as a can_use_tool request. A field of an
// unexpected type reads as absent; the rest still counts.
func (r Request) CanUseTool() CanUseTool {
	var t CanUseTool
	_ = json.Unmarshal(r.Body, &t)
	if len(t.Input) == 0 || t.Input[0] != '{' {
		t.Input = json.RawMessage("{}")
	}
	return t
}
