package command

import (
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestPick: option numbers become their labels (several only where the
// item allows it); anything else is the user's own answer.
func TestPick(t *testing.T) {
	it := agentcli.QuestionItem{Options: []agentcli.QuestionOption{{Label: "Red"}, {Label: "Blue"}}}
	multi := it
	multi.MultiSelect = true
	for _, c := range []struct {
		it   agentcli.QuestionItem
		line string
		want []string
	}{
		{it, "2", []string{"Blue"}},
		{it, " 1 ", []string{"Red"}},
		{it, "1,2", []string{"1,2"}},
		{multi, "1, 2", []string{"Red", "Blue"}},
		{it, "3", []string{"3"}},
		{it, "green please", []string{"green please"}},
		{it, "", nil},
	} {
		if got := pick(c.it, c.line); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("pick(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}
