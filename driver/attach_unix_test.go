//go:build unix

package driver_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// TestLoadAttachmentsFIFO: a FIFO where a file was expected is refused at
// once (opening it does not wait for a writer).
func TestLoadAttachmentsFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo.png")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := driver.LoadAttachments("b", both, []agentcli.Attachment{{Path: p}})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, agentcli.ErrBadRequest) {
			t.Errorf("err = %v, want a *RequestError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LoadAttachments blocked on a FIFO")
	}
}
