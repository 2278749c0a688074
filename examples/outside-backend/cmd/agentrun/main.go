// Command agentrun is agentcli's example command (examples/agentrun in the
// agentcli module) with one more backend: "toy", written outside the
// agentcli module (package toy), registered by importing it. Everything
// else is agentrun's, run by its package command:
//
//	go build -o toyagent ./cmd/toyagent
//	TOYAGENT_API_KEY=x go run ./cmd/agentrun -backend toy -cli ./toyagent "hello"
//	TOYAGENT_API_KEY=x go run ./cmd/agentrun -backend toy -cli ./toyagent -permission bypass -stream "run: date"
package main

import (
	"os"

	"github.com/agentcli/agentcli/examples/agentrun/command"

	_ "github.com/agentcli/agentcli/examples/outside-backend/toy"
)

func main() {
	os.Exit(command.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
