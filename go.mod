module github.com/agentcli/agentcli

go 1.24.0

require (
	github.com/coder/acp-go-sdk v0.13.0
	github.com/google/go-cmp v0.7.0
	golang.org/x/sync v0.19.0
	golang.org/x/sys v0.41.0
	pgregory.net/rapid v1.3.0
)
