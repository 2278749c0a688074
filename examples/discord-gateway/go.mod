module github.com/agentcli/agentcli/examples/discord-gateway

go 1.25.0

replace github.com/agentcli/agentcli => ../..

require (
	github.com/agentcli/agentcli v0.0.0-00010101000000-000000000000
	github.com/bwmarrin/discordgo v0.29.0
	github.com/gorilla/websocket v1.4.2
	golang.org/x/sys v0.41.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/coder/acp-go-sdk v0.13.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/crypto v0.0.0-20210421170649-83a5a9bb288b // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
