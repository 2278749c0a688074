package streamjson

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentcli/agentcli"
)

// TestAnswered: the answers go into the input's "answers" under each
// CLI's key (claude: the question's text; qwen: its index), an empty
// answer left out, the input's other fields kept; an input that is not
// an object becomes one.
func TestAnswered(t *testing.T) {
	q := &agentcli.Question{Items: []agentcli.QuestionItem{{Text: "a?"}, {Text: "b?"}, {Text: "c?"}}}
	a := &agentcli.Answer{Answers: [][]string{{"Red"}, nil, {"x", "y"}}}
	in := json.RawMessage(`{"questions":[],"metadata":{"source":"m"}}`)
	for _, c := range []struct {
		key  AnswerKey
		want string
	}{
		{func(i int, _ string) string { return strconv.Itoa(i) }, `{"answers":{"0":"Red","2":"x, y"},"metadata":{"source":"m"},"questions":[]}`},
		{func(_ int, q string) string { return q }, `{"answers":{"a?":"Red","c?":"x, y"},"metadata":{"source":"m"},"questions":[]}`},
	} {
		b, _ := json.Marshal(answered(in, q, a, c.key))
		if string(b) != c.want {
			t.Errorf("answered = %s, want %s", b, c.want)
		}
	}
	if got := answered(json.RawMessage(`[1]`), q, &agentcli.Answer{}, func(int, string) string { return "k" }); len(got) != 1 || len(got["answers"].(map[string]string)) != 0 {
		t.Errorf("answered of a non-object: %v", got)
	}
}
