module github.com/agentcli/agentcli

go 1.24.0
