package driver

import (
	"encoding/json"

	"github.com/agentcli/agentcli"
)

// QuestionItems decodes the questions of a question tool's input, the
// shape that Claude Code's AskUserQuestion, Qwen Code's
// ask_user_question and agentcli's question tool (see HostTools) share:
//
//	{"questions": [{"header": H, "question": Q, "options": [{"label": L, "description": D}], "multiSelect": B}]}
//
// It returns nil items for an input without questions. The error is
// json.Unmarshal's: a field of an unexpected type is left zero and the
// other fields are decoded all the same.
func QuestionItems(input json.RawMessage) ([]agentcli.QuestionItem, error) {
	var in struct {
		Questions []struct {
			Header   string `json:"header"`
			Question string `json:"question"`
			Options  []struct {
				Label       string `json:"label"`
				Description string `json:"description"`
			} `json:"options"`
			MultiSelect bool `json:"multiSelect"`
		} `json:"questions"`
	}
	err := json.Unmarshal(input, &in)
	var items []agentcli.QuestionItem
	for _, it := range in.Questions {
		item := agentcli.QuestionItem{Header: it.Header, Text: it.Question, MultiSelect: it.MultiSelect}
		for _, o := range it.Options {
			item.Options = append(item.Options, agentcli.QuestionOption{Label: o.Label, Description: o.Description})
		}
		items = append(items, item)
	}
	return items, err
}
