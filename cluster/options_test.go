package cluster

import (
	"strings"
	"testing"
)

// TestOptionsPrefix checks the subject prefix both option structs take:
// empty is the default, and one that is not a subject token (a dot or a
// wildcard would reach other pools' subjects) is refused.
func TestOptionsPrefix(t *testing.T) {
	for _, c := range []struct {
		prefix, want string
		ok           bool
	}{
		{"", defaultPrefix, true},
		{"team-a_1", "team-a_1", true},
		{"a.b", "", false},
		{"*", "", false},
		{">", "", false},
		{"a b", "", false},
	} {
		o, err := (&Options{Prefix: c.prefix}).withDefaults()
		w, werr := (&WorkerOptions{Prefix: c.prefix}).withDefaults()
		for _, got := range []struct {
			prefix string
			err    error
		}{{o.Prefix, err}, {w.Prefix, werr}} {
			if !c.ok {
				if got.err == nil || !strings.Contains(got.err.Error(), "invalid prefix") {
					t.Errorf("prefix %q: err = %v, want an invalid prefix error", c.prefix, got.err)
				}
				continue
			}
			if got.err != nil || got.prefix != c.want {
				t.Errorf("prefix %q: got %q, %v; want %q", c.prefix, got.prefix, got.err, c.want)
			}
		}
	}
}
