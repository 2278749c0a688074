package driver

import (
	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/tools/clis"
)

// complete returns a copy of spec with what the kit knows of it filled
// in, for New: the Binary, Package and Tested version that tools/clis
// pins for spec.Name, where spec leaves them empty, and the capabilities
// that follow from the Spec's functions rather than from its CLI
// (Caps.Sessions from StartSession; Caps.ContinueSession, which
// resolveContinue serves through ListSessions and a resume). spec itself
// is left alone.
func complete(spec *Spec) *Spec {
	s := *spec
	if pinned, ok := clis.Lookup(s.Name); ok && (s.Binary == "" || s.Binary == pinned.Binary) {
		s.Binary = pinned.Binary
		if s.Package == "" {
			s.Package = pinned.Package
		}
		if s.Tested == "" {
			s.Tested = pinned.Version
		}
	}
	s.Caps.Sessions = s.StartSession != nil
	list := s.ListSessions != nil && s.Caps.Resume
	s.Caps.ContinueSession = agentcli.SessionModes{OneShot: list, Live: list && s.Caps.Sessions}
	return &s
}
