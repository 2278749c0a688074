module github.com/agentcli/agentcli/examples/outside-backend

go 1.24.0

replace github.com/agentcli/agentcli => ../..

require github.com/agentcli/agentcli v0.0.0-00010101000000-000000000000

require (
	github.com/coder/acp-go-sdk v0.13.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
