package fakecli

import (
	"fmt"
	"slices"
	"strings"
)

// codexOpt is one option of a codex (clap) command level.
type codexOpt struct {
	long    string   // canonical name, e.g. "--model"
	aliases []string // other spellings, e.g. "-m"
	value   bool     // takes a value
	multi   bool     // takes one or more values per occurrence (clap num_args(1..))
	repeat  bool     // may be given more than once
	choices []string // allowed values, if restricted
}

// codexBothOpts are the options that `codex exec` 0.169.0 and its
// `resume` take alike (codex exec --help, codex exec resume --help).
var codexBothOpts = []codexOpt{
	{long: "--config", aliases: []string{"-c"}, value: true, repeat: true},
	{long: "--enable", value: true, repeat: true},
	{long: "--disable", value: true, repeat: true},
	{long: "--strict-config"},
	{long: "--model", aliases: []string{"-m"}, value: true},
	{long: "--dangerously-bypass-approvals-and-sandbox", aliases: []string{"--yolo"}},
	{long: "--dangerously-bypass-hook-trust"},
	{long: "--worktree"},
	{long: "--thread-source", value: true},
	{long: "--cyber-access-program", value: true, choices: []string{"standard", "daybreak_blue", "daybreak_red"}},
	{long: "--skip-git-repo-check"},
	{long: "--trust"},
	{long: "--ephemeral"},
	{long: "--ignore-user-config"},
	{long: "--ignore-rules"},
	{long: "--output-schema", value: true},
	{long: "--json", aliases: []string{"--experimental-json"}},
	{long: "--output-last-message", aliases: []string{"-o"}, value: true},
	{long: "--help", aliases: []string{"-h"}},
}

// codexExecOpts are the options of `codex exec` 0.169.0 (codex exec --help).
var codexExecOpts = append([]codexOpt{
	{long: "--image", aliases: []string{"-i"}, value: true, multi: true, repeat: true},
	{long: "--oss"},
	{long: "--local-provider", value: true},
	{long: "--profile", aliases: []string{"-p"}, value: true},
	{long: "--sandbox", aliases: []string{"-s"}, value: true, choices: []string{"read-only", "workspace-write", "danger-full-access"}},
	{long: "--approve-for-me"},
	{long: "--cd", aliases: []string{"-C"}, value: true},
	{long: "--add-dir", value: true, repeat: true},
	{long: "--color", value: true, choices: []string{"always", "never", "auto"}},
	{long: "--version", aliases: []string{"-V"}},
}, codexBothOpts...)

// codexResumeOpts are the options of `codex exec resume` 0.169.0 (codex exec
// resume --help). -C/--cd, -s, -p, --add-dir, --oss, --color and the like
// exist only before `resume`.
var codexResumeOpts = append([]codexOpt{
	{long: "--last"},
	{long: "--all"},
	{long: "--image", aliases: []string{"-i"}, value: true, repeat: true},
}, codexBothOpts...)

// CodexArgv is a codex command line as codex 0.169.0's clap parser sees it.
type CodexArgv struct {
	// Exec holds the options given before any subcommand, by canonical long
	// name ("--model", "--config", ...); booleans have "" values.
	Exec map[string][]string
	// Prompt is exec's positional PROMPT ("-" means stdin), if given.
	Prompt    string
	HasPrompt bool
	// Resume reports the `resume` subcommand; ResumeOpts, SessionID and
	// ResumePrompt are its options and positionals.
	Resume       bool
	ResumeOpts   map[string][]string
	SessionID    string
	ResumePrompt string
	// Fork reports the `fork` subcommand (exec fork SESSION_ID [PROMPT]),
	// read like resume's: its options are ResumeOpts, its positionals
	// SessionID and ResumePrompt.
	Fork bool
}

// ParseCodexArgs parses argv (without argv[0]) the way codex 0.169.0 does
// for `codex exec`, including the split between options that must come
// before `resume` and those `resume` accepts itself. The error text follows
// clap's wording; the real CLI exits 2 on it.
func ParseCodexArgs(args []string) (*CodexArgv, error) {
	a, _, err := parseCodex(args)
	return a, err
}

// parseCodex implements ParseCodexArgs and also returns the generic form:
// Values by canonical long name (both levels), every positional word
// ("exec", "resume", SESSION_ID, PROMPT) and the options in order.
//
// clap's rules, as codex 0.169.0 shows them: an option's value is the rest
// of its argument (--model=M, -mM, -m=M) or else the next argument, which
// must not start with "-" unless it is "-" (`--model -x` fails with
// "unexpected argument '-x' found"); short booleans cluster (-hV); "--"
// makes every later argument positional.
func parseCodex(args []string) (*CodexArgv, *ParsedArgs, error) {
	p := &ParsedArgs{Values: map[string][]string{}}
	if len(args) == 0 || args[0] != "exec" {
		return nil, nil, fmt.Errorf("fakecli(codex): only `codex exec` is supported (the interactive TUI is not)")
	}
	p.Positional = append(p.Positional, "exec")
	a := &CodexArgv{Exec: map[string][]string{}}
	level, opts, vals := "exec", codexExecOpts, a.Exec
	var pos []string // positionals of the current level
	usage := "Usage: codex exec [OPTIONS] [PROMPT]"
	unexpected := func(s string) error {
		return fmt.Errorf("error: unexpected argument '%s' found\n\n%s", s, usage)
	}
	unknown := func(name string) error {
		return fmt.Errorf("error: unexpected argument '%s' found\n\n  tip: to pass '%s' as a value, use '-- %s'\n\n%s", name, name, name, usage)
	}
	dashdash := false
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if !dashdash && arg == "--" {
			dashdash = true
			continue
		}
		if dashdash || arg == "-" || !strings.HasPrefix(arg, "-") {
			// A positional. At the exec level a word that names a
			// subcommand switches levels (unless after "--"); clap even
			// accepts it after a PROMPT (`exec - resume ID -`).
			p.Positional = append(p.Positional, arg)
			if level == "exec" && !dashdash && (arg == "resume" || arg == "fork") {
				level, opts, vals = "resume", codexResumeOpts, map[string][]string{}
				a.ResumeOpts = vals
				usage = "Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]"
				if arg == "fork" {
					a.Fork = true
					usage = "Usage: codex exec fork [OPTIONS] <SESSION_ID> [PROMPT]"
				} else {
					a.Resume = true
				}
				pos = nil
				continue
			}
			if level == "exec" && !dashdash && (arg == "review" || arg == "help") {
				return nil, nil, fmt.Errorf("fakecli(codex): subcommand %q is not supported", arg)
			}
			pos = append(pos, arg)
			max := 1
			if level == "resume" {
				max = 2
			}
			if len(pos) > max {
				return nil, nil, unexpected(arg)
			}
			if level == "exec" {
				a.Prompt, a.HasPrompt = arg, true
			} else if len(pos) == 1 {
				a.SessionID = arg
			} else {
				a.ResumePrompt = arg
			}
			continue
		}
		// One option, or a cluster of short ones.
		type occurrence struct {
			o      *codexOpt
			val    string
			hasVal bool
		}
		var occ []occurrence
		if strings.HasPrefix(arg, "--") {
			name, val, hasVal := strings.Cut(arg, "=")
			o := findCodexOpt(opts, name)
			if o == nil {
				return nil, nil, unknown(name)
			}
			occ = append(occ, occurrence{o, val, hasVal})
		} else {
			for j := 1; j < len(arg); j++ {
				name := "-" + arg[j:j+1]
				o := findCodexOpt(opts, name)
				if o == nil {
					return nil, nil, unknown(name)
				}
				if o.value && j+1 < len(arg) {
					occ = append(occ, occurrence{o, strings.TrimPrefix(arg[j+1:], "="), true})
					break
				}
				occ = append(occ, occurrence{o, "", false})
			}
		}
		for _, oc := range occ {
			o, val, hasVal := oc.o, oc.val, oc.hasVal
			if !o.value {
				if hasVal {
					return nil, nil, fmt.Errorf("error: unexpected value '%s' for '%s' found; no more were expected", val, o.long)
				}
				if vals[o.long] != nil && !o.repeat {
					return nil, nil, fmt.Errorf("error: the argument '%s' cannot be used multiple times\n\n%s", o.long, usage)
				}
				vals[o.long] = append(vals[o.long], "")
				p.add(o.long, "", i)
				continue
			}
			if vals[o.long] != nil && !o.repeat {
				return nil, nil, fmt.Errorf("error: the argument '%s <VALUE>' cannot be used multiple times\n\n%s", o.long, usage)
			}
			at := i
			var got []string
			if hasVal {
				got = append(got, val)
			} else {
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("error: a value is required for '%s <VALUE>' but none was supplied", o.long)
				}
				if next := args[i+1]; strings.HasPrefix(next, "-") && next != "-" {
					if next == "--" || findCodexOpt(opts, strings.SplitN(next, "=", 2)[0]) != nil {
						return nil, nil, fmt.Errorf("error: a value is required for '%s <VALUE>' but none was supplied", o.long)
					}
					return nil, nil, unknown(next)
				}
				i++
				got = append(got, args[i])
			}
			if o.multi && !hasVal {
				for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					got = append(got, args[i])
				}
			}
			for _, v := range got {
				if o.choices != nil && !slices.Contains(o.choices, v) {
					return nil, nil, fmt.Errorf("error: invalid value '%s' for '%s <VALUE>'\n  [possible values: %s]", v, o.long, strings.Join(o.choices, ", "))
				}
				if o.long == "--profile" && !codexProfileName(v) {
					return nil, nil, fmt.Errorf("error: invalid value '%s' for '--profile <CONFIG_PROFILE_V2>': invalid --profile value `%s`; pass a plain name such as `work`", v, v)
				}
				p.add(o.long, v, at)
			}
			vals[o.long] = append(vals[o.long], got...)
		}
	}
	return a, p, nil
}

// codexProfileName reports whether codex 0.169.0 takes s as a --profile
// name: letters, digits, "_" and "-" (real runs: "a_b", "a-b" pass; "a.b",
// ".x", "x/y", "a b" and "" are refused with exit 2). A name with no
// $CODEX_HOME/<name>.config.toml is not an error.
func codexProfileName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func findCodexOpt(opts []codexOpt, name string) *codexOpt {
	for i := range opts {
		if opts[i].long == name || slices.Contains(opts[i].aliases, name) {
			return &opts[i]
		}
	}
	return nil
}

// codexFlagNames returns every spelling of the options of both levels, split
// into value-less, single-value and multi-value lists, for the generic
// Flavor parser (which does not know levels; Validate re-parses faithfully).
func codexFlagNames() (bools, values, multi []string) {
	seen := map[string]bool{}
	for _, list := range [][]codexOpt{codexExecOpts, codexResumeOpts} {
		for _, o := range list {
			for _, n := range append([]string{o.long}, o.aliases...) {
				if seen[n] {
					continue
				}
				seen[n] = true
				switch {
				case !o.value:
					bools = append(bools, n)
				case o.multi:
					multi = append(multi, n)
				default:
					values = append(values, n)
				}
			}
		}
	}
	return bools, values, multi
}

func init() {
	// OpenAI Codex CLI 0.169.0 (clap): see wire-formats §3.1. Usage errors
	// exit 2. The parser is parseCodex: options bound to their level, no
	// repeated single-value options, value choices, at most one PROMPT
	// (exec) or SESSION_ID and PROMPT (resume).
	bools, values, multi := codexFlagNames()
	Flavors["codex"] = &Flavor{
		Style:       Clap,
		Bool:        bools,
		Value:       values,
		Variadic:    multi,
		Parser:      func(args []string) (*ParsedArgs, error) { _, p, err := parseCodex(args); return p, err },
		Subcommands: []string{"exec", "resume", "fork"},
		FileFlags:   []string{"--output-schema"},
		UsageExit:   2,
		// `codex app-server`: everything else travels in the protocol.
		Live: func(args []string) string {
			if len(args) != 1 || args[0] != "app-server" {
				return fmt.Sprintf("fakecli(codex): a live session is `codex app-server`, not %q", args)
			}
			return ""
		},
	}
}
