package main

import (
	"slices"
	"strings"
	"testing"
)

// TestChildEnv: the CLI gets the allow-list, its backend's variables and
// the operator's additions; never the bot's token, whatever is asked.
func TestChildEnv(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/bot", "LANG=C.UTF-8", "LC_ALL=C", "HTTPS_PROXY=http://proxy:3128",
		"DISCORD_TOKEN=secret-bot-token", "discord_token=lower", "DISCORD_API_URL=http://x",
		"ANTHROPIC_API_KEY=sk-ant", "CLAUDE_CONFIG_DIR=/c", "OPENAI_API_KEY=sk-oai", "GEMINI_API_KEY=g",
		"DATABASE_URL=postgres://secret", "AWS_SECRET_ACCESS_KEY=aws", "EXTRA=1", "NOTSET_LATER=2",
	}
	for _, tt := range []struct {
		backend   string
		additions []string
		want      []string
	}{
		{"claude", nil, []string{"PATH=/usr/bin", "HOME=/home/bot", "LANG=C.UTF-8", "LC_ALL=C", "HTTPS_PROXY=http://proxy:3128",
			"ANTHROPIC_API_KEY=sk-ant", "CLAUDE_CONFIG_DIR=/c", "AWS_SECRET_ACCESS_KEY=aws"}},
		{"codex", []string{"EXTRA", "SET=x=y", "MISSING", "DISCORD_TOKEN", "discord_token"}, []string{"PATH=/usr/bin", "HOME=/home/bot",
			"LANG=C.UTF-8", "LC_ALL=C", "HTTPS_PROXY=http://proxy:3128", "OPENAI_API_KEY=sk-oai", "EXTRA=1", "SET=x=y"}},
		{"gemini", []string{"DISCORD_TOKEN=stolen"}, []string{"PATH=/usr/bin", "HOME=/home/bot", "LANG=C.UTF-8", "LC_ALL=C",
			"HTTPS_PROXY=http://proxy:3128", "GEMINI_API_KEY=g"}},
	} {
		got := childEnv(environ, tt.backend, tt.additions)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s %v:\n got %v\nwant %v", tt.backend, tt.additions, got, tt.want)
		}
		for _, kv := range got {
			if strings.Contains(strings.ToUpper(kv), "DISCORD") || strings.Contains(kv, "postgres") {
				t.Errorf("%s: %s reached the CLI", tt.backend, kv)
			}
		}
	}
}
