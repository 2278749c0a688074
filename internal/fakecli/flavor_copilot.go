package fakecli

import (
	"fmt"
	"slices"
	"strings"
)

// copilotOpt is one option of GitHub Copilot CLI 1.0.102 (clap).
type copilotOpt struct {
	long     string
	aliases  []string
	value    bool     // takes a value
	optional bool     // the value may be left out ([<value>])
	list     bool     // takes any number of values ([<values>...]), split at commas
	choices  []string // allowed values, if restricted
}

// copilotOpts are the options of `copilot --help` 1.0.102 that a run can
// meet (the hidden ones agentcli uses too: --acp is listed).
var copilotOpts = []copilotOpt{
	{long: "--version", aliases: []string{"-v"}},
	{long: "--interactive", aliases: []string{"-i"}, value: true},
	{long: "--fleet"},
	{long: "--prompt", aliases: []string{"-p"}, value: true},
	{long: "--trust-folder"},
	{long: "--silent", aliases: []string{"-s"}},
	{long: "--disable-client-telemetry"},
	{long: "--enable-memory"},
	{long: "--model", value: true},
	{long: "--reasoning-effort", value: true, choices: []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}},
	{long: "--context", value: true, choices: []string{"default", "long_context"}},
	{long: "--auto-tier", value: true},
	{long: "--agent", value: true},
	{long: "--resume", aliases: []string{"-r"}, value: true, optional: true},
	{long: "--continue"},
	{long: "--name", aliases: []string{"-n"}, value: true},
	{long: "--session-id", value: true},
	{long: "--connect", value: true, optional: true},
	{long: "--allow-all-tools"},
	{long: "--allow-all-paths"},
	{long: "--disallow-temp-dir"},
	{long: "--banner"},
	{long: "--screen-reader"},
	{long: "--plain-diff"},
	{long: "-C", value: true},
	{long: "--log-dir", value: true},
	{long: "--log-level", value: true, choices: []string{"none", "error", "warning", "info", "debug", "all", "default"}},
	{long: "--stream", value: true, choices: []string{"on", "off"}},
	{long: "--output-format", value: true, choices: []string{"text", "json"}},
	{long: "--share", value: true, optional: true},
	{long: "--share-gist"},
	{long: "--add-dir", value: true},
	{long: "--attachment", value: true},
	{long: "--disable-mcp-server", value: true},
	{long: "--disable-builtin-mcps"},
	{long: "--additional-mcp-config", value: true},
	{long: "--allow-tool", value: true, list: true},
	{long: "--deny-tool", value: true, list: true},
	{long: "--available-tools", value: true, list: true},
	{long: "--excluded-tools", value: true, list: true},
	{long: "--secret-env-vars", value: true, list: true},
	{long: "--allow-url", value: true, list: true},
	{long: "--deny-url", value: true, list: true},
	{long: "--allow-all-urls"},
	{long: "--allow-all"},
	{long: "--yolo"},
	{long: "--max-autopilot-continues", value: true},
	{long: "--mode", value: true, choices: []string{"interactive", "plan", "autopilot"}},
	{long: "--autopilot"},
	{long: "--plan"},
	{long: "--experimental"},
	{long: "--acp"},
	{long: "--max-ai-credits", value: true},
	{long: "--usage-output-file", value: true},
	{long: "--no-custom-instructions"},
	{long: "--no-auto-update"},
	{long: "--no-ask-user"},
	{long: "--no-color"},
	{long: "--help", aliases: []string{"-h"}},
}

// ParseCopilotArgs parses argv (without argv[0]) the way copilot 1.0.102
// does (clap, checked against the binary by copilot's flavor test):
//
//   - an option's value is the rest of its argument (--model=M, -pTEXT,
//     -p=TEXT) or else the next argument, which must not start with "-"
//     (`--model -x` fails);
//   - an optional value ([<value>], --resume) is taken only from an
//     argument that does not start with "-";
//   - a list ([<values>...]) takes every following argument up to one
//     that starts with "-", and every value is split at commas;
//   - a value given again replaces the earlier one;
//   - an unknown option or a positional argument fails (clap's
//     "unexpected argument" and "unrecognized subcommand"; with -p, copilot
//     words them "Invalid command format"), as does a value outside an
//     option's choices; the real CLI exits 1.
//
// Values are recorded by long name; "@FILE" values of
// --additional-mcp-config are recorded again, as the file's path, under
// "@--additional-mcp-config" (see the flavor's FileFlags).
func ParseCopilotArgs(args []string) (*ParsedArgs, error) {
	p := &ParsedArgs{Values: map[string][]string{}}
	usage := "\n\nUsage: copilot [OPTIONS] [COMMAND]\n\nFor more information, try '--help'."
	unexpected := func(a string) error {
		if !strings.HasPrefix(a, "-") {
			return fmt.Errorf("error: unrecognized subcommand '%s'%s", a, usage)
		}
		return fmt.Errorf("error: unexpected argument '%s' found%s", a, usage)
	}
	find := func(name string) *copilotOpt {
		for i := range copilotOpts {
			if copilotOpts[i].long == name || slices.Contains(copilotOpts[i].aliases, name) {
				return &copilotOpts[i]
			}
		}
		return nil
	}
	set := func(o *copilotOpt, vals []string, arg int) error {
		for _, v := range vals {
			if o.choices != nil && !slices.Contains(o.choices, v) {
				return fmt.Errorf("error: invalid value '%s' for '%s <value>'\n  [possible values: %s]", v, o.long, strings.Join(o.choices, ", "))
			}
		}
		if !o.list {
			// The last occurrence wins.
			delete(p.Values, o.long)
		}
		for _, v := range vals {
			p.add(o.long, v, arg)
			if o.long == "--additional-mcp-config" && strings.HasPrefix(v, "@") {
				p.Values["@"+o.long] = append(p.Values["@"+o.long], v[1:])
			}
		}
		return nil
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || !strings.HasPrefix(arg, "-") || arg == "-" {
			return nil, unexpected(arg)
		}
		var o *copilotOpt
		val, hasVal := "", false
		if strings.HasPrefix(arg, "--") {
			name, v, ok := strings.Cut(arg, "=")
			o, val, hasVal = find(name), v, ok
		} else {
			o = find(arg[:2])
			if len(arg) > 2 {
				val, hasVal = strings.TrimPrefix(arg[2:], "="), true
			}
		}
		if o == nil {
			return nil, unexpected(arg)
		}
		at := i
		if !o.value {
			if hasVal {
				return nil, fmt.Errorf("error: unexpected value '%s' for '%s' found; no more were expected", val, o.long)
			}
			p.add(o.long, "", at)
			continue
		}
		var vals []string
		switch {
		case hasVal:
			vals = []string{val}
		case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			i++
			vals = []string{args[i]}
		case o.optional || o.list:
			vals = []string{""}
		case i+1 < len(args):
			return nil, unexpected(args[i+1])
		default:
			return nil, fmt.Errorf("error: a value is required for '%s <value>' but none was supplied%s", o.long, usage)
		}
		if o.list {
			if !hasVal {
				for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					vals = append(vals, args[i])
				}
			}
			var split []string
			for _, v := range vals {
				if v != "" {
					split = append(split, strings.Split(v, ",")...)
				}
			}
			vals = split
		}
		if err := set(o, vals, at); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func init() {
	// GitHub Copilot CLI 1.0.102: its argv is parsed by clap in the
	// binary; usage errors exit 1. A run reads the prompt from stdin (no
	// -p); a live session is `copilot --acp` with the same flags.
	Flavors["copilot"] = &Flavor{
		Style:     Clap,
		Parser:    ParseCopilotArgs,
		FileFlags: []string{"@--additional-mcp-config"},
		UsageExit: 1,
		Validate: func(v map[string][]string, pos []string) string {
			if v["--acp"] == nil && v["--output-format"] == nil {
				return "fakecli(copilot): only `copilot --output-format=json` and `copilot --acp` are supported"
			}
			if v["--prompt"] != nil {
				return "fakecli(copilot): agentcli passes the prompt on stdin, never with -p"
			}
			return ""
		},
	}
}
