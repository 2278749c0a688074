package opencode

// Permission modes and tool lists: opencode's permission config, set in
// OPENCODE_PERMISSION (JSON), which opencode 1.18.33 merges over every
// other config layer. Each key is a tool's permission ("bash", "edit",
// "read", ..., "NAME_TOOL" or "NAME_*" for MCP tools, "*" for every tool)
// and each value "allow", "ask" or "deny", or, for bash, an object of
// command patterns and actions; of the rules that match a call, the last
// one wins. "deny" takes a tool away from the model altogether ("Model
// tried to call unavailable tool"); in a one-shot run without --auto a
// call that would ask is refused ("auto-rejecting") and the run ends.
// Checked by real runs.
//
//	the zero value, deny   bash, edit, webfetch, websearch, codesearch,
//	                       external_directory and the MCP servers' tools "deny"
//	ask                    the same "ask" (a live session; the host decides)
//	plan                   the plan agent, and bash, edit "deny"
//	bypass                 nothing (--auto approves what the config does not deny)
//
// An allow list puts "*": "deny" first, then each rule's permission
// "allow" (approved in advance, in every mode): Bash is bash, Edit and
// Write are edit (which covers write, patch and multiedit), Read is read,
// and so on; an MCP rule is "NAME_TOOL" or "NAME_*". A shell rule with a
// pattern in Claude Code's prefix syntax ("Bash(git *)", "Bash(git:*)")
// allows "git" and "git *" and refuses every other command (asks about it
// under PermissionAsk). A disallow list puts each rule's permission (or
// its command patterns) "deny", last, so it wins.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// permKey returns opencode's permission key of a raw tool name.
func permKey(raw string) string {
	switch raw {
	case "write", "multiedit", "patch", "apply_patch":
		return "edit"
	}
	return raw
}

// permValue is one value of the permission config: an action, or
// command patterns and their actions in order.
type permValue struct {
	action   string
	patterns [][2]string
}

func (v permValue) MarshalJSON() ([]byte, error) {
	if v.patterns == nil {
		return json.Marshal(v.action)
	}
	return orderedJSON(v.patterns)
}

// permConfig is an OPENCODE_PERMISSION value with its keys in order.
type permConfig struct {
	keys []string
	vals map[string]permValue
}

func (c *permConfig) set(key string, v permValue) {
	if c.vals == nil {
		c.vals = map[string]permValue{}
	}
	if _, ok := c.vals[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.vals[key] = v
}

// deny adds patterns (or the whole tool, when none) to key as "deny",
// after what key holds.
func (c *permConfig) deny(key string, patterns []string) {
	if len(patterns) == 0 {
		c.set(key, permValue{action: "deny"})
		return
	}
	v, ok := c.vals[key]
	if !ok {
		v = permValue{action: ""}
	}
	if v.patterns == nil {
		if v.action != "" {
			v.patterns = [][2]string{{"*", v.action}}
		} else {
			v.patterns = [][2]string{}
		}
	}
	for _, p := range patterns {
		v.patterns = append(v.patterns, [2]string{p, "deny"})
	}
	c.set(key, v)
}

// commandPatterns returns opencode's bash patterns of a shell rule's
// pattern in Claude Code's prefix syntax: the prefix alone and followed
// by anything.
func commandPatterns(r driver.Rule) ([]string, bool) {
	if !r.HasPattern {
		return nil, true
	}
	if !slices.Contains(tools.Resolve(r.Name), "bash") {
		return nil, false
	}
	p, ok := strings.CutSuffix(r.Pattern, " *")
	if !ok {
		p, ok = strings.CutSuffix(r.Pattern, ":*")
	}
	p = strings.TrimSpace(p)
	if !ok || p == "" || strings.Contains(p, "*") {
		return nil, false
	}
	return []string{p, p + " *"}, true
}

// ruleKeys returns the permission keys a rule names, and its command
// patterns; ok is false for a pattern opencode cannot hold.
func ruleKeys(r driver.Rule) (keys, patterns []string, ok bool) {
	if r.IsMCP() {
		tool := r.MCPTool
		if tool == "" {
			tool = "*"
		}
		return []string{r.MCPServer + "_" + tool}, nil, true
	}
	if patterns, ok = commandPatterns(r); !ok {
		return nil, nil, false
	}
	raws := tools.Resolve(r.Name)
	if len(raws) == 0 {
		raws = []string{strings.ToLower(r.Name)}
	}
	for _, raw := range raws {
		if k := permKey(raw); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, patterns, true
}

// permissionFor returns the OPENCODE_PERMISSION entries of req's mode and
// tool lists, or nil when it needs none. The error is the
// *agentcli.UnsupportedError of a rule opencode cannot hold.
func permissionFor(req *agentcli.Request) (*permConfig, error) {
	var c permConfig
	mode := driver.Mode(req)
	hooked := driver.AsksAll(req)
	if hooked {
		// PreToolUse sees what opencode asks about: everything; the
		// session answers after the hook, from the lists and the mode
		// (live.Host.Ask).
		c.set("*", permValue{action: "ask"})
	}
	if len(req.AllowedTools) > 0 {
		fallback := "deny"
		if mode == agentcli.PermissionAsk {
			fallback = "ask"
		}
		c.set("*", permValue{action: "deny"})
		for _, t := range req.AllowedTools {
			r, err := driver.ParseRule(t)
			if err != nil {
				continue // validate refuses it
			}
			if err := c.allow(r, fallback); err != nil {
				return nil, err
			}
		}
		if mode == agentcli.PermissionPlan {
			c.deny("bash", nil)
			c.deny("edit", nil)
		}
	} else if o := modeOverlay(mode); o != nil {
		v := o["bash"]
		for _, k := range slices.Sorted(maps.Keys(o)) {
			c.set(k, permValue{action: o[k]})
		}
		if mode != agentcli.PermissionPlan {
			for _, s := range req.MCPServers {
				c.set(s.Name+"_*", permValue{action: v})
			}
		}
	}
	for _, s := range req.MCPServers {
		if driver.IsHostServer(req, s.Name) {
			// agentcli's own server decides its calls itself
			// (driver.HostTools), whatever the mode and the lists.
			c.set(s.Name+"_*", permValue{action: "allow"})
		}
	}
	for _, t := range req.DisallowedTools {
		r, err := driver.ParseRule(t)
		if err != nil {
			continue
		}
		keys, patterns, ok := ruleKeys(r)
		if !ok {
			return nil, unsupportedRule(r)
		}
		for _, k := range keys {
			c.deny(k, patterns)
		}
	}
	if hooked {
		c.askAllowed(driver.IsHostServer(req, agentcli.HostServerName))
	}
	if len(c.keys) == 0 {
		return nil, nil
	}
	return &c, nil
}

// allow adds an allowed-tools rule to c; a tool whose patterns are listed
// gets fallback for the commands none of them matches.
func (c *permConfig) allow(r driver.Rule, fallback string) error {
	keys, patterns, ok := ruleKeys(r)
	if !ok {
		return unsupportedRule(r)
	}
	for _, k := range keys {
		if patterns == nil {
			c.set(k, permValue{action: "allow"})
			continue
		}
		v, ok := c.vals[k]
		if ok && v.patterns == nil && v.action == "allow" {
			continue // the whole tool is allowed already
		}
		if !ok || v.patterns == nil {
			v = permValue{patterns: [][2]string{{"*", fallback}}}
		}
		for _, p := range patterns {
			v.patterns = append(v.patterns, [2]string{p, "allow"})
		}
		c.set(k, v)
	}
	return nil
}

// askAllowed turns what c allows into asks, for a run with hooks: what the
// lists approve in advance is still asked about (the hook comes first);
// what they refuse stays refused. agentcli's own server (host) calls
// PreToolUse itself.
func (c *permConfig) askAllowed(host bool) {
	for k, v := range c.vals {
		if host && k == agentcli.HostServerName+"_*" {
			continue
		}
		if v.action == "allow" {
			v.action = "ask"
		}
		for i, p := range v.patterns {
			if p[1] == "allow" {
				v.patterns[i][1] = "ask"
			}
		}
		c.vals[k] = v
	}
}

func unsupportedRule(r driver.Rule) error {
	return &agentcli.UnsupportedError{Backend: Name, Feature: "allowed/disallowed tools",
		Reason: fmt.Sprintf(`%q: opencode takes patterns only for the shell, as command prefixes ("Bash(git *)")`, r.Text)}
}

// checkTools fails with an *agentcli.UnsupportedError when opencode
// cannot hold req's tool lists.
func checkTools(req *agentcli.Request) error {
	_, err := permissionFor(req)
	return err
}

// permissionEnv returns the OPENCODE_PERMISSION value of req put over
// prev (the caller's value, if any: a JSON object, or a JSON string such
// as "allow" that applies to every tool), or "" when req needs none. The
// caller's keys come first; a key of req's replaces the caller's value.
func permissionEnv(req *agentcli.Request, prev string) string {
	c, _ := permissionFor(req) // validate refused what opencode cannot hold
	if c == nil {
		return ""
	}
	var merged [][2]string // key, JSON value
	if prev != "" {
		var all string
		if json.Unmarshal([]byte(prev), &all) == nil {
			b, _ := json.Marshal(all)
			merged = append(merged, [2]string{"*", string(b)})
		} else {
			merged = append(merged, objectEntries(prev)...)
		}
	}
	for _, k := range c.keys {
		b, _ := json.Marshal(c.vals[k])
		merged = slices.DeleteFunc(merged, func(e [2]string) bool { return e[0] == k })
		merged = append(merged, [2]string{k, string(b)})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range merged {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e[0])
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(e[1])
	}
	b.WriteByte('}')
	return b.String()
}

// objectEntries returns the members of the JSON object s in order, each
// value as raw JSON, or nil when s is not a JSON object.
func objectEntries(s string) [][2]string {
	d := json.NewDecoder(strings.NewReader(s))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out [][2]string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil
		}
		out = append(out, [2]string{k, string(v)})
	}
	return out
}

// orderedJSON encodes pairs as a JSON object in their order.
func orderedJSON(pairs [][2]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p[0])
		v, _ := json.Marshal(p[1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
