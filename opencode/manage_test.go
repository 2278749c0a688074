package opencode

import (
	"slices"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

func TestManageArgs(t *testing.T) {
	const id = "ses_de9069723ffebF0UPLOrRaNjej"
	args := buildArgs(&agentcli.Request{SessionID: id, ForkSession: true}, "")
	i := slices.Index(args, "--session="+id)
	if i < 0 || i+1 >= len(args) || args[i+1] != "--fork" {
		t.Errorf("fork args %q; want --session=ID --fork", args)
	}
	if args := buildArgs(&agentcli.Request{SessionID: id}, ""); slices.Contains(args, "--fork") {
		t.Errorf("resume args %q have --fork", args)
	}
}

func TestParseSessionList(t *testing.T) {
	out := []byte("\x1b[0mnoise\n" + `[{"id":"ses_a","title":"A","updated":1795661779123,"created":1,"projectId":"global","directory":"/w/d"},` +
		`{"id":"ses_b","title":"B","updated":1795661770000,"directory":"/w/other"},` +
		`{"id":"ses_c","title":"C (fork #1)","updated":1795661775000,"directory":"/w/d/"}]` + "\n")
	got, err := parseSessionList(out, "/w/d")
	if err != nil {
		t.Fatal(err)
	}
	want := []agentcli.SessionInfo{{ID: "ses_a", Title: "A", Updated: time.UnixMilli(1795661779123)},
		{ID: "ses_c", Title: "C (fork #1)", Updated: time.UnixMilli(1795661775000)}}
	if !slices.EqualFunc(got, want, func(a, b agentcli.SessionInfo) bool {
		return a.ID == b.ID && a.Title == b.Title && a.Updated.Equal(b.Updated)
	}) {
		t.Errorf("got %+v; want %+v", got, want)
	}
	if got, err := parseSessionList(nil, "/w/d"); err != nil || len(got) != 0 {
		t.Errorf("empty output: %v, %v", got, err)
	}
	if _, err := parseSessionList([]byte("Error: boom"), "/w/d"); err == nil {
		t.Error("no JSON: no error")
	}
}
