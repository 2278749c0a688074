// Command toyagent is the toy coding-agent CLI that package toy drives;
// see package toyagent for its command line and output.
//
//	go install github.com/agentcli/agentcli/examples/outside-backend/cmd/toyagent@latest
//	echo "run: date" | TOYAGENT_API_KEY=x toyagent -json -yolo
package main

import (
	"os"

	"github.com/agentcli/agentcli/examples/outside-backend/toyagent"
)

func main() {
	os.Exit(toyagent.Main(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}
