package drivertest_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/drivertest"
)

// A backend runs the fake CLI when it is pointed at the test binary (whose
// TestMain calls MaybeRunFakeCLI) with FakeEnv's environment: the fake
// records the command line and stdin it got, judges the command line with
// the kit's Args, and prints what the script says. Kit.Setup does this for
// a test; here it is by hand, for the echo backend of this package's
// tests, which passes the prompt on stdin and every caller value glued to
// its option.
func ExampleFakeEnv() {
	dir, err := os.MkdirTemp("", "drivertest-example-*")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	env, err := drivertest.FakeEnv(dir, "echo",
		`out {"type":"session","id":"sess-1"}`,
		`out {"type":"text","text":"Hello!"}`,
		`out {"type":"result","ok":true,"session":"sess-1","text":"Hello!"}`)
	if err != nil {
		panic(err)
	}
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	b := driver.New(echoSpec(flaws{}), &agentcli.Options{Path: self, Env: append(env, "ECHO_API_KEY=k")})
	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "-x, say hi", Model: "--help"})
	if err != nil {
		panic(err)
	}
	rec, err := drivertest.ReadRecord(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text, res.SessionID)
	fmt.Printf("argv %q, stdin %q\n", rec.Args, rec.Stdin)
	// Output:
	// Hello! sess-1
	// argv ["-json" "-model=--help" "--"], stdin "-x, say hi"
}

// Names lists the options of a command line once each, however many
// values a list option took.
func ExampleArgv_Names() {
	a := &drivertest.Argv{Options: []drivertest.Option{
		{Name: "--tools", Value: "Read", Arg: 0},
		{Name: "--tools", Value: "Grep", Arg: 0},
		{Name: "--model", Value: "m", Arg: 2},
		{Name: "--tools", Value: "Bash", Arg: 4},
	}}
	fmt.Println(a.Names())
	// Output:
	// [--tools --model --tools]
}
