package fakecli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Style is the option grammar of a CLI's argument parser. The three
// differ exactly where a value from a caller could turn into an option:
// which following argument an option takes as its value, and what ends a
// list.
type Style int

const (
	// Commander is commander.js (Claude Code 2.1.330): an option with a
	// required value takes the next argument whatever it looks like; an
	// optional value ([value]) is taken only when the next argument does
	// not start with "-" (a lone "-" is a value; "-1" is an option); a
	// variadic option (<values...>) then takes every following argument up
	// to the next one starting with "-". --opt=value takes exactly that
	// value and starts no list. A short option with a value takes the rest
	// of its argument (-rID); short booleans cluster (-pc). "--" ends the
	// options. An unknown option is an error.
	Commander Style = iota
	// Yargs is yargs-parser 21 with yargs' defaults (gemini 0.61.0, opencode
	// 1.18.33). An option is known by its key (the name without dashes, or
	// its camelCase form), so -m, --m and --model are one option.
	// --key=value takes exactly that value (quotes around it are stripped
	// unless the option has nargs). A string option with nargs: 1 (Value)
	// needs one following argument that does not start with "-" followed
	// by a non-digit ("Not enough arguments following: key"); without nargs
	// (Optional) it takes the next argument unless that starts with "-" (a
	// negative number excepted), and is "" otherwise. A boolean takes a
	// following "true" or "false". An array (Variadic) takes following
	// arguments up to one starting with "-", or one per occurrence when in
	// Once. -abc sets a, b and c; the last letter may take a value as a
	// long option does. --no-key sets key to false. "--" ends the options.
	// Unknown keys are an error (yargs' strict mode).
	Yargs
	// Clap is Rust's clap 4 (codex 0.169.0); Flavor.Parser implements it
	// for codex's two command levels (see ParseCodexArgs).
	Clap
)

// Flavor describes how one real CLI parses its argv.
type Flavor struct {
	// Style selects the parser for the lists below.
	Style Style
	// Bool lists flags that take no value; Value flags that take one;
	// Optional flags whose value may be left out; Variadic flags that take
	// a list (see Style). Aliases are separate entries.
	Bool, Value, Optional, Variadic []string
	// Once lists Variadic flags that take one value per occurrence (yargs
	// arrays declared with nargs: 1).
	Once []string
	// Aliases groups the spellings of one option (Yargs); values are
	// recorded under the first spelling of the group.
	Aliases [][]string
	// Parser, if set, parses argv instead of Style's parser.
	Parser func(args []string) (*ParsedArgs, error)
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
	// Live, if set, checks the argv of a live session (a live script)
	// instead of Parse and Validate, and returns an error message or "".
	Live func(args []string) string
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
	// Options lists every option in the order the parser met it: one entry
	// per value for list options.
	Options []Option
}

// Option is one option a parser read.
type Option struct {
	// Name is the flag as recorded in Values (e.g. "--model").
	Name string
	// Value is its value ("" for a boolean).
	Value string
	// Arg is the index in argv of the argument that named the option.
	Arg int
}

func (p *ParsedArgs) add(name, value string, arg int) {
	p.Values[name] = append(p.Values[name], value)
	p.Options = append(p.Options, Option{Name: name, Value: value, Arg: arg})
}

// OptionArgs returns the indexes of the argv elements the parser read as
// options (not as values or positionals), in order, without duplicates.
func (p *ParsedArgs) OptionArgs() []int {
	var out []int
	for _, o := range p.Options {
		if len(out) == 0 || out[len(out)-1] != o.Arg {
			out = append(out, o.Arg)
		}
	}
	return out
}

type optKind int

const (
	kindNone optKind = iota
	kindBool
	kindValue
	kindOptional
	kindVariadic
)

func (f *Flavor) kind(name string) optKind {
	switch {
	case slices.Contains(f.Bool, name):
		return kindBool
	case slices.Contains(f.Value, name):
		return kindValue
	case slices.Contains(f.Optional, name):
		return kindOptional
	case slices.Contains(f.Variadic, name):
		return kindVariadic
	}
	return kindNone
}

// Parse parses args with the flavor's rules, like the real CLI would.
func (f *Flavor) Parse(args []string) (*ParsedArgs, error) {
	if f.Parser != nil {
		return f.Parser(args)
	}
	switch f.Style {
	case Commander:
		return f.parseCommander(args)
	case Yargs:
		return f.parseYargs(args)
	}
	return nil, fmt.Errorf("fakecli: flavor style %d has no generic parser", f.Style)
}

// commanderOption mirrors commander's maybeOption: "-" alone is a value.
func commanderOption(a string) bool { return len(a) > 1 && a[0] == '-' }

func (f *Flavor) parseCommander(argv []string) (*ParsedArgs, error) {
	args := slices.Clone(argv)
	p := &ParsedArgs{Values: map[string][]string{}}
	variadic, varArg := "", 0 // the list being collected
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.Positional = append(p.Positional, args[i+1:]...)
			break
		}
		if variadic != "" && !commanderOption(a) {
			p.add(variadic, a, varArg)
			continue
		}
		variadic = ""
		if commanderOption(a) {
			switch f.kind(a) {
			case kindBool:
				p.add(a, "", i)
				continue
			case kindValue, kindVariadic:
				if i+1 >= len(args) {
					return nil, fmt.Errorf("error: option '%s' argument missing", a)
				}
				p.add(a, args[i+1], i)
				if f.kind(a) == kindVariadic {
					variadic, varArg = a, i
				}
				i++
				continue
			case kindOptional:
				v := ""
				if i+1 < len(args) && !commanderOption(args[i+1]) {
					v = args[i+1]
					p.add(a, v, i)
					i++
				} else {
					p.add(a, v, i)
				}
				continue
			}
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			short := a[:2]
			switch f.kind(short) {
			case kindBool:
				p.add(short, "", i)
				args[i] = "-" + a[2:]
				i-- // the rest is parsed as the next short options
				continue
			case kindValue, kindOptional, kindVariadic:
				p.add(short, a[2:], i)
				continue
			}
		}
		if strings.HasPrefix(a, "--") {
			if name, val, ok := strings.Cut(a, "="); ok {
				if k := f.kind(name); k == kindValue || k == kindOptional || k == kindVariadic {
					p.add(name, val, i)
					continue
				}
			}
		}
		if commanderOption(a) {
			return nil, fmt.Errorf("error: unknown option '%s'", a)
		}
		p.Positional = append(p.Positional, a)
	}
	return p, nil
}

// yargsNegative is yargs-parser's pattern for a negative number, which is a
// value rather than an option.
var yargsNegative = regexp.MustCompile(`^-([0-9]+(\.[0-9]+)?|\.[0-9]+)$`)

// yargsKey resolves a yargs key (an option name without dashes) to the
// flavor's spelling of that option and its kind.
func (f *Flavor) yargsKey(key string) (string, optKind) {
	for _, name := range slices.Concat(f.Bool, f.Value, f.Optional, f.Variadic) {
		k := strings.TrimLeft(name, "-")
		if k == key || camelCase(k) == key {
			for _, group := range f.Aliases {
				if slices.Contains(group, name) {
					name = group[0]
					break
				}
			}
			return name, f.kind(name)
		}
	}
	return "", kindNone
}

// camelCase is yargs' camel-case expansion of a dashed key.
func camelCase(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func stripQuotes(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

func (f *Flavor) parseYargs(args []string) (*ParsedArgs, error) {
	p := &ParsedArgs{Values: map[string][]string{}}
	var unknown []string
	var nargsErr error
	set := func(key, val string, arg int) {
		name, k := f.yargsKey(key)
		if k == kindNone {
			unknown = append(unknown, key)
			p.add("--"+key, val, arg)
			return
		}
		if k == kindBool {
			// yargs turns a boolean's string value into val === "true".
			if val == "true" {
				val = ""
			} else {
				val = "false"
			}
		}
		p.add(name, val, arg)
	}
	kindOf := func(key string) optKind { _, k := f.yargsKey(key); return k }
	once := func(key string) bool { name, _ := f.yargsKey(key); return slices.Contains(f.Once, name) }
	// eatNargs: a Value option (nargs: 1).
	eatNargs := func(i int, key string, after *string) int {
		available := 0
		if after != nil {
			available = 1
		}
		for j := i + 1; j < len(args); j++ {
			a := args[j]
			if !(len(a) >= 2 && a[0] == '-' && (a[1] < '0' || a[1] > '9')) || yargsNegative.MatchString(a) {
				available++
			} else {
				break
			}
		}
		if available < 1 {
			//lint:ignore ST1005 yargs' own wording, which the real CLI prints
			nargsErr = fmt.Errorf("Not enough arguments following: %s", key)
			return i
		}
		if after != nil {
			set(key, *after, i)
			return i
		}
		set(key, args[i+1], i)
		return i + 1
	}
	// eatArray: a Variadic option.
	eatArray := func(i int, key string, after *string) int {
		opt := i
		var next *string
		if after != nil && *after != "" {
			next = after
		} else if i+1 < len(args) {
			next = &args[i+1]
		}
		if next == nil || after == nil && strings.HasPrefix(*next, "-") && !yargsNegative.MatchString(*next) {
			if once(key) {
				//lint:ignore ST1005 yargs' own wording, which the real CLI prints
				nargsErr = fmt.Errorf("Not enough arguments following: %s", key)
			}
			return i
		}
		n := 0
		if after != nil {
			set(key, *after, opt)
			n++
		}
		for j := i + 1; j < len(args); j++ {
			if once(key) && n >= 1 {
				break
			}
			a := args[j]
			if strings.HasPrefix(a, "-") && !yargsNegative.MatchString(a) {
				break
			}
			set(key, a, opt)
			n++
			i = j
		}
		return i
	}
	// setDefault sets key without a value: true for a boolean, "" for a
	// string.
	setDefault := func(key string, arg int) {
		if kindOf(key) == kindBool {
			set(key, "true", arg)
		} else {
			set(key, "", arg)
		}
	}
	// single: an option written --key or as the last letter of -abc.
	single := func(i int, key string, groupLast bool) int {
		switch kindOf(key) {
		case kindVariadic:
			return eatArray(i, key, nil)
		case kindValue:
			return eatNargs(i, key, nil)
		}
		if i+1 < len(args) {
			next := args[i+1]
			looksOption := strings.HasPrefix(next, "-")
			if groupLast {
				looksOption = len(next) >= 2 && next[0] == '-' && next[1] != '-' || len(next) >= 3 && strings.HasPrefix(next, "--") && next[2] != '-'
			}
			if (!looksOption || yargsNegative.MatchString(next)) && kindOf(key) != kindBool {
				set(key, next, i)
				return i + 1
			}
			if next == "true" || next == "false" {
				set(key, next, i)
				return i + 1
			}
		}
		setDefault(key, i)
		return i
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "---") && (len(strings.TrimLeft(a, "-")) == 0 || strings.TrimLeft(a, "-")[0] == '='):
			p.Positional = append(p.Positional, a)
		case len(a) > 3 && strings.HasPrefix(a, "--") && strings.Contains(a[3:], "="):
			key, val, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			switch kindOf(key) {
			case kindVariadic:
				i = eatArray(i, key, &val)
			case kindValue:
				i = eatNargs(i, key, &val)
			default:
				set(key, stripQuotes(val), i)
			}
		case len(a) > 5 && strings.HasPrefix(a, "--no-"):
			set(a[5:], "false", i)
		case len(a) > 2 && strings.HasPrefix(a, "--"):
			i = single(i, a[2:], false)
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && !yargsNegative.MatchString(a):
			letters := a[1 : len(a)-1]
			broken := false
			for j := 0; j < len(letters); j++ {
				next := a[j+2:]
				if j+1 < len(letters) && letters[j+1] == '=' {
					val := a[j+3:]
					switch kindOf(letters[j : j+1]) {
					case kindVariadic:
						i = eatArray(i, letters[j:j+1], &val)
					case kindValue:
						i = eatNargs(i, letters[j:j+1], &val)
					default:
						set(letters[j:j+1], val, i)
					}
					broken = true
					break
				}
				if next == "-" {
					set(letters[j:j+1], next, i)
					continue
				}
				if isLetter(letters[j]) && yargsNumber.MatchString(next) {
					set(letters[j:j+1], next, i)
					broken = true
					break
				}
				if j+1 < len(letters) && !isWord(letters[j+1]) {
					set(letters[j:j+1], next, i)
					broken = true
					break
				}
				setDefault(letters[j:j+1], i)
			}
			if last := a[len(a)-1:]; !broken && last != "-" {
				i = single(i, last, true)
			}
		case a == "--":
			p.Positional = append(p.Positional, args[i+1:]...)
			i = len(args)
		default:
			p.Positional = append(p.Positional, a)
		}
	}
	if nargsErr != nil {
		return nil, nargsErr
	}
	if len(unknown) > 0 {
		//lint:ignore ST1005 yargs' own wording, which the real CLI prints
		return nil, fmt.Errorf("Unknown arguments: %s", strings.Join(unknown, ", "))
	}
	return p, nil
}

// yargsNumber is what yargs takes as a number after a short option (-n5).
var yargsNumber = regexp.MustCompile(`^-?\d+(\.\d*)?(e-?\d+)?$`)

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isWord mirrors JavaScript's \w.
func isWord(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' || c == '_' }

func init() {
	// Claude Code 2.1.330 (commander.js): `claude --help` of 2.1.330 plus
	// the hidden options of wire-formats §2.1 (--system-prompt-file,
	// --append-system-prompt-file, --max-turns, --permission-prompt-tool).
	// The grammar was checked against the binary by real runs (see
	// claude/flavor_real_test.go): --resume takes an optional value,
	// --allowedTools a variadic list, --opt=value exactly one value.
	Flavors["claude"] = &Flavor{
		Style: Commander,
		Bool: []string{"-p", "--print", "--verbose", "--include-partial-messages",
			"--dangerously-skip-permissions", "--allow-dangerously-skip-permissions", "-c", "--continue",
			"--fork-session", "--strict-mcp-config", "--bare", "--replay-user-messages",
			"--no-session-persistence", "--include-hook-events", "--ax-screen-reader", "--bg", "--background",
			"--brief", "--chrome", "--no-chrome", "--desktop", "--disable-slash-commands",
			"--exclude-dynamic-system-prompt-sections", "--forward-subagent-text", "-h", "--help", "--ide",
			"--restricted", "--safe-mode", "--tmux", "-v", "--version"},
		Value: []string{"--output-format", "--input-format", "--model", "--append-system-prompt",
			"--system-prompt", "--system-prompt-file", "--append-system-prompt-file", "--permission-mode",
			"--max-turns", "--session-id", "--settings", "--fallback-model", "--effort",
			"--max-budget-usd", "--json-schema", "--setting-sources", "--permission-prompt-tool",
			"--agent", "--agents", "--autocompact", "--debug-file", "--environment", "-n", "--name",
			"--permission-prompts", "--plugin-dir", "--plugin-url", "--remote-control-session-name-prefix",
			"--system-prompt-snapshot"},
		Optional: []string{"-r", "--resume", "-d", "--debug", "--cloud", "--from-pr", "--prompt-suggestions",
			"--remote-control", "--teleport", "-w", "--worktree"},
		Variadic: []string{"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools",
			"--add-dir", "--mcp-config", "--betas", "--file", "--tools"},
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
		StdinPrompt: streamJSONPrompt("Error parsing streaming input line: %q"),
	}
}

// streamJSONPrompt returns the StdinPrompt of a CLI that reads, with
// --input-format stream-json, one user message a line ({"type":"user",
// "message":{"role":"user","content"}}; their contents joined make the
// prompt) and otherwise stdin as the prompt; badLine formats the error of
// a line that is not such a message (%q: the line).
func streamJSONPrompt(badLine string) func(v map[string][]string, stdin []byte) (string, string) {
	return func(v map[string][]string, stdin []byte) (string, string) {
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
				return "", fmt.Sprintf(badLine, line)
			}
			prompt = append(prompt, m.Message.Content)
		}
		return strings.Join(prompt, "\n"), ""
	}
}
