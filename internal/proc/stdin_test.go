//go:build unix

package proc

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// KeepStdin: the caller writes stdin as it goes; the CLI answers each line
// while stdin stays open, and ends when the caller closes it.
func TestKeepStdinConversation(t *testing.T) {
	p := start(t, `while read -r l; do echo "got $l"; done; echo bye`, Spec{KeepStdin: true})
	w := p.Stdin()
	if w == nil {
		t.Fatal("Stdin() is nil with KeepStdin")
	}
	for _, s := range []string{"one", "two"} {
		if _, err := w.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
		l, err := p.ReadLine()
		if err != nil || string(l.Data) != "got "+s {
			t.Fatalf("ReadLine = %q, %v; want %q", l.Data, err, "got "+s)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, p)
	if len(got) != 1 || string(got[0].Data) != "bye" {
		t.Fatalf("after closing stdin: %q", got)
	}
	if e := p.Wait(); e.Code != 0 || e.Stopped {
		t.Fatalf("exit %+v", e)
	}
}

// Without KeepStdin there is no writer.
func TestStdinNilWithoutKeep(t *testing.T) {
	p := start(t, `true`, Spec{Stdin: []byte("x")})
	if p.Stdin() != nil {
		t.Fatal("Stdin() is not nil without KeepStdin")
	}
	p2 := start(t, `true`, Spec{})
	if p2.Stdin() != nil {
		t.Fatal("Stdin() is not nil without KeepStdin")
	}
}

func TestKeepStdinWithStdinRejected(t *testing.T) {
	_, err := Start(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "true"}, Env: os.Environ(), Stdin: []byte("x"), KeepStdin: true})
	if err == nil {
		t.Fatal("Start accepted both Stdin and KeepStdin")
	}
}

// A write after the process died fails instead of blocking, and so does a
// write blocked on a full pipe nobody reads when the process dies.
func TestKeepStdinWriteAfterDeath(t *testing.T) {
	// The process never reads stdin; it dies after a while.
	p := start(t, `exec 0<&-; sleep 0.5`, Spec{KeepStdin: true})
	w := p.Stdin()
	done := make(chan error, 1)
	go func() {
		big := []byte(strings.Repeat("x", 1<<20)) // more than a pipe holds
		for {
			if _, err := w.Write(big); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("nil error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("write still blocked 10 s after the process died")
	}
	p.Wait()
	if _, err := w.Write([]byte("late\n")); err == nil {
		t.Fatal("a write after the process was reaped succeeded")
	}
}

// Stop closes stdin: a writer blocked on a live process that never reads is
// released.
func TestKeepStdinStopReleasesWriter(t *testing.T) {
	p := start(t, `sleep 30`, Spec{KeepStdin: true, KillGrace: 200 * time.Millisecond})
	w := p.Stdin()
	done := make(chan error, 1)
	go func() {
		big := []byte(strings.Repeat("x", 1<<20))
		for {
			if _, err := w.Write(big); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	p.Stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writer still blocked 10 s after Stop")
	}
	if e := p.Wait(); !e.Stopped {
		t.Fatalf("exit %+v, want Stopped", e)
	}
}
