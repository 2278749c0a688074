package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// TestOpencodePlainModel: opencode runs only models its configuration
// declares, as provider/model. A plain name is resolved to the one model
// of that name the configuration declares (Wiring.Apply declares the
// request's model); a name it does not declare fails before any model call
// with an error that lists the models it knows.
func TestOpencodePlainModel(t *testing.T) {
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "plain"})
	defer srv.Close()
	w, err := srv.Wire("opencode", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := openBackend(t, "opencode", nil)
	req := &agentcli.Request{Prompt: "hi", Model: "plain-model", Timeout: runTimeout}
	w.Apply(req)
	res, err := b.Run(context.Background(), req)
	if err != nil || res.Text != "plain" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	main := 0
	for _, r := range srv.Requests() {
		if !r.Utility {
			main++
			if r.Model != "plain-model" {
				t.Fatalf("a main model call asked for %q: %s", r.Model, describe(srv.Requests()))
			}
		}
	}
	if main == 0 {
		t.Fatalf("no main model call: %s", describe(srv.Requests()))
	}

	req = &agentcli.Request{Prompt: "hi", Timeout: runTimeout}
	w.Apply(req)
	req.Model = "undeclared-model"
	n := len(srv.Requests())
	_, err = b.Run(context.Background(), req)
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Field != "Model" || !strings.Contains(err.Error(), "agentclitest/"+agentclitest.Model) {
		t.Fatalf("err = %v; want a RequestError on Model listing the declared models", err)
	}
	if len(srv.Requests()) != n {
		t.Fatalf("a model call was made: %s", describe(srv.Requests()[n:]))
	}
}
