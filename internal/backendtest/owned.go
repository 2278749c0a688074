package backendtest

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
	"github.com/agentcli/agentcli/internal/kitmodes"
)

// BigText returns about n bytes of text like a tool's output: lines of
// code and prose with tabs, quotes, backslashes and non-ASCII characters,
// all of which a CLI's JSON escapes or keeps as they are.
func BigText(n int) string {
	const chunk = "func main() {\n\tfmt.Println(\"héllo, 世界\")\t// \\path\\to\\file\n}\n"
	return strings.Repeat(chunk, n/len(chunk)+1)
}

// JSONString returns s as a JSON string the way JSON.stringify and
// serde_json write it (no HTML escaping).
func JSONString(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CheckOwnedShapes runs CheckOwnedLine on each line of shapes (by name),
// with the placeholder BIG in it replaced by a JSON string of about 1.5
// times agentcli.DefaultMaxRawBytes (BigText): a line a run hands over
// for keeps by default.
func CheckOwnedShapes(t *testing.T, newParser func() driver.Parser, shapes map[string]string) {
	big := JSONString(BigText(agentcli.DefaultMaxRawBytes * 3 / 2))
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			CheckOwnedLine(t, newParser, []byte(strings.Replace(shape, "BIG", big, 1)))
		})
	}
}

// CheckOwnedLine checks that a huge line handed over for keeps (a run
// under Request.DropRaw, whose buffers it does not fit, or a run keeping
// Raw, for a line longer than Request.MaxRawBytes), decoded by a decoder
// or on the run's goroutine, yields the events Line yields for a copy,
// Raw aside, while the parser allocates less than a quarter of the line:
// its long strings and values stay in the line's memory instead of being
// copied. newParser returns a fresh parser for one run (made by
// driver.Lines).
func CheckOwnedLine(t *testing.T, newParser func() driver.Parser, line []byte) {
	t.Helper()
	want := describeEvents(dropRaw(append([]agentcli.Event(nil), newParser().Line(bytes.Clone(line))...)))
	bound := uint64(len(line) / 4)
	for _, borrow := range []bool{true, false} {
		for _, viaDecoder := range []bool{false, true} {
			// What other goroutines allocate meanwhile counts too: the
			// least of up to three tries is the parser's (a try within
			// the bound ends them).
			least := uint64(math.MaxUint64)
			for try := 0; try < 3 && least > bound; try++ {
				p, l := newParser(), bytes.Clone(line)
				var evs []agentcli.Event
				n := Allocated(func() { evs = kitmodes.OwnedLine(p, l, borrow, viaDecoder) })
				least = min(least, n)
				if try > 0 {
					continue
				}
				if got := describeEvents(dropRaw(append([]agentcli.Event(nil), evs...))); got != want {
					t.Fatalf("borrow %v, decoder %v: owned line yields\n%.600s\nwant\n%.600s", borrow, viaDecoder, got, want)
				}
			}
			if least > bound {
				t.Errorf("borrow %v, decoder %v: parsing a %d-byte line handed over for keeps allocated %d bytes, want at most a quarter of it",
					borrow, viaDecoder, len(line), least)
			}
		}
	}
}

// Allocated returns the bytes allocated while f runs (by f, and by any
// other goroutine meanwhile).
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func dropRaw(evs []agentcli.Event) []agentcli.Event {
	for i := range evs {
		driver.DropRaw(&evs[i])
	}
	return evs
}
