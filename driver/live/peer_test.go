//go:build unix

package live

// A fake protocol peer for the session machinery: the test binary itself,
// run with LIVE_FAKE_PEER=1, speaks a toy line protocol (toyProto below is
// its host side). What it does in a turn is chosen by the prompt, so a test
// can inject faults: dying mid-turn, ignoring interrupts, flooding, printing
// malformed or over-long lines, asking for permission.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// peerMsg is every message of the toy protocol, both ways.
type peerMsg struct {
	Op      string          `json:"op,omitempty"` // host → peer: init, prompt, interrupt, answer
	Ev      string          `json:"ev,omitempty"` // peer → host: ready, text, end, ask, interrupted
	Text    string          `json:"text,omitempty"`
	ID      int             `json:"id,omitempty"`
	Allow   bool            `json:"allow,omitempty"`
	Kind    string          `json:"kind,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Message string          `json:"message,omitempty"`
	Pid     int             `json:"pid,omitempty"`
	Session string          `json:"session,omitempty"`
}

// runPeer is the fake CLI. LIVE_PEER_START may say "exit" (die before the
// handshake, like a CLI with bad flags), "silent" (never answer init) or
// "stubborn" (ignore SIGTERM and the end of stdin).
func runPeer() {
	start := os.Getenv("LIVE_PEER_START")
	switch start {
	case "exit":
		fmt.Fprintln(os.Stderr, "Error: session not found: nope")
		os.Exit(2)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
	}
	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex
	send := func(m peerMsg) {
		b, _ := json.Marshal(m)
		outMu.Lock()
		out.Write(append(b, '\n'))
		out.Flush()
		outMu.Unlock()
	}
	raw := func(s string) {
		outMu.Lock()
		out.WriteString(s + "\n")
		out.Flush()
		outMu.Unlock()
	}
	in := make(chan peerMsg, 16)
	var deaf atomic.Bool // stop reading stdin
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m peerMsg
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				if m.Op == "prompt" && (m.Text == "deafen" || strings.HasPrefix(m.Text, "askdeaf ")) {
					deaf.Store(true) // before another line can be read
				}
				in <- m
			}
			for deaf.Load() {
				time.Sleep(time.Hour)
			}
		}
		close(in)
	}()
	// next waits for a message; at the end of stdin the peer exits, unless
	// it is stubborn.
	next := func() peerMsg {
		m, ok := <-in
		if !ok {
			if start == "stubborn" {
				select {}
			}
			os.Exit(0)
		}
		return m
	}
	turn := 0
	for {
		m := next()
		switch m.Op {
		case "init":
			if start == "silent" {
				continue
			}
			send(peerMsg{Ev: "ready", Pid: os.Getpid()})
		case "prompt":
			turn++
			cmd, arg, _ := strings.Cut(m.Text, " ")
			session := "toy-session"
			switch cmd {
			case "echo":
				for _, w := range strings.Fields(arg) {
					send(peerMsg{Ev: "text", Text: w + " "})
				}
				send(peerMsg{Ev: "end", Text: arg + " #" + strconv.Itoa(turn), Session: session})
			case "die":
				send(peerMsg{Ev: "text", Text: "dying"})
				fmt.Fprintln(os.Stderr, "fatal: the peer died on purpose")
				os.Exit(3)
			case "stall", "deaf":
				send(peerMsg{Ev: "text", Text: "thinking"})
				for {
					m := next()
					if m.Op == "interrupt" && cmd == "stall" {
						send(peerMsg{Ev: "interrupted"})
						break
					}
				}
			case "flood":
				n, _ := strconv.Atoi(arg)
				for i := range n {
					send(peerMsg{Ev: "text", Text: strconv.Itoa(i)})
				}
				send(peerMsg{Ev: "end", Text: "flooded", Session: session})
			case "garbage":
				raw("not json at all")
				raw(`{"ev":`)
				raw("\x00\xff\xfe binary")
				raw(`{"ev":"text","text":42}`)
				send(peerMsg{Ev: "end", Text: "survived", Session: session})
			case "long":
				n, _ := strconv.Atoi(arg)
				raw(`{"ev":"text","text":"` + strings.Repeat("x", n) + `"}`)
				send(peerMsg{Ev: "end", Text: "after long", Session: session})
			case "ask":
				// arg: how many permission requests, answered in order.
				n, _ := strconv.Atoi(arg)
				var got []string
				interrupted := false
				for i := 1; i <= n; i++ {
					send(peerMsg{Ev: "ask", ID: i, Input: json.RawMessage(`{"command":"touch X"}`)})
				wait:
					for {
						m := next()
						switch {
						case m.Op == "answer" && m.ID == i:
							d := m.Kind
							if len(m.Input) > 0 {
								d += " " + string(m.Input)
							}
							if m.Message != "" {
								d += " (" + m.Message + ")"
							}
							got = append(got, d)
							break wait
						case m.Op == "interrupt":
							interrupted = true
						}
					}
				}
				if interrupted {
					send(peerMsg{Ev: "interrupted", Text: strings.Join(got, "; ")})
					continue
				}
				send(peerMsg{Ev: "end", Text: strings.Join(got, "; "), Session: session})
			case "escape":
				// A helper in a session of its own, like codex's shell
				// snapshot: out of reach of the group kill.
				c := exec.Command("sleep", "30")
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				if err := c.Start(); err != nil {
					send(peerMsg{Ev: "end", Text: "cannot start: " + err.Error(), Session: session})
					continue
				}
				send(peerMsg{Ev: "end", Text: strconv.Itoa(c.Process.Pid), Session: session})
			case "deafen":
				// End the turn; stdin is not read again (see above).
				send(peerMsg{Ev: "end", Text: "deaf now", Session: session})
			case "askflood":
				// arg: how many permission requests, all sent before any
				// answer is read.
				n, _ := strconv.Atoi(arg)
				for i := 1; i <= n; i++ {
					send(peerMsg{Ev: "ask", ID: i, Input: json.RawMessage(`{"command":"touch X"}`)})
				}
				kinds := map[string]int{}
				for got := 0; got < n; {
					if m := next(); m.Op == "answer" {
						kinds[m.Kind]++
						got++
					}
				}
				send(peerMsg{Ev: "end", Text: fmt.Sprint(kinds), Session: session})
			case "askdeaf":
				// arg: how many permission requests; stdin is not read
				// again (see above), and the turn never ends.
				n, _ := strconv.Atoi(arg)
				for i := 1; i <= n; i++ {
					send(peerMsg{Ev: "ask", ID: i, Input: json.RawMessage(`{"command":"touch X"}`)})
				}
				for {
					time.Sleep(time.Hour)
				}
			case "slowstop":
				// arg: how long the turn takes to end after the
				// interrupt, like a CLI on a loaded machine.
				d, _ := time.ParseDuration(arg)
				send(peerMsg{Ev: "text", Text: "thinking"})
				for m := next(); m.Op != "interrupt"; m = next() {
				}
				time.Sleep(d)
				send(peerMsg{Ev: "interrupted"})
			case "sleep":
				d, _ := time.ParseDuration(arg)
				time.Sleep(d)
				send(peerMsg{Ev: "end", Text: "slept", Session: session})
			}
		}
	}
}

// toyProto is the host side of the toy protocol.
type toyProto struct {
	h     *Host
	ready chan int // the peer's pid, once it is ready
	pids  chan int // Start passes the pid on here (buffered)
	once  sync.Once
}

func (p *toyProto) send(ctx context.Context, m peerMsg) error {
	b, _ := json.Marshal(m)
	return p.h.Send(ctx, b)
}

func (p *toyProto) post(m peerMsg) error {
	b, _ := json.Marshal(m)
	return p.h.Post(b)
}

func (p *toyProto) Start(ctx context.Context) error {
	if err := p.send(ctx, peerMsg{Op: "init"}); err != nil {
		return err
	}
	select {
	case pid := <-p.ready:
		if p.pids != nil {
			p.pids <- pid
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.h.Done():
		return fmt.Errorf("peer exited")
	}
}

func (p *toyProto) Prompt(ctx context.Context, prompt string) error {
	return p.send(ctx, peerMsg{Op: "prompt", Text: prompt})
}

func (p *toyProto) Interrupt(ctx context.Context) error {
	return p.send(ctx, peerMsg{Op: "interrupt"})
}

func (p *toyProto) Exit(e driver.Exit) error {
	if e.Code != 0 {
		return driver.NewErrors(&driver.Spec{Name: "toy"}, nil, nil).Exited(e)
	}
	return nil
}

func (p *toyProto) Line(line []byte) {
	var m peerMsg
	if err := json.Unmarshal(line, &m); err != nil {
		p.h.Emit(driver.Notice("toy", line, err))
		return
	}
	switch m.Ev {
	case "ready":
		p.once.Do(func() {
			select {
			case p.ready <- m.Pid:
			default:
			}
		})
	case "text":
		p.h.Emit(agentcli.Event{Kind: agentcli.EventTextDelta, Text: m.Text, Raw: line})
	case "end":
		p.h.SetSessionID(m.Session)
		p.h.EndTurn(TurnEnd{Result: &agentcli.Result{Text: m.Text, SessionID: m.Session}})
	case "interrupted":
		p.h.EndTurn(TurnEnd{Interrupted: true, Result: &agentcli.Result{Text: m.Text}})
	case "ask":
		id := m.ID
		pr := &agentcli.PermissionRequest{
			Tool: agentcli.ToolUse{ID: "call-" + strconv.Itoa(id), Name: "Bash", RawName: "shell", Kind: agentcli.ToolExecute, Input: m.Input},
			Options: []agentcli.PermissionOption{
				{ID: "yes", Kind: agentcli.AllowOnce}, {ID: "always", Kind: agentcli.AllowAlways}, {ID: "no", Kind: agentcli.RejectOnce},
			},
		}
		p.h.Ask(pr, func(d agentcli.PermissionDecision) {
			p.post(peerMsg{Op: "answer", ID: id, Kind: string(d.Kind), Input: d.Input, Message: d.Message})
		})
	}
}
