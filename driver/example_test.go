package driver_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// toyLine is one line of a toy CLI's output, under the wire's own names:
// {"type":"text","text":"…"} as the answer streams, then
// {"type":"done","ok":true}.
type toyLine struct {
	Type, Text string
	OK         bool
}

// Decode decodes one line (driver.Wire): it may run on any goroutine.
func (w *toyLine) Decode(d *jsonscan.Decoder) error {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			w.Type, _ = d.UnsafeStr()
		case "text":
			w.Text, _ = d.UnsafeStr()
		case "ok":
			w.OK = d.LooseBool()
		} // anything else is skipped
	}
	return nil
}

// toyRun is the state of one run (driver.LineParser): it applies the
// decoded lines in order and decides the outcome.
type toyRun struct {
	evs      []agentcli.Event
	text     string
	done, ok bool
}

func (p *toyRun) Apply(w *toyLine, line *driver.Line) []agentcli.Event {
	p.evs = p.evs[:0]
	switch w.Type {
	case "text":
		p.text += w.Text
		return append(p.evs, agentcli.Event{Kind: agentcli.EventText, Text: w.Text, Raw: line.Raw()})
	case "done":
		p.done, p.ok = true, w.OK
		return p.evs
	}
	// A line of a type it does not know yet is kept, never fatal.
	return append(p.evs, agentcli.Event{Kind: agentcli.EventUnknown, Raw: line.UnknownRaw()})
}

func (p *toyRun) End(exit driver.Exit) driver.Outcome {
	res := &agentcli.Result{Text: p.text}
	switch {
	case !p.done:
		return driver.Outcome{} // no terminal event: the exit decides
	case !p.ok || exit.Code != 0:
		return driver.Outcome{Result: res, Failed: true, Message: "the toy gave up"}
	}
	return driver.Outcome{Result: res}
}

// A backend writes its wire type's Decode, and Apply and End of a run's
// state; Lines builds the Parser, and with it every way the kit reads
// output fast (decoding on other goroutines, shared or reused memory, huge
// lines decoded in place). Spec.End turns the Outcome into the run's
// Result or typed error, as a run does.
func ExampleLines() {
	spec := &driver.Spec{
		Name:      "toy",
		NewParser: func(*driver.Run) driver.Parser { return driver.Lines("toy", &toyRun{}) },
	}
	p := spec.NewParser(nil)
	for _, line := range []string{
		`{"type":"text","text":"Hello, "}`,
		`{"type":"tool","name":"future"}`,
		`{"type":"text","text":"world"}`,
		`not JSON`,
		`{"type":"done","ok":false}`,
	} {
		for _, ev := range p.Line([]byte(line)) {
			fmt.Printf("%s %q %s\n", ev.Kind, ev.Text, ev.Raw)
		}
	}
	res, err := spec.End(p, driver.Exit{Code: 1})
	fmt.Printf("%q, exit status %d, %v\n", res.Text, res.ExitCode, err)
	// Output:
	// text "Hello, " {"type":"text","text":"Hello, "}
	// unknown "" {"type":"tool","name":"future"}
	// text "world" {"type":"text","text":"world"}
	// notice "toy: failed to parse CLI output: not a JSON object" not JSON
	// "Hello, world", exit status 1, toy: error result: the toy gave up
}

// A Spec.Interactive builds the UI's command line from a copy of the
// request without the settings the UI cannot take: each one set is a
// warning (on the backend's logger), or under Options.Strict an error.
func ExampleRun_DropUI() {
	req := agentcli.Request{Prompt: "hi", MaxTurns: 3, OutputSchema: json.RawMessage(`{"type":"object"}`)}
	r := &driver.Run{Req: &req, Options: &agentcli.Options{}}
	if err := r.DropUI(&req, driver.UIMaxTurns, driver.UIMaxBudget, driver.UIOutputSchema); err != nil {
		fmt.Println(err)
	}
	fmt.Println(req.MaxTurns, req.OutputSchema == nil)

	req = agentcli.Request{Prompt: "hi", Effort: agentcli.EffortHigh}
	r = &driver.Run{Req: &req, Options: &agentcli.Options{Strict: true}}
	var ue *agentcli.UnsupportedError
	if errors.As(r.DropUI(&req, driver.UIEffort), &ue) {
		fmt.Println(ue.Feature, ue.Reason)
	}
	// Output:
	// 0 true
	// reasoning effort in interactive mode
}
