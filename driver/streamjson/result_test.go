package streamjson_test

import (
	"fmt"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
	"github.com/agentcli/agentcli/driver/streamjson"
)

// DecodeUsage reads an Anthropic usage object; counts are clamped.
func ExampleDecodeUsage() {
	var d jsonscan.Decoder
	d.Reset([]byte(`{"input_tokens":10,"cache_read_input_tokens":200,"cache_creation_input_tokens":-3,` +
		`"output_tokens":40,"output_tokens_details":{"thinking_tokens":25},"service_tier":"standard"}`))
	u := streamjson.DecodeUsage(&d)
	fmt.Printf("%+v\n", u)
	// Output:
	// {InputTokens:10 OutputTokens:40 CacheReadTokens:200 CacheWriteTokens:0 ReasoningTokens:25 Cumulative:false}
}

// Outcome decides a run from its result line and exit status.
func ExampleResult_Outcome() {
	ok := streamjson.Result{Subtype: "success", Text: "done", HasText: true, Turns: 2}
	o := ok.Outcome(driver.Exit{}, "s1", "m1", "last text")
	fmt.Println(o.Failed, o.Result.SessionID, o.Result.Model, o.Result.Text, o.Result.Turns)

	noText := streamjson.Result{Subtype: "success"}
	o = noText.Outcome(driver.Exit{Code: 1}, "s1", "m1", "last text")
	fmt.Printf("%v %q %q %q\n", o.Failed, o.Subtype, o.Result.Text, o.Message)

	apiErr := streamjson.Result{SessionID: "s2", Subtype: "success", IsError: true, Text: "API Error: 529", HasText: true}
	o = apiErr.Outcome(driver.Exit{Code: 1}, "s1", "m1", "last text")
	fmt.Printf("%v %q %q %q\n", o.Failed, o.Subtype, o.Result.SessionID, o.Message)

	maxTurns := streamjson.Result{Subtype: "error_max_turns", IsError: true, Error: "max turns", HasError: true}
	o = maxTurns.Outcome(driver.Exit{}, "s1", "m1", "last text")
	fmt.Printf("%v %q %q %q\n", o.Failed, o.Subtype, o.Result.Text, o.Message)
	// Output:
	// false s1 m1 done 2
	// true "" "last text" "CLI exited with a non-zero status after a successful result"
	// true "" "s2" "API Error: 529"
	// true "error_max_turns" "" "max turns"
}
