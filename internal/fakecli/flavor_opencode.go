package fakecli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// opencodeRun is how `opencode run` 1.18.33 (yargs) parses its argv, from
// the yargs builder of the run command embedded in the binary, `opencode run
// --help` and runs of the real binary:
//
//   - an unknown option prints the help on stderr and exits 1 (no message);
//   - --format and --log-level only take their listed choices (exit 1);
//   - a value option given twice becomes an array, which breaks the run
//     (--format falls back to formatted text output, --dir crashes with
//     `The "paths[1]" property must be of type string`, --session is "not
//     found"), so the fake rejects it;
//   - --fork without --continue/--session: "--fork requires --continue or
//     --session", exit 1;
//   - string options have no nargs (Optional): `--session -x` leaves the
//     session empty and reads -x as options (an error here, -x being
//     unknown), so such a value must be written --session=-x;
//   - --dir naming a missing directory: "Failed to change directory to
//     DIR", exit 1.
//
// --yolo and --dangerously-skip-permissions are hidden aliases of --auto.
// The fake only plays scripts for `run --format json`.
var opencodeRun = &Flavor{
	Style: Yargs,
	Bool: []string{"-h", "--help", "-v", "--version", "--print-logs", "--pure",
		"-c", "--continue", "--fork", "--share", "--thinking", "-i", "--interactive",
		"--auto", "--yolo", "--dangerously-skip-permissions", "--mini", "--replay", "--demo"},
	Optional: []string{"--log-level", "--command", "-s", "--session", "-m", "--model", "--agent",
		"--format", "--title", "--attach", "-p", "--password", "-u", "--username", "--dir",
		"--port", "--variant", "--replay-limit"},
	Variadic: []string{"-f", "--file"},
	Aliases: [][]string{{"--help", "-h"}, {"--version", "-v"}, {"--continue", "-c"},
		{"--interactive", "-i"}, {"--session", "-s"}, {"--model", "-m"}, {"--password", "-p"},
		{"--username", "-u"}, {"--file", "-f"}},
	Subcommands: []string{"run"},
	UsageExit:   1,
}

// opencodeAliases maps short options to their long names, for the
// repeated-option check.
var opencodeAliases = map[string]string{
	"-s": "--session", "-m": "--model", "-p": "--password", "-u": "--username",
}

func init() {
	opencodeRun.Validate = func(v map[string][]string, pos []string) string {
		if msg := opencodeSyntax(v, pos); msg != "" {
			return msg
		}
		if d := v["--dir"]; len(d) == 1 {
			if fi, err := os.Stat(d[0]); err != nil || !fi.IsDir() {
				return "Error: Failed to change directory to " + d[0]
			}
		}
		return opencodeConfig()
	}
	// `opencode acp`: everything else travels in the protocol.
	opencodeRun.Live = func(args []string) string {
		if len(args) != 1 || args[0] != "acp" {
			return fmt.Sprintf("fakecli(opencode): a live session is `opencode acp`, not %q", args)
		}
		return ""
	}
	Flavors["opencode"] = opencodeRun
}

// ParseOpencodeArgs reports whether `opencode run` 1.18.33 would accept
// args (argv without the program name) as far as the fake checks syntax:
// known options, choices, no repeated value option, --fork only with a
// session, and `run --format json` (the only mode the fake plays). It does
// not look at the file system. A value option followed by an argument that
// starts with "-" is not an error in itself: yargs leaves the option empty
// and reads that argument as options.
func ParseOpencodeArgs(args []string) error {
	p, err := opencodeRun.Parse(args)
	if err != nil {
		return err
	}
	if msg := opencodeSyntax(p.Values, p.Positional); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

func opencodeSyntax(v map[string][]string, pos []string) string {
	if len(pos) == 0 || pos[0] != "run" {
		return "fakecli(opencode): only the run command is supported"
	}
	counts := map[string]int{}
	for name, vals := range v {
		if !slices.Contains(opencodeRun.Optional, name) {
			continue
		}
		if long, ok := opencodeAliases[name]; ok {
			name = long
		}
		counts[name] += len(vals)
		if counts[name] > 1 {
			return fmt.Sprintf("fakecli(opencode): option %s given more than once (yargs makes it an array)", name)
		}
	}
	last := func(names ...string) (string, bool) {
		for _, n := range names {
			if vals := v[n]; len(vals) > 0 {
				return vals[len(vals)-1], true
			}
		}
		return "", false
	}
	f, _ := last("--format")
	if f != "default" && f != "json" && f != "" {
		return "Invalid values:\n  Argument: format, Given: \"" + f + "\", Choices: \"default\", \"json\""
	}
	if f != "json" {
		return "fakecli(opencode): only --format json is supported"
	}
	if l, ok := last("--log-level"); ok && !slices.Contains([]string{"DEBUG", "INFO", "WARN", "ERROR"}, l) {
		return "Invalid values:\n  Argument: log-level, Given: \"" + l + "\""
	}
	if v["--fork"] != nil && v["-c"] == nil && v["--continue"] == nil && v["-s"] == nil && v["--session"] == nil {
		return "Error: --fork requires --continue or --session"
	}
	if v["-i"] != nil || v["--interactive"] != nil {
		return "fakecli(opencode): interactive mode is not supported"
	}
	return ""
}

// OpencodeConfig is what the fake found in the file named by
// OPENCODE_CONFIG, recorded by ReadOpencodeConfig.
type OpencodeConfig struct {
	Path   string          `json:"path"`
	Config json.RawMessage `json:"config"`
	// Instructions maps each path listed in the config's "instructions" to
	// the file's content, and InstructionModes to its permission bits.
	Instructions     map[string]string `json:"instructions"`
	InstructionModes map[string]uint32 `json:"instruction_modes"`
	ConfigMode       uint32            `json:"config_mode"`
}

const opencodeConfigRecord = "opencode-config.json"

// opencodeConfig checks the config file named by OPENCODE_CONFIG like
// opencode would read it (it must be a JSON object; listed instruction files
// are read) and records it next to the fake's Record. A missing file is
// skipped, as opencode does.
func opencodeConfig() string {
	path := os.Getenv("OPENCODE_CONFIG")
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var cfg struct {
		Instructions []string `json:"instructions"`
	}
	if !json.Valid(b) {
		return fmt.Sprintf("Error: Config file at %s is not valid JSON", path)
	}
	json.Unmarshal(b, &cfg) //nolint:errcheck // a wrong-typed field is skipped

	rec := OpencodeConfig{Path: path, Config: b, Instructions: map[string]string{}, InstructionModes: map[string]uint32{}}
	if fi, err := os.Stat(path); err == nil {
		rec.ConfigMode = uint32(fi.Mode().Perm())
	}
	for _, in := range cfg.Instructions {
		if c, err := os.ReadFile(in); err == nil {
			rec.Instructions[in] = string(c)
			if fi, err := os.Stat(in); err == nil {
				rec.InstructionModes[in] = uint32(fi.Mode().Perm())
			}
		}
	}
	if r := os.Getenv(EnvRecord); r != "" {
		out, _ := json.Marshal(rec)
		os.WriteFile(filepath.Join(filepath.Dir(r), opencodeConfigRecord), out, 0o644)
	}
	return ""
}

// ReadOpencodeConfig reads what the fake recorded in dir about the
// OPENCODE_CONFIG file; it fails if the run had none.
func ReadOpencodeConfig(dir string) (*OpencodeConfig, error) {
	b, err := os.ReadFile(filepath.Join(dir, opencodeConfigRecord))
	if err != nil {
		return nil, err
	}
	var c OpencodeConfig
	return &c, json.Unmarshal(b, &c)
}
