package runner

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/agentcli/agentcli/internal/proc"
)

func startSh(t *testing.T, script string) *proc.Process {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, err := proc.Start(context.Background(), proc.Spec{Path: sh, Args: []string{"-c", script}, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// A consumer that stops taking lines stops the reader: it reads at most
// about three batches ahead (one handed over, one in the channel, one
// being filled), however much the CLI has to say, and the pipe then
// blocks the CLI.
func TestReaderBackpressure(t *testing.T) {
	p := startSh(t, `yes 0123456789 | head -n 5000000`)
	lg := &runLog{}
	r := startReader(context.Background(), p, lg, nil)
	if b, ok := r.next(); !ok || len(b) == 0 {
		t.Fatal("no first batch")
	}
	// Give a reader that ignored the bound time to run far ahead.
	time.Sleep(300 * time.Millisecond)
	if n := r.read.Load(); n > 3*batchLines+1 {
		t.Fatalf("the reader read %d lines ahead of a stalled consumer", n)
	}
	r.stop()
	if e := p.Wait(); !e.Stopped {
		t.Fatalf("exit %+v: the CLI was not stopped", e)
	}
}

// Every line arrives, in order, with the batches recycled, and the reader
// ends by itself at EOF.
func TestReaderOrder(t *testing.T) {
	p := startSh(t, `i=0; while [ $i -lt 3000 ]; do echo $i; i=$((i+1)); done`)
	r := startReader(context.Background(), p, &runLog{}, nil)
	n := 0
	for b, ok := r.next(); ok; b, ok = r.next() {
		for _, l := range b {
			if want := itoa(n); string(l.Data) != want {
				t.Fatalf("line %d = %q", n, l.Data)
			}
			n++
		}
		r.recycle(b)
	}
	if n != 3000 {
		t.Fatalf("%d lines", n)
	}
	r.stop() // a no-op once ended
	if e := p.Wait(); e.Code != 0 || e.Stopped {
		t.Fatalf("exit %+v", e)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
