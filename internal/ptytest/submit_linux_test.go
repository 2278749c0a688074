package ptytest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// keyUIEnv makes the test binary a small line editor (keyUI) instead of
// running the tests.
const keyUIEnv = "PTYTEST_KEY_UI"

func TestMain(m *testing.M) {
	if os.Getenv(keyUIEnv) != "" {
		keyUI(os.Getenv(keyUIEnv))
		return
	}
	os.Exit(m.Run())
}

// keyUI is a line editor with the paste rule of an interactive UI: a read
// that holds a return and other keys is a paste (it prints PASTE and
// exits), a read of a return alone submits the line (SUBMIT:line). It
// prints shown first, then stays busy for longer than Submit's quiet
// moment before reading anything, so that keys typed meanwhile pile up in
// one read unless the typist waits for their echo.
func keyUI(shown string) {
	tio, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		os.Exit(2)
	}
	tio.Lflag &^= unix.ICANON | unix.ECHO
	tio.Iflag &^= unix.ICRNL
	if unix.IoctlSetTermios(0, unix.TCSETS, tio) != nil {
		os.Exit(2)
	}
	fmt.Printf("%s\r\n", shown)
	time.Sleep(1500 * time.Millisecond)
	var line []byte
	buf := make([]byte, 256)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			os.Exit(2)
		}
		in := buf[:n]
		switch i := bytes.IndexByte(in, '\r'); {
		case i >= 0 && n > 1:
			fmt.Printf("\r\nPASTE\r\n")
			os.Exit(1)
		case i == 0:
			fmt.Printf("\r\nSUBMIT:%s\r\n", line)
			os.Exit(0)
		}
		line = append(line, in...)
		os.Stdout.Write(in) // the echo
	}
}

// startKeyUI runs keyUI on a fresh PTY, showing shown.
func startKeyUI(t *testing.T, shown string) (*PTY, *exec.Cmd) {
	t.Helper()
	p := New(t, 24, 80)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), keyUIEnv+"="+shown)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Slave, p.Slave, p.Slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p, cmd
}

// Submit waits for the typed keys' echo before Enter, also when the text
// is on the screen already; typed in one go, the same keys are a paste
// (the check that the UI can tell).
func TestSubmit(t *testing.T) {
	for _, c := range []struct {
		name, shown string
		submit      bool
		want        string
	}{
		{"typed at once", "ready", false, "PASTE"},
		{"submitted", "ready", true, "SUBMIT:/exit"},
		{"submitted, the text already shown", "ready /exit", true, "SUBMIT:/exit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, cmd := startKeyUI(t, c.shown)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := p.WaitScreen(ctx, c.shown); err != nil {
				t.Fatal(err)
			}
			var err error
			if c.submit {
				err = p.Submit(ctx, "/exit")
			} else {
				err = p.Type("/exit\r")
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := p.WaitScreen(ctx, c.want); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
		})
	}
}
