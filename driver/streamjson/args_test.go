package streamjson_test

import (
	"fmt"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver/streamjson"
)

func ExampleSessionArgs() {
	fmt.Println(streamjson.SessionArgs(&agentcli.Request{}))
	fmt.Println(streamjson.SessionArgs(&agentcli.Request{SessionID: "a1"}))
	fmt.Println(streamjson.SessionArgs(&agentcli.Request{SessionID: "a1", ForkSession: true, NewSessionID: "b2"}))
	fmt.Println(streamjson.SessionArgs(&agentcli.Request{ForkSession: true, NewSessionID: "b2"}))
	// Output:
	// []
	// [--resume=a1]
	// [--resume=a1 --fork-session --session-id=b2]
	// [--session-id=b2]
}
