package streamjson_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
	"github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/driver/streamjson"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// toyProto is the live.Proto of a CLI that speaks the control protocol:
// initialize once, one user message a turn, can_use_tool asked of the
// session's permission handling, a result line ending the turn.
type toyProto struct {
	h   *live.Host
	ctl *streamjson.Conn
}

func newToyProto(h *live.Host) live.Proto {
	p := &toyProto{h: h}
	p.ctl = streamjson.New(h, map[string]func(streamjson.Request){
		"can_use_tool": p.canUseTool,
	})
	return p
}

func (p *toyProto) Start(ctx context.Context) error {
	_, err := p.ctl.Call(ctx, "initialize", map[string]any{"subtype": "initialize"})
	return err
}

func (p *toyProto) Prompt(ctx context.Context, prompt string) error {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
	return p.h.Send(ctx, b)
}

func (p *toyProto) Interrupt(ctx context.Context) error {
	return p.ctl.Notify(ctx, "interrupt", map[string]any{"subtype": "interrupt"})
}

func (p *toyProto) Exit(driver.Exit) error { return nil }

func (p *toyProto) Line(line []byte) {
	if p.ctl.Line(line) {
		return // a control message
	}
	var m struct{ Type, Result string }
	if json.Unmarshal(line, &m) == nil && m.Type == "result" {
		p.h.EndTurn(live.TurnEnd{Result: &agentcli.Result{Text: m.Result}})
	}
}

func (p *toyProto) canUseTool(r streamjson.Request) {
	c := r.CanUseTool()
	fmt.Println("the CLI asks to run", c.ToolName, string(c.Input))
	pr := &agentcli.PermissionRequest{
		Tool:    agentcli.ToolUse{ID: c.ToolUseID, Name: c.ToolName, RawName: c.ToolName, Input: c.Input},
		Title:   c.ToolName,
		Options: []agentcli.PermissionOption{{ID: "allow", Kind: agentcli.AllowOnce}, {ID: "deny", Kind: agentcli.RejectOnce}},
	}
	p.h.Ask(pr, func(d agentcli.PermissionDecision) {
		if !d.Allowed() {
			p.ctl.Deny(r.ID, d.Message)
			return
		}
		p.ctl.Allow(r.ID, c.Input)
	})
}

// A live session of a CLI that speaks the control protocol, replayed
// from its wire log (live.Replay runs the protocol without a process):
// the initialize request and its answer, then a turn in which the CLI
// asks whether it may run a tool.
func Example() {
	log := strings.Join([]string{
		`{"t":"start","v":2,"backend":"toy","deltas":true,"live":true,"time":"2026-01-01T00:00:00Z"}`,
		`{"t":"in","text":"{\"request\":{\"subtype\":\"initialize\"},\"request_id\":\"agentcli_1\",\"type\":\"control_request\"}\n"}`,
		`{"t":"out","line":{"type":"control_response","response":{"subtype":"success","request_id":"agentcli_1","response":{}}}}`,
		`{"t":"ready"}`,
		`{"t":"turn"}`,
		`{"t":"in","text":"{\"message\":{\"content\":\"list the files\",\"role\":\"user\"},\"type\":\"user\"}\n"}`,
		`{"t":"out","line":{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1"}}}`,
		`{"t":"in","text":"{\"response\":{\"request_id\":\"r1\",\"response\":{\"behavior\":\"allow\",\"updatedInput\":{\"command\":\"ls\"}},\"subtype\":\"success\"},\"type\":\"control_response\"}\n"}`,
		`{"t":"out","line":{"type":"result","result":"two files"}}`,
		`{"t":"close"}`,
		`{"t":"exit","code":0}`,
	}, "\n")
	rd := wirelog.NewReader(strings.NewReader(log))
	if _, err := rd.Next(); err != nil { // the start record
		fmt.Println(err)
		return
	}
	cfg := live.Config{Backend: "toy", Request: &agentcli.Request{}, Proto: newToyProto}
	for ev, err := range live.Replay(cfg, rd) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if ev.Result != nil {
			fmt.Println("result:", ev.Result.Text)
		}
	}
	// Output:
	// the CLI asks to run Bash {"command":"ls"}
	// result: two files
}

// DecodeContent reads the content of a message line inside a wire type's
// Decode (see driver.Wire); here on a line of its own.
func ExampleDecodeContent() {
	line := []byte(`{"type":"user","message":{"role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"two "},{"type":"text","text":"files"}]},` +
		`{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}},null,5]}}`)
	var d jsonscan.Decoder
	d.Reset(line)
	var blocks []streamjson.Block
	bad := false
	for k := range d.Object() {
		if string(k) != "message" {
			continue
		}
		for k := range d.Object() {
			if string(k) == "content" {
				blocks = streamjson.DecodeContent(&d, blocks[:0], &bad)
			}
		}
	}
	for _, b := range blocks {
		fmt.Printf("%q %q %q %q\n", b.Type, b.ToolUseID+b.ID, b.Content, b.Input)
	}
	fmt.Println("invalid input:", bad, "error:", d.Finish())
	// Output:
	// "tool_result" "t1" "two files" ""
	// "tool_use" "t2" "" "{\"command\":\"ls\"}"
	// "" "" "" ""
	// invalid input: false error: <nil>
}
