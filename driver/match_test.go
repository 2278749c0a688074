package driver_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

func ExampleClassifyBy() {
	classify := driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"no saved session", "session not found"}, Err: agentcli.ErrSessionNotFound},
		driver.ErrorMatch{Contains: []string{"missing api key"}, Err: agentcli.ErrAuth},
	)
	fmt.Println(classify("Error: No saved session found for 42"))
	fmt.Println(classify("MISSING API KEY"))
	fmt.Println(classify("disk full"))
	// Output:
	// session not found
	// authentication failed
	// <nil>
}

func ExampleHintOn() {
	hint := driver.HintOn(
		driver.Hint{Contains: "No prompt provided", Say: "the prompt was empty"},
		driver.Hint{Contains: "Failed to change directory", Say: "the working directory does not exist"},
	)
	fmt.Printf("%q\n", hint(driver.Exit{Code: 1, Stderr: "error: No prompt provided\n"}))
	fmt.Printf("%q\n", hint(driver.Exit{Code: 1, Stderr: "error: no prompt provided\n"}))
	// Output:
	// "the prompt was empty"
	// ""
}

func TestClassifyByOrder(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	classify := driver.ClassifyBy(
		driver.ErrorMatch{Contains: []string{"x", "Both"}, Err: errA},
		driver.ErrorMatch{Contains: []string{"both"}, Err: errB},
		driver.ErrorMatch{Contains: []string{"only b"}, Err: errB},
	)
	for msg, want := range map[string]error{
		"has BOTH words": errA, // the first match wins; an upper-case entry matches too
		"ONLY B here":    errB,
		"":               nil,
		"nothing":        nil,
	} {
		if got := classify(msg); got != want {
			t.Errorf("classify(%q) = %v, want %v", msg, got, want)
		}
	}
	if got := driver.ClassifyBy()("anything"); got != nil {
		t.Errorf("empty table: %v, want nil", got)
	}
}

func TestHintOnOrder(t *testing.T) {
	hints := []driver.Hint{
		{Contains: "refused", Say: "first"},
		{Contains: "refused as root", Say: "second"},
		{Contains: "bad dir", Say: "third"},
	}
	hint := driver.HintOn(hints...)
	hints[0].Say = "changed after" // HintOn keeps its own copy
	for stderr, want := range map[string]string{
		"x refused as root": "first",
		"bad dir and more":  "third",
		"Bad Dir":           "",
		"":                  "",
	} {
		if got := hint(driver.Exit{Stderr: stderr}); got != want {
			t.Errorf("hint(%q) = %q, want %q", stderr, got, want)
		}
	}
}
