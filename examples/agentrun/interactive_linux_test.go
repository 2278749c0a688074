package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentcli/agentcli/internal/ptytest"
)

// TestInteractiveOffline: -interactive -offline hands a terminal (here a
// pseudo-terminal) to the real claude's UI, wired to the scripted model
// server; the first message's answer appears, /exit ends it with status 0.
func TestInteractiveOffline(t *testing.T) {
	cli, err := filepath.Abs(filepath.Join("..", "..", "tools", "clis", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath(cli); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("claude not installed (%v); run scripts/install-clis.sh", err)
		}
		t.Skip("claude not installed; run scripts/install-clis.sh")
	}
	t.Setenv("TERM", "xterm-256color")
	pty := ptytest.New(t, 40, 120)
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-cli", cli, "-offline", "-offline-reply", "OFFLINE-INTERACTIVE-OK", "-interactive", "say it"},
			pty.Slave, pty.Slave, pty.Slave)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := pty.WaitScreen(ctx, "OFFLINE-INTERACTIVE-OK"); err != nil {
		pty.Type("\x03\x03")
		<-done
		t.Fatal(err)
	}
	// Enter only once the UI has drawn the command (Submit). On a busy
	// machine the UI may still drop it (taken before the command's menu is
	// drawn): press it again while it has not exited.
	pty.Submit(ctx, "/exit")
	for range 4 {
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("exit %d; the screen shows:\n%s", code, pty.Screen())
			}
			return
		case <-time.After(15 * time.Second):
			pty.Type("\r")
		}
	}
	pty.Type("\x03\x03")
	<-done
	t.Fatalf("agentrun did not exit after /exit; the screen shows:\n%s", pty.Screen())
}
