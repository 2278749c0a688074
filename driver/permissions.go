// Package permit holds the permission rules every agentcli backend follows,
// live or scripted: which modes exist, and how a caller's decision becomes
// an answer the CLI offers. It is pure (no processes), so the test kit can
// use it on every platform.
package driver

import (
	"encoding/json"

	"github.com/agentcli/agentcli"
)

// DeniedMessage is the refusal message sent with a default or
// mode-imposed decision, where the CLI passes a message on to the model.
const DeniedMessage = "The user denied permission to use this tool."

// PermissionModes lists every permission mode agentcli knows.
var PermissionModes = []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan}

// CheckPermissionMode fails with an *agentcli.UnsupportedError when mode is not
// among supported (nil means every known mode) or is unknown.
func CheckPermissionMode(backend string, mode agentcli.PermissionMode, supported []agentcli.PermissionMode) error {
	switch mode {
	case "", agentcli.PermissionBypass:
		return nil
	case agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan:
	default:
		return &agentcli.UnsupportedError{Backend: backend, Feature: "permission mode " + string(mode), Reason: "unknown mode"}
	}
	if supported == nil {
		return nil
	}
	for _, m := range supported {
		if m == mode {
			return nil
		}
	}
	return &agentcli.UnsupportedError{Backend: backend, Feature: "permission mode " + string(mode)}
}

// UnusableInputMessage is the refusal message of an allow whose edited
// Input is not a JSON object: the edit cannot be applied, and running the
// original call instead is not what was approved.
const UnusableInputMessage = "The tool call was refused: it was approved with edited input that is not a JSON object."

// NormalizeDecision makes d answerable: an empty Kind is RejectOnce; an allow with
// Input is refused when editOK is false, or when Input is not a JSON
// object (an edit that cannot be applied); and when options are given, the
// kind becomes one of them (allow_always falls back to allow_once,
// reject_always to reject_once and back; an allow the CLI does not offer at
// all becomes a refusal).
func NormalizeDecision(options []agentcli.PermissionOption, d agentcli.PermissionDecision, editOK bool) agentcli.PermissionDecision {
	switch d.Kind {
	case agentcli.AllowOnce, agentcli.AllowAlways, agentcli.RejectOnce, agentcli.RejectAlways:
	default:
		d.Kind = agentcli.RejectOnce
	}
	if d.Allowed() && d.Input != nil && !editOK {
		return NormalizeDecision(options, agentcli.PermissionDecision{
			Kind:    agentcli.RejectOnce,
			Message: "The tool call was refused: it was approved with edited input, which this CLI cannot apply.",
		}, editOK)
	}
	if d.Allowed() && d.Input != nil && !isObject(d.Input) {
		return NormalizeDecision(options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: UnusableInputMessage}, editOK)
	}
	if !d.Allowed() {
		d.Input = nil
		if d.Message == "" {
			d.Message = DeniedMessage
		}
	}
	if len(options) == 0 {
		return d
	}
	offered := func(k agentcli.PermissionOptionKind) bool {
		for _, o := range options {
			if o.Kind == k {
				return true
			}
		}
		return false
	}
	var chain []agentcli.PermissionOptionKind
	switch d.Kind {
	case agentcli.AllowAlways:
		chain = []agentcli.PermissionOptionKind{agentcli.AllowAlways, agentcli.AllowOnce}
	case agentcli.AllowOnce:
		chain = []agentcli.PermissionOptionKind{agentcli.AllowOnce}
	case agentcli.RejectAlways:
		chain = []agentcli.PermissionOptionKind{agentcli.RejectAlways, agentcli.RejectOnce}
	default:
		chain = []agentcli.PermissionOptionKind{agentcli.RejectOnce, agentcli.RejectAlways}
	}
	for _, k := range chain {
		if offered(k) {
			d.Kind = k
			return d
		}
	}
	if d.Allowed() {
		return NormalizeDecision(options, agentcli.PermissionDecision{Kind: agentcli.RejectOnce, Message: d.Message}, editOK)
	}
	return d // no refusal offered: the protocol answers "cancelled"
}

// OptionOf returns the option of kind k, or false.
func OptionOf(options []agentcli.PermissionOption, k agentcli.PermissionOptionKind) (agentcli.PermissionOption, bool) {
	for _, o := range options {
		if o.Kind == k {
			return o, true
		}
	}
	return agentcli.PermissionOption{}, false
}

// isObject reports whether b is one JSON object.
func isObject(b []byte) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(b, &obj) == nil && obj != nil
}
