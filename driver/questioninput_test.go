package driver_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentcli/agentcli/driver"
)

func ExampleQuestionItems() {
	items, err := driver.QuestionItems(json.RawMessage(`{"questions": [
		{"header": "Color", "question": "Which color?", "options": [{"label": "Red", "description": "warm"}, {"label": "Blue"}]},
		{"question": "Which sizes?", "multiSelect": true}]}`))
	fmt.Println(err)
	for _, it := range items {
		fmt.Printf("%q %q multi=%v %+v\n", it.Header, it.Text, it.MultiSelect, it.Options)
	}
	// Output:
	// <nil>
	// "Color" "Which color?" multi=false [{Label:Red Description:warm} {Label:Blue Description:}]
	// "" "Which sizes?" multi=true []
}

func TestQuestionItemsTolerant(t *testing.T) {
	// A field of an unexpected type is reported and left zero; the rest
	// is decoded.
	items, err := driver.QuestionItems(json.RawMessage(`{"questions": [{"header": 7, "question": "Why?", "options": [{"label": "Because"}]}]}`))
	if err == nil || len(items) != 1 || items[0].Header != "" || items[0].Text != "Why?" || len(items[0].Options) != 1 {
		t.Errorf("items %+v, err %v; want the question without its header, and an error", items, err)
	}
	for _, in := range []string{``, `[]`, `{}`, `{"questions": []}`, `not json`} {
		if items, _ := driver.QuestionItems(json.RawMessage(in)); items != nil {
			t.Errorf("QuestionItems(%q) = %+v; want nil", in, items)
		}
	}
}
