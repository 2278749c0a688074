//go:build unix

package driver

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
)

// TestExchange: requests go to the CLI's stdin as they are written and its
// answers come back line by line; a talk error stops the CLI and is
// returned; a nonzero exit is an error with the CLI's stderr; a line
// over the limit is an error.
func TestExchange(t *testing.T) {
	ctx := context.Background()
	r := &Run{Path: "/bin/sh", Dir: t.TempDir(), Options: &agentcli.Options{KillGrace: time.Second}}
	// An echo server that answers each line as it comes.
	echo := []string{"-c", `while read -r l; do echo "got $l"; done`}
	err := Exchange(ctx, r, time.Minute, 1024, echo, func(c *Conn) error {
		for _, m := range []string{"one", "two"} {
			if err := c.Send([]byte(m + "\n")); err != nil {
				return err
			}
			l, err := c.Recv()
			if err != nil || string(l) != "got "+m {
				t.Errorf("answer to %s: %q, %v", m, l, err)
			}
		}
		if err := c.CloseStdin(); err != nil {
			return err
		}
		if l, err := c.Recv(); err != io.EOF {
			t.Errorf("after EOF: %q, %v", l, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	boom := errors.New("boom")
	start := time.Now()
	err = Exchange(ctx, r, time.Minute, 1024, []string{"-c", "sleep 30"}, func(*Conn) error { return boom })
	if !errors.Is(err, boom) || time.Since(start) > 20*time.Second {
		t.Errorf("talk error: %v after %v", err, time.Since(start))
	}

	err = Exchange(ctx, r, time.Minute, 1024, []string{"-c", "echo bad >&2; exit 3"}, func(*Conn) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "bad") {
		t.Errorf("exit 3: %v", err)
	}

	err = Exchange(ctx, r, time.Minute, 16, []string{"-c", "printf '%040d\\n' 0"}, func(c *Conn) error {
		_, err := c.Recv()
		return err
	})
	if err == nil {
		t.Error("a line over the limit: no error")
	}
}
