package agentcli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// A run with MCP servers of its own: a local one started by the CLI
// (stdio) and a remote one (Streamable HTTP). Their credentials travel in
// a private file, never on the CLI's command line.
func ExampleMCPServer() {
	b, err := agentcli.Open("claude", nil)
	if err != nil {
		log.Fatal(err)
	}
	req := &agentcli.Request{
		Prompt: "Which issues are labelled bug?",
		MCPServers: []agentcli.MCPServer{{
			Name:    "github",
			Command: "github-mcp-server",
			Args:    []string{"stdio"},
			Env:     []string{"GITHUB_PERSONAL_ACCESS_TOKEN=" + os.Getenv("GITHUB_TOKEN")},
		}, {
			Name:    "docs",
			URL:     "https://docs.example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer " + os.Getenv("DOCS_TOKEN")},
		}},
	}
	// claude offers the servers' tools as mcp__github__... and
	// mcp__docs__...; b.Run(ctx, req) would run it.
	fmt.Println(b.Capabilities().MCP, len(req.MCPServers))
	// Output: true 2
}

// Asking for a reasoning effort the backend supports, and leaving it at
// the CLI's default otherwise (a level a backend lacks is ignored with a
// warning, or refused under Options.Strict).
func ExampleEffort() {
	b, err := agentcli.Open("claude", nil)
	if err != nil {
		log.Fatal(err)
	}
	req := &agentcli.Request{Prompt: "Find the race.", Effort: agentcli.EffortXHigh}
	if !slices.Contains(b.Capabilities().Efforts, req.Effort) {
		req.Effort = ""
	}
	fmt.Println(req.Effort)
	// Output: xhigh
}

// Every level, from the least reasoning to the most.
func ExampleEfforts() {
	fmt.Println(agentcli.Efforts())
	// Output: [minimal low medium high xhigh max]
}

// Structured output: the final answer follows a JSON schema, and its value
// is Result.StructuredOutput. Here a scripted backend plays the CLI.
func ExampleResult_structuredOutput() {
	b := agentclitest.NewBackend(agentclitest.Call{Result: &agentcli.Result{
		Text:             `{"verdict":"flaky","tests":["TestRetry"]}`,
		StructuredOutput: json.RawMessage(`{"verdict":"flaky","tests":["TestRetry"]}`),
	}})
	req := &agentcli.Request{
		Prompt: "Is TestRetry flaky or broken?",
		OutputSchema: json.RawMessage(`{"type":"object","required":["verdict","tests"],"properties":{
			"verdict":{"enum":["flaky","broken"]},"tests":{"type":"array","items":{"type":"string"}}}}`),
	}
	res, err := b.Run(context.Background(), req)
	if err != nil {
		log.Fatal(err)
	}
	var out struct {
		Verdict string   `json:"verdict"`
		Tests   []string `json:"tests"`
	}
	if err := json.Unmarshal(res.StructuredOutput, &out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Verdict, out.Tests)
	// Output: flaky [TestRetry]
}

// A spending cap: a run that reaches it fails with a *ResultError whose
// TerminalReason is "budget_exhausted".
func ExampleRequest_maxBudgetUSD() {
	b := agentclitest.NewBackend(agentclitest.Call{Err: &agentcli.ResultError{
		Backend: "claude", Subtype: "error_max_budget_usd", TerminalReason: "budget_exhausted",
	}})
	_, err := b.Run(context.Background(), &agentcli.Request{Prompt: "Refactor everything.", MaxBudgetUSD: 0.50})
	var re *agentcli.ResultError
	if errors.As(err, &re) && re.TerminalReason == "budget_exhausted" {
		fmt.Println("over budget")
	}
	// Output: over budget
}

// Raw is kept for lines up to Request.MaxRawBytes (1 MiB unless set): a
// huge line, such as a tool's whole output, then costs about its own size
// in memory, and its event carries the decoded output without the line.
// An EventUnknown keeps its Raw whatever its length, since it has nothing
// else to show.
func ExampleRequest_maxRawBytes() {
	line := func(pad int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"tool_result","output":%q}`, strings.Repeat("x", pad)))
	}
	b := agentclitest.NewBackend(agentclitest.Call{Events: []agentcli.Event{
		{Kind: agentcli.EventToolResult, ToolResult: &agentcli.ToolResult{ID: "t1", Output: "ok"}, Raw: line(2)},
		{Kind: agentcli.EventToolResult, ToolResult: &agentcli.ToolResult{ID: "t2", Output: "big"}, Raw: line(2 << 20)},
		{Kind: agentcli.EventUnknown, Raw: line(2 << 20)},
	}})
	for ev, err := range b.Stream(context.Background(), &agentcli.Request{Prompt: "Read the logs."}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Kind, len(ev.Raw))
	}
	// Output:
	// tool_result 36
	// tool_result 0
	// unknown 2097186
}
