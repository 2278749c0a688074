package driver_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/driver/jsonscan"
)

// A wire type's Decode reads a tool call's input (RawJSON), its output
// (StrOrRaw), a list of names (Strings) and a structured answer
// (JSONValue), and reports the line with CheckJSON.
func ExampleCheckJSON() {
	for _, line := range []string{
		`{"input":{"path":"a.go"},"output":{"lines":3},"names":["a",7],"answer":null}`,
		`{"input":"x","output":"ok","names":null,"answer":[1]}`,
		`{"input":{"lines":01}}`,
	} {
		var d jsonscan.Decoder
		d.Reset([]byte(line))
		bad := false
		for k := range d.Object() {
			switch string(k) {
			case "input":
				fmt.Printf("input %s; ", driver.RawJSON(&d, &bad))
			case "output":
				fmt.Printf("output %q; ", driver.StrOrRaw(&d))
			case "names":
				fmt.Printf("names %q; ", driver.Strings(&d))
			case "answer":
				fmt.Printf("answer %s; ", driver.JSONValue(&d))
			}
		}
		fmt.Println(driver.CheckJSON(&d, bad, true))
	}
	// Output:
	// input {"path":"a.go"}; output "{\"lines\":3}"; names ["a" ""]; answer ; <nil>
	// input "x"; output "ok"; names []; answer [1]; <nil>
	// input {"lines":01}; invalid JSON
}

func TestCheckJSON(t *testing.T) {
	check := func(line string, bad, whole bool) error {
		var d jsonscan.Decoder
		d.Reset([]byte(line))
		d.Skip()
		return driver.CheckJSON(&d, bad, whole)
	}
	for _, c := range []struct {
		line        string
		bad, whole  bool
		wantInvalid bool
	}{
		{`{"a":1}`, false, true, false},
		{`{"a":1}`, true, false, true},
		{`{"a":01}`, false, false, false},
		{`{"a":01}`, false, true, true},
	} {
		err := check(c.line, c.bad, c.whole)
		if got := errors.Is(err, driver.ErrInvalidJSON); got != c.wantInvalid {
			t.Errorf("CheckJSON(%q, bad %v, whole %v) = %v, want invalid %v", c.line, c.bad, c.whole, err, c.wantInvalid)
		}
	}
	var d jsonscan.Decoder
	d.Reset([]byte(`[]`))
	if ss := driver.Strings(&d); ss == nil || len(ss) != 0 {
		t.Errorf("Strings([]) = %#v, want empty", ss)
	}
	d.Reset([]byte(`{}`))
	if ss := driver.Strings(&d); ss != nil {
		t.Errorf("Strings({}) = %#v, want nil", ss)
	}
}
