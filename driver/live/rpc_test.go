//go:build unix

package live

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// runRPCPeer is a JSON-RPC peer for RPC's tests: "echo" answers its params,
// "fail" answers an error, "ask" first asks the host ("host/question",
// id "q1") and answers with the host's answer, "silent" never answers;
// unknown ids and junk are sent along the way.
func runRPCPeer() {
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	send := func(s string) {
		mu.Lock()
		out.WriteString(s + "\n")
		out.Flush()
		mu.Unlock()
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	pending := map[string]json.RawMessage{} // host answers by id
	var waitingID json.RawMessage
	for sc.Scan() {
		var m rpcMessage
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.Method == "" { // the host's answer to our question
			pending[string(m.ID)] = m.Result
			if waitingID != nil {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"answer":%s}}`, waitingID, m.Result))
				waitingID = nil
			}
			continue
		}
		switch m.Method {
		case "echo":
			send(`{"jsonrpc":"2.0","method":"note","params":{"n":1}}`)
			send(`{"jsonrpc":"2.0","id":999,"result":{}}`) // answers nothing we asked
			send(`junk`)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, m.Params))
		case "fail":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"no rollout found for thread id x"}}`, m.ID))
		case "ask":
			waitingID = m.ID
			send(`{"jsonrpc":"2.0","id":"q1","method":"host/question","params":{"q":"why"}}`)
		case "silent":
		}
	}
}

// rpcProto runs RPC as a Proto, recording what the peer sends.
type rpcProto struct {
	rpc      *RPC
	mu       sync.Mutex
	notes    []string
	invalids int
}

func (p *rpcProto) Start(ctx context.Context) error            { return nil }
func (p *rpcProto) Prompt(ctx context.Context, s string) error { return nil }
func (p *rpcProto) Interrupt(ctx context.Context) error        { return nil }
func (p *rpcProto) Exit(e driver.Exit) error {
	return driver.NewErrors(&driver.Spec{Name: "rpc"}, nil, nil).Exited(e)
}
func (p *rpcProto) Line(line []byte) { p.rpc.Line(line) }

func startRPC(t *testing.T) (*Session, *rpcProto) {
	t.Helper()
	self, _ := os.Executable()
	var proto *rpcProto
	s, err := Start(context.Background(), Config{
		Backend: "rpc", Path: self, Options: agentcli.Options{KillGrace: testGrace},
		Env: append(os.Environ(), "LIVE_FAKE_PEER=rpc"),
		Proto: func(h *Host) Proto {
			proto = &rpcProto{}
			proto.rpc = &RPC{
				Host: h,
				OnNotify: func(method string, params json.RawMessage, line []byte) {
					proto.mu.Lock()
					proto.notes = append(proto.notes, method+" "+string(params))
					proto.mu.Unlock()
				},
				OnRequest: func(id json.RawMessage, method string, params json.RawMessage, line []byte) {
					proto.rpc.Reply(id, map[string]string{"method": method, "params": string(params)})
				},
				OnInvalid: func(line []byte, err error) {
					proto.mu.Lock()
					proto.invalids++
					proto.mu.Unlock()
				},
			}
			return proto
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, proto
}

func TestRPC(t *testing.T) {
	_, p := startRPC(t)
	ctx := context.Background()
	res, err := p.rpc.Call(ctx, "echo", map[string]int{"x": 7})
	if err != nil || string(res) != `{"x":7}` {
		t.Fatalf("echo: %s, %v", res, err)
	}
	p.mu.Lock()
	if len(p.notes) != 1 || p.notes[0] != `note {"n":1}` || p.invalids != 1 {
		t.Errorf("notifications %q, %d invalid lines", p.notes, p.invalids)
	}
	p.mu.Unlock()
	_, err = p.rpc.Call(ctx, "fail", nil)
	var re *RPCError
	if !errors.As(err, &re) || re.Code != -32000 || !strings.Contains(re.Message, "no rollout") {
		t.Fatalf("fail: %v", err)
	}
	res, err = p.rpc.Call(ctx, "ask", nil)
	if err != nil || !strings.Contains(string(res), `"method":"host/question"`) {
		t.Fatalf("ask: %s, %v", res, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.rpc.Call(cctx, "silent", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("silent: %v", err)
	}
	if err := p.rpc.Notify(context.Background(), "hello", []int{1}); err != nil {
		t.Fatal(err)
	}
}

// A call waiting for an answer fails when the CLI goes away.
func TestRPCPeerDies(t *testing.T) {
	s, p := startRPC(t)
	done := make(chan error, 1)
	go func() {
		_, err := p.rpc.Call(context.Background(), "silent", nil)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("nil error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Call still waiting after the CLI was closed")
	}
	if _, err := p.rpc.Call(context.Background(), "echo", nil); !errors.Is(err, agentcli.ErrSessionClosed) {
		t.Fatalf("Call on a closed session: %v", err)
	}
}

func TestIDKey(t *testing.T) {
	for in, want := range map[string]string{`1`: "1", ` 1 `: "1", `"1"`: `"1"`, `1.5`: "1.5", `"a b"`: `"a b"`} {
		if got := idKey(json.RawMessage(in)); got != want {
			t.Errorf("idKey(%s) = %s, want %s", in, got, want)
		}
	}
}
