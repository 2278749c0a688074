package streamjson_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/live"
	"github.com/agentcli/agentcli/driver/streamjson"
	"github.com/agentcli/agentcli/driver/wirelog"
)

// feedTurn is the parser of one turn of feedProto: each line
// {"type":"text","text","session_id"} is a text event.
type feedTurn struct {
	sessionID string
	ended     bool
}

func (t *feedTurn) Line(line []byte) []agentcli.Event {
	var m struct {
		Type, Text string
		SessionID  string `json:"session_id"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return []agentcli.Event{driver.Notice("toy", line, err)}
	}
	if m.SessionID != "" {
		t.sessionID = m.SessionID
	}
	if m.Type == "result" {
		t.ended = true
		return nil
	}
	return []agentcli.Event{{Kind: agentcli.EventText, Text: m.Text}}
}

func (t *feedTurn) SessionID() string { return t.sessionID }

// feedProto is a live.Proto whose Line is streamjson.Feed.
type feedProto struct {
	h   *live.Host
	mu  sync.Mutex
	cur *feedTurn // nil between turns
}

func (p *feedProto) Start(context.Context) error { return nil }

func (p *feedProto) Prompt(ctx context.Context, prompt string) error {
	p.mu.Lock()
	p.cur = &feedTurn{}
	p.mu.Unlock()
	return p.h.Send(ctx, []byte(prompt))
}

func (p *feedProto) Interrupt(context.Context) error { return nil }

func (p *feedProto) Exit(driver.Exit) error { return nil }

func (p *feedProto) Line(line []byte) {
	t := streamjson.Feed(p.h, &p.mu, &p.cur, line)
	if t == nil || !t.ended {
		return
	}
	p.mu.Lock()
	p.cur = nil
	p.mu.Unlock()
	p.h.EndTurn(live.TurnEnd{Result: &agentcli.Result{SessionID: p.h.SessionID()}})
}

// Feed hands a turn's lines to its parser and its events and session id
// to the session; a line between turns is dropped, session id and all.
func ExampleFeed() {
	log := strings.Join([]string{
		`{"t":"start","v":2,"backend":"toy","live":true,"time":"2026-01-01T00:00:00Z"}`,
		`{"t":"ready"}`,
		`{"t":"out","line":{"type":"text","text":"between turns","session_id":"s0"}}`,
		`{"t":"turn"}`,
		`{"t":"in","text":"one"}`,
		`{"t":"out","line":{"type":"text","text":"first"}}`,
		`{"t":"out","line":{"type":"result"}}`,
		`{"t":"turn"}`,
		`{"t":"in","text":"two"}`,
		`{"t":"out","line":{"type":"text","text":"second","session_id":"s1"}}`,
		`{"t":"out","line":{"type":"result"}}`,
		`{"t":"close"}`,
		`{"t":"exit","code":0}`,
	}, "\n")
	rd := wirelog.NewReader(strings.NewReader(log))
	if _, err := rd.Next(); err != nil { // the start record
		fmt.Println(err)
		return
	}
	cfg := live.Config{Backend: "toy", Request: &agentcli.Request{}, Proto: func(h *live.Host) live.Proto { return &feedProto{h: h} }}
	for ev, err := range live.Replay(cfg, rd) {
		switch {
		case err != nil:
			fmt.Println("error:", err)
			return
		case ev.Result != nil:
			fmt.Printf("result: session %q\n", ev.Result.SessionID)
		case ev.Kind == agentcli.EventText:
			fmt.Println("text:", ev.Text)
		}
	}
	// Output:
	// text: first
	// result: session ""
	// text: second
	// result: session "s1"
}
