package fakecli

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Flavor describes how one real CLI parses its argv.
type Flavor struct {
	// Bool lists flags that take no value; Value flags that take one;
	// Variadic flags that take every following argument up to the next one
	// starting with "-". Aliases are separate entries.
	Bool, Value, Variadic []string
	// Subcommands are leading positional words that select a mode (e.g.
	// "exec", "resume"); they are kept in positional order.
	Subcommands []string
	// FileFlags name flags whose value is a file the fake reads and records.
	FileFlags []string
	// UsageExit is the exit status for an argv the real CLI rejects.
	UsageExit int
	// Validate, if set, checks the parsed argv like the real CLI would and
	// returns an error message, or "".
	Validate func(values map[string][]string, positional []string) string
	// StdinPrompt, if set, extracts the prompt from what the CLI read on
	// stdin (for CLIs that take structured input); it returns an error
	// message for input the real CLI would reject.
	StdinPrompt func(values map[string][]string, stdin []byte) (string, string)
}

// Flavors holds the argv rules of each fake CLI, by backend name. Backend
// packages' tests add theirs in this package's files.
var Flavors = map[string]*Flavor{}

// ParsedArgs is an argv as a Flavor parsed it.
type ParsedArgs struct {
	Values     map[string][]string // flag → values ("" for booleans)
	Positional []string
}

// Parse parses args with the flavor's rules, like the real CLI would.
func (f *Flavor) Parse(args []string) (*ParsedArgs, error) {
	is := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	p := &ParsedArgs{Values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.Positional = append(p.Positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			p.Positional = append(p.Positional, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		switch {
		case is(f.Bool, name):
			if hasVal {
				return nil, fmt.Errorf("error: option '%s' does not take a value", name)
			}
			p.Values[name] = append(p.Values[name], "")
		case is(f.Value, name):
			if !hasVal {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("error: option '%s' argument missing", name)
				}
				i++
				val = args[i]
			}
			p.Values[name] = append(p.Values[name], val)
		case is(f.Variadic, name):
			if hasVal {
				p.Values[name] = append(p.Values[name], val)
				continue
			}
			n := 0
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				n++
				p.Values[name] = append(p.Values[name], args[i])
			}
			if n == 0 {
				return nil, fmt.Errorf("error: option '%s' argument missing", name)
			}
		default:
			return nil, fmt.Errorf("error: unknown option '%s'", name)
		}
	}
	return p, nil
}

func init() {
	// Claude Code 2.1.330 (commander): see wire-formats §2.1.
	Flavors["claude"] = &Flavor{
		Bool: []string{"-p", "--print", "--verbose", "--include-partial-messages",
			"--dangerously-skip-permissions", "--allow-dangerously-skip-permissions", "-c", "--continue",
			"--fork-session", "--strict-mcp-config", "--bare", "--replay-user-messages",
			"--no-session-persistence", "--include-hook-events", "-d", "--debug"},
		Value: []string{"--output-format", "--input-format", "--model", "--append-system-prompt",
			"--system-prompt", "--system-prompt-file", "--append-system-prompt-file", "--permission-mode",
			"--max-turns", "-r", "--resume", "--session-id", "--settings", "--fallback-model", "--effort",
			"--max-budget-usd", "--json-schema", "--setting-sources", "--permission-prompt-tool", "--tools",
			"--agent"},
		Variadic:  []string{"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--add-dir", "--mcp-config"},
		FileFlags: []string{"--append-system-prompt-file", "--system-prompt-file"},
		UsageExit: 1,
		Validate: func(v map[string][]string, pos []string) string {
			if v["-p"] == nil && v["--print"] == nil {
				return "fakecli(claude): interactive mode is not supported; pass -p"
			}
			out := v["--output-format"]
			if len(out) > 0 && out[len(out)-1] == "stream-json" && v["--verbose"] == nil {
				return "Error: When using --print, --output-format=stream-json requires --verbose"
			}
			if in := v["--input-format"]; len(in) > 0 && in[len(in)-1] == "stream-json" && (len(out) == 0 || out[len(out)-1] != "stream-json") {
				return "Error: --input-format=stream-json requires output-format=stream-json."
			}
			return ""
		},
		StdinPrompt: func(v map[string][]string, stdin []byte) (string, string) {
			if in := v["--input-format"]; len(in) == 0 || in[len(in)-1] != "stream-json" {
				return string(stdin), ""
			}
			var prompt []string
			for _, line := range strings.Split(strings.TrimSpace(string(stdin)), "\n") {
				var m struct {
					Type    string `json:"type"`
					Message struct {
						Role    string `json:"role"`
						Content string `json:"content"`
					} `json:"message"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil || m.Type != "user" || m.Message.Role != "user" {
					return "", fmt.Sprintf("Error parsing streaming input line: %q", line)
				}
				prompt = append(prompt, m.Message.Content)
			}
			return strings.Join(prompt, "\n"), ""
		},
	}
}
