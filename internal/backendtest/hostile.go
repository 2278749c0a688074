package backendtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// Nested returns prefix, open n times, close n times and suffix: a line
// nested n levels deep, such as Nested(`{"value":`, "[", "]", "}", 500)
// (see CheckHostileLines).
func Nested(prefix, open, close, suffix string, n int) string {
	return prefix + strings.Repeat(open, n) + strings.Repeat(close, n) + suffix
}

// CheckHostileLines checks the parsers newParser makes (driver.Lines) on
// lines a CLI must not be able to hurt the caller with. deep are lines
// nested a few hundred levels: parsing each must allocate at most a
// small multiple of its size. tooDeep are lines nested beyond
// jsonscan.MaxDepth: each must be one EventNotice with an
// *agentcli.ParseError, not a hang or a crash. invalid are lines an event
// keeps as JSON (a tool input, the line Result.Raw keeps) that are not
// valid JSON where no event reads them: each must be a notice, and every
// event and result json.Marshal can encode (CheckEvents).
func CheckHostileLines(t *testing.T, spec *driver.Spec, newParser func() driver.Parser, deep, tooDeep, invalid []string) {
	t.Helper()
	for _, line := range deep {
		n := Allocated(func() { newParser().Line([]byte(line)) })
		if n > 4*uint64(len(line))+64<<10 {
			t.Errorf("%.40s…: parsing a %d-byte line allocated %d bytes", line, len(line), n)
		}
	}
	for _, line := range tooDeep {
		evs := newParser().Line([]byte(line))
		var pe *agentcli.ParseError
		if len(evs) != 1 || evs[0].Kind != agentcli.EventNotice || !errors.As(evs[0].Err, &pe) {
			t.Errorf("%.40s…: events %+v, want one parse-error notice", line, evs)
		}
	}
	for _, line := range invalid {
		r := Parse(spec, newParser(), SplitLines([]byte(line)), driver.Exit{})
		if err := CheckEvents(r); err != nil {
			t.Error(err)
		}
		if len(r.Events[0]) == 0 || r.Events[0][0].Kind != agentcli.EventNotice {
			t.Errorf("%s: got events %+v, want a notice", line, r.Events[0])
		}
	}
}
