package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/agentcli/agentcli"
)

// RPC is a JSON-RPC 2.0 peer over a session's stdin and stdout lines: it
// sends requests and notifications, matches responses to requests, and
// hands the CLI's own requests and notifications to the protocol. codex
// app-server speaks the same protocol without the "jsonrpc" member; set
// Bare for it.
//
// It is built for hostile input: a line is decoded once, a response to an
// unknown id is dropped, a malformed line is reported to OnInvalid, and
// nothing a CLI sends can block the reader.
type RPC struct {
	// Host is the session the RPC runs over.
	Host *Host
	// Bare leaves out "jsonrpc":"2.0" (codex app-server).
	Bare bool
	// OnNotify gets the CLI's notifications, from the reader goroutine.
	OnNotify func(method string, params json.RawMessage, line []byte)
	// OnRequest gets the CLI's requests, from the reader goroutine. Answer
	// each with Reply or ReplyError (from any goroutine).
	OnRequest func(id json.RawMessage, method string, params json.RawMessage, line []byte)
	// OnInvalid gets lines that are not JSON-RPC messages.
	OnInvalid func(line []byte, err error)

	mu      sync.Mutex
	next    int64
	pending map[string]pendingCall
}

// pendingCall is a request waiting for its response: on a channel (Call,
// Send), or handed to a function on the reader goroutine (Go).
type pendingCall struct {
	ch chan rpcReply
	fn func(result json.RawMessage, err error)
}

type rpcReply struct {
	result json.RawMessage
	err    *RPCError
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	s := fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
	if len(e.Data) > 0 && string(e.Data) != "null" {
		d := string(e.Data)
		if len(d) > 500 {
			d = d[:500] + "…"
		}
		s += " (" + d + ")"
	}
	return s
}

// rpcMessage is any JSON-RPC message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// errNotObject: a line that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// Line handles one line of the CLI's stdout.
func (r *RPC) Line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		r.invalid(line, errNotObject)
		return
	}
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		r.invalid(line, err)
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		if r.OnRequest != nil {
			r.OnRequest(m.ID, m.Method, m.Params, line)
		} else {
			r.ReplyError(m.ID, -32601, "method not found: "+m.Method)
		}
	case m.Method != "":
		if r.OnNotify != nil {
			r.OnNotify(m.Method, m.Params, line)
		}
	case hasID:
		key := idKey(m.ID)
		r.mu.Lock()
		pc, ok := r.pending[key]
		delete(r.pending, key)
		r.mu.Unlock()
		if !ok {
			return // an answer to nothing we asked, or too late
		}
		rep := rpcReply{result: m.Result}
		if m.Error != nil {
			rep = rpcReply{err: m.Error}
		}
		if pc.fn != nil {
			var err error
			if rep.err != nil {
				err = rep.err
			}
			pc.fn(rep.result, err)
			return
		}
		pc.ch <- rep
	default:
		r.invalid(line, errors.New("neither a request, a notification nor a response"))
	}
}

func (r *RPC) invalid(line []byte, err error) {
	if r.OnInvalid != nil {
		r.OnInvalid(line, err)
	}
}

// idKey normalizes a JSON id (1, 1.0 and "1" stay distinct as JSON-RPC
// wants, but whitespace does not matter).
func idKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return strconv.Quote(s)
		}
		return string(id)
	}
	var n json.Number
	if json.Unmarshal(id, &n) == nil {
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
		return n.String()
	}
	return string(id)
}

func (r *RPC) version() string {
	if r.Bare {
		return ""
	}
	return "2.0"
}

// Call sends a request and waits for its response, ctx, or the end of the
// session. An error response is an *RPCError.
func (r *RPC) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	wait, err := r.Send(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return wait(ctx)
}

// Send sends a request (giving up when ctx ends, see Host.Send) and
// returns once it is written; wait waits for its response as Call does.
// Use it when the request must be on its way before something else is
// sent, but its answer may take long (a prompt whose answer ends a turn).
func (r *RPC) Send(ctx context.Context, method string, params any) (wait func(ctx context.Context) (json.RawMessage, error), err error) {
	ch := make(chan rpcReply, 1)
	key, err := r.send(ctx, method, params, pendingCall{ch: ch})
	if err != nil {
		return nil, err
	}
	drop := func() {
		r.mu.Lock()
		delete(r.pending, key)
		r.mu.Unlock()
	}
	return func(ctx context.Context) (json.RawMessage, error) {
		select {
		case rep := <-ch:
			if rep.err != nil {
				return nil, rep.err
			}
			return rep.result, nil
		case <-ctx.Done():
			drop()
			return nil, ctx.Err()
		case <-r.Host.Done():
			drop()
			if err := r.Host.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s: the CLI exited: %w", r.Host.Backend(), agentcli.ErrSessionClosed)
		}
	}, nil
}

// Go sends a request (giving up when ctx ends, see Host.Send) and returns
// once it is written; fn gets its response on the reader goroutine, as
// part of handling the response's line (an error response is an
// *RPCError), so that what fn does comes before the lines after it. fn is
// not called when the session ends first.
func (r *RPC) Go(ctx context.Context, method string, params any, fn func(result json.RawMessage, err error)) error {
	_, err := r.send(ctx, method, params, pendingCall{fn: fn})
	return err
}

// send registers pc under a fresh id and sends the request.
func (r *RPC) send(ctx context.Context, method string, params any, pc pendingCall) (key string, err error) {
	r.mu.Lock()
	r.next++
	id := r.next
	if r.pending == nil {
		r.pending = map[string]pendingCall{}
	}
	key = strconv.FormatInt(id, 10)
	r.pending[key] = pc
	r.mu.Unlock()
	drop := func() {
		r.mu.Lock()
		delete(r.pending, key)
		r.mu.Unlock()
	}
	p, err := marshalParams(params)
	if err != nil {
		drop()
		return "", err
	}
	b, err := json.Marshal(rpcMessage{JSONRPC: r.version(), ID: json.RawMessage(key), Method: method, Params: p})
	if err != nil {
		drop()
		return "", err
	}
	if err := r.Host.Send(ctx, b); err != nil {
		drop()
		return "", err
	}
	return key, nil
}

// Notify sends a notification, giving up when ctx ends (see Host.Send).
func (r *RPC) Notify(ctx context.Context, method string, params any) error {
	p, err := marshalParams(params)
	if err != nil {
		return err
	}
	b, err := json.Marshal(rpcMessage{JSONRPC: r.version(), Method: method, Params: p})
	if err != nil {
		return err
	}
	return r.Host.Send(ctx, b)
}

// Reply answers the CLI's request id with result. It does not wait for
// the answer to be written (see Host.Post).
func (r *RPC) Reply(id json.RawMessage, result any) error {
	res, err := json.Marshal(result)
	if err != nil {
		return err
	}
	b, err := json.Marshal(rpcMessage{JSONRPC: r.version(), ID: id, Result: res})
	if err != nil {
		return err
	}
	return r.Host.Post(b)
}

// ReplyError answers the CLI's request id with an error. It does not
// wait for the answer to be written (see Host.Post).
func (r *RPC) ReplyError(id json.RawMessage, code int, msg string) error {
	b, err := json.Marshal(rpcMessage{JSONRPC: r.version(), ID: id, Error: &RPCError{Code: code, Message: msg}})
	if err != nil {
		return err
	}
	return r.Host.Post(b)
}

func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(params)
}
