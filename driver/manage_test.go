package driver

import (
	"errors"
	"testing"

	"github.com/agentcli/agentcli"
)

func TestCheckManage(t *testing.T) {
	const id = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	all := agentcli.SessionModes{OneShot: true, Live: true}
	full := agentcli.Capabilities{ForkSession: all, ContinueSession: all, NewSessionID: all}
	oneShot := agentcli.Capabilities{ForkSession: agentcli.SessionModes{OneShot: true},
		ContinueSession: agentcli.SessionModes{OneShot: true}, NewSessionID: agentcli.SessionModes{OneShot: true}}
	for _, c := range []struct {
		name  string
		caps  agentcli.Capabilities
		live  bool
		req   agentcli.Request
		field string // a *RequestError naming it; "" for none
		unsup bool   // an *UnsupportedError
	}{
		{name: "plain", caps: full},
		{name: "resume", caps: agentcli.Capabilities{}, req: agentcli.Request{SessionID: "s"}},
		{name: "fork", caps: full, req: agentcli.Request{SessionID: "s", ForkSession: true}},
		{name: "continue", caps: full, req: agentcli.Request{Continue: true}},
		{name: "continue+fork", caps: full, req: agentcli.Request{Continue: true, ForkSession: true}},
		{name: "new id", caps: full, req: agentcli.Request{NewSessionID: id}},
		{name: "fork to new id", caps: full, req: agentcli.Request{SessionID: "s", ForkSession: true, NewSessionID: id}},
		{name: "continue+fork to new id", caps: full, req: agentcli.Request{Continue: true, ForkSession: true, NewSessionID: id}},
		{name: "continue+session", caps: full, req: agentcli.Request{Continue: true, SessionID: "s"}, field: "Continue"},
		{name: "fork alone", caps: full, req: agentcli.Request{ForkSession: true}, field: "ForkSession"},
		{name: "new id on resume", caps: full, req: agentcli.Request{SessionID: "s", NewSessionID: id}, field: "NewSessionID"},
		{name: "new id on continue", caps: full, req: agentcli.Request{Continue: true, NewSessionID: id}, field: "NewSessionID"},
		{name: "new id not a UUID", caps: full, req: agentcli.Request{NewSessionID: "--resume"}, field: "NewSessionID"},
		{name: "conflict before unsupported", caps: agentcli.Capabilities{}, req: agentcli.Request{ForkSession: true}, field: "ForkSession"},
		{name: "fork unsupported", caps: agentcli.Capabilities{}, req: agentcli.Request{SessionID: "s", ForkSession: true}, unsup: true},
		{name: "continue unsupported", caps: agentcli.Capabilities{}, req: agentcli.Request{Continue: true}, unsup: true},
		{name: "new id unsupported", caps: agentcli.Capabilities{}, req: agentcli.Request{NewSessionID: id}, unsup: true},
		{name: "one-shot only, one-shot", caps: oneShot, req: agentcli.Request{Continue: true}},
		{name: "one-shot only, live fork", caps: oneShot, live: true, req: agentcli.Request{SessionID: "s", ForkSession: true}, unsup: true},
		{name: "one-shot only, live continue", caps: oneShot, live: true, req: agentcli.Request{Continue: true}, unsup: true},
		{name: "one-shot only, live new id", caps: oneShot, live: true, req: agentcli.Request{NewSessionID: id}, unsup: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkManage("b", c.caps, &c.req, c.live)
			var re *agentcli.RequestError
			var ue *agentcli.UnsupportedError
			switch {
			case c.field != "":
				if !errors.As(err, &re) || re.Field != c.field {
					t.Errorf("err = %v; want a *RequestError naming %s", err, c.field)
				}
			case c.unsup:
				if !errors.As(err, &ue) {
					t.Errorf("err = %v; want an *UnsupportedError", err)
				}
			case err != nil:
				t.Errorf("err = %v; want nil", err)
			}
		})
	}
}

func TestNoSession(t *testing.T) {
	err := NoSession("b", "/d")
	if !errors.Is(err, agentcli.ErrNoSession) || !errors.Is(err, agentcli.ErrSessionNotFound) {
		t.Errorf("NoSession = %v; want ErrNoSession and ErrSessionNotFound", err)
	}
}
