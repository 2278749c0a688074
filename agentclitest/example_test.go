package agentclitest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/agentcli/agentcli/agentclitest"
)

// A Server answers model calls with scripted turns, in order, and records
// every call.
func ExampleNewServer() {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "Hello!"})
	defer srv.Close()

	body := `{"model":"any-model","messages":[{"role":"user","content":"Say hello."}]}`
	resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var msg struct {
		Content []struct{ Text string }
	}
	json.NewDecoder(resp.Body).Decode(&msg)

	fmt.Println(msg.Content[0].Text)
	req := srv.Requests()[0]
	fmt.Println(req.API, req.Model, req.LastUserText())
	// Output:
	// Hello!
	// anthropic any-model Say hello.
}

// Wire points a real CLI at the server. Here claude is asked to run a shell
// command and then to answer.
func ExampleServer_Wire() {
	srv := agentclitest.NewServer(
		agentclitest.Turn{Shell: "echo conformance"},
		agentclitest.Turn{Text: "It printed conformance."},
	)
	defer srv.Close()

	home, err := os.MkdirTemp("", "agentclitest-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	w, err := srv.Wire("claude", home)
	if err != nil {
		panic(err)
	}

	args := append([]string{"-p", "--output-format", "json", "--dangerously-skip-permissions"}, w.Args...)
	cmd := exec.Command("claude", args...)
	cmd.Env = w.Env // a complete environment: HOME, TMPDIR, XDG_*, ANTHROPIC_BASE_URL, ...
	cmd.Dir = w.Dir
	cmd.Stdin = strings.NewReader("Run the conformance command.")
	// Run it (ideally inside a private network namespace), then inspect
	// srv.Requests(): the second call carries the command's output in
	// ToolResults.
	_ = cmd

	for _, kv := range w.Env {
		if strings.HasPrefix(kv, "ANTHROPIC_BASE_URL=") {
			fmt.Println(kv == "ANTHROPIC_BASE_URL="+srv.URL())
		}
	}
	// Output:
	// true
}
