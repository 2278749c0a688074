package fakecli

import (
	"fmt"
	"slices"
)

// Factory Droid 0.225.2: `droid exec` (commander.js) with the options of
// `droid exec --help`. Checked against the binary (droid's
// flavor_real_test.go): a value option takes the next argument whatever
// it looks like (`--model -x` asks for model "-x"), --opt=value exactly
// that value, -oVALUE and -o=VALUE the rest of the argument ("=VALUE"); a
// boolean given a value (--use-spec=1) is an unknown option; excess
// positional words are accepted (the first is the prompt). Usage errors
// (unknown option, missing value, an --output-format, --auto or
// --reasoning-effort outside its choices) exit 1.
var droidExec = &Flavor{
	Style: Commander,
	Bool: []string{"--skip-permissions-unsafe", "--disable-builtin-skills", "--use-spec", "--mission",
		"--list-tools", "-h", "--help"},
	Value: []string{"-o", "--output-format", "--input-format", "-f", "--file", "--auto", "-s", "--session-id",
		"--fork", "-m", "--model", "-r", "--reasoning-effort", "--spec-model", "--spec-reasoning-effort",
		"--only-tools", "--add-tools", "--remove-tools", "--cwd", "--settings", "--worktree-dir", "--tag",
		"--log-group-id", "--worker-model", "--worker-reasoning-effort", "--validator-model",
		"--validator-reasoning-effort", "--append-system-prompt", "--append-system-prompt-file"},
	Optional:  []string{"-w", "--worktree"},
	FileFlags: []string{"--append-system-prompt-file"},
	UsageExit: 1,
}

// droidLong maps droid exec's short options to their long names, under
// which ParseDroidArgs records them.
var droidLong = map[string]string{"-o": "--output-format", "-f": "--file", "-s": "--session-id",
	"-m": "--model", "-r": "--reasoning-effort", "-w": "--worktree", "-h": "--help"}

// ParseDroidArgs parses argv (without argv[0]) as droid 0.225.2 does: the
// first argument must be the exec subcommand (the only one the fake
// plays), the rest is exec's commander grammar (droidExec). Options are
// recorded by long name; Positional holds the words after exec's options
// (a prompt), not "exec"; Option.Arg indexes args.
func ParseDroidArgs(args []string) (*ParsedArgs, error) {
	if len(args) == 0 || args[0] != "exec" {
		return nil, fmt.Errorf("fakecli(droid): only `droid exec` is supported, not %q", args)
	}
	f := *droidExec
	f.Parser = nil
	p, err := f.parseCommander(args[1:])
	if err != nil {
		return nil, err
	}
	out := &ParsedArgs{Values: map[string][]string{}, Positional: p.Positional}
	for _, o := range p.Options {
		name := o.Name
		if l, ok := droidLong[name]; ok {
			name = l
		}
		out.add(name, o.Value, o.Arg+1)
	}
	return out, nil
}

func validateDroid(v map[string][]string, pos []string) string {
	choice := func(name, msg string, ok ...string) string {
		for _, x := range v[name] {
			if !slices.Contains(ok, x) {
				return msg
			}
		}
		return ""
	}
	for _, msg := range []string{
		choice("--output-format", "Invalid --output-format value", "text", "json", "stream-json", "stream-jsonrpc", "acp", "acp-daemon"),
		choice("--auto", "Invalid --auto value. Allowed values: low, medium, high.", "low", "medium", "high"),
		choice("--reasoning-effort", "Unsupported reasoning effort provided",
			"none", "dynamic", "off", "minimal", "low", "medium", "high", "xhigh", "max"),
	} {
		if msg != "" {
			return msg
		}
	}
	if len(pos) > 0 {
		return "fakecli(droid): a positional prompt is not supported (agentcli passes it on stdin)"
	}
	out := v["--output-format"]
	if len(out) == 0 || out[len(out)-1] != "stream-json" {
		return "fakecli(droid): only `droid exec --output-format stream-json` and ACP live sessions are supported"
	}
	if v["--input-format"] != nil || v["--file"] != nil || v["--list-tools"] != nil || v["--help"] != nil ||
		v["--mission"] != nil || v["--worktree"] != nil {
		return "fakecli(droid): only a one-shot run with the prompt on stdin is supported"
	}
	return ""
}

func init() {
	droidExec.Parser = ParseDroidArgs
	droidExec.Validate = validateDroid
	// A live session is `droid exec --output-format=acp-daemon`; the
	// rest travels in ACP.
	droidExec.Live = func(args []string) string {
		p, err := ParseDroidArgs(args)
		if err != nil {
			return err.Error()
		}
		if out := p.Values["--output-format"]; len(out) == 0 || out[len(out)-1] != "acp-daemon" {
			return fmt.Sprintf("fakecli(droid): a live session is `droid exec --output-format=acp-daemon`, not %q", args)
		}
		if len(p.Positional) > 0 {
			return "fakecli(droid): a positional prompt in an ACP session"
		}
		return ""
	}
	Flavors["droid"] = droidExec
}
