package jsonscan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/driver/jsonscan"
)

func ExampleStringEnd() {
	line := []byte(`{"text": "say \"hi\"\\", "n": 1}`)
	i := strings.IndexByte(string(line), ':') + 3 // the contents of "say..."
	end := jsonscan.StringEnd(line, i)
	fmt.Println(string(line[i:end]))
	fmt.Println(jsonscan.StringEnd([]byte(`"cut \"short`), 1))
	// Output:
	// say \"hi\"\\
	// -1
}

// TestStringEnd compares StringEnd with the backslash-parity rule on
// strings of every length around the fast path's word size.
func TestStringEnd(t *testing.T) {
	want := func(b []byte, i int) int {
		for q := i; q < len(b); q++ {
			if b[q] == '\\' {
				q++
				continue
			}
			if b[q] == '"' {
				return q
			}
		}
		return -1
	}
	for _, body := range []string{``, `a`, `\\`, `\"`, `\\\"`, `\\\\`, `x\`, `é\u00e9`} {
		for pad := 0; pad < 80; pad += 7 {
			for _, tail := range []string{`"`, `", "b": "c"`, ``, `\`} {
				b := []byte(`"` + strings.Repeat("p", pad) + body + tail)
				if got, w := jsonscan.StringEnd(b, 1), want(b, 1); got != w {
					t.Errorf("StringEnd(%q, 1) = %d, want %d", b, got, w)
				}
			}
		}
	}
	for _, i := range []int{-1, 3} {
		if got := jsonscan.StringEnd([]byte(`"a`), i); got != -1 {
			t.Errorf("StringEnd at %d = %d, want -1", i, got)
		}
	}
}
